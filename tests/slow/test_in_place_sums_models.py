"""On real models, the gradient sums a tracker folds (accumulation.py) are the ones an
untracked CPU step makes in place, and the rest are the ones it makes in a new tensor: the
estimate's step stands for the user's own, where nothing watches autograd."""

from __future__ import annotations

import pytest
import torch
from engine_sums import backward_adds
from torch.profiler import ProfilerActivity, profile, record_function

from generator.experiment import Experiment
from generator.measure import step
from generator.measure.backends.common import build_workload
from generator.measure.models import resolve_model
from generator.measure.step import Trainer
from generator.measure.tracker import MemoryTracker

WINDOW = "in_place_sums::step"


def one_step(exp: Experiment, *, tracked: bool):
    """The backward's additions in one step after the warm-up, and the tracker if any."""
    tracker = None
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        trainer = Trainer.create(build_workload(resolve_model(exp.model), exp), exp,
                                 device=torch.device("cpu"))
        trainer.warm_up()
        with record_function(WINDOW):
            if tracked:
                tracker = MemoryTracker(trainer.workload.model, trainer.optimizer,
                                        blocks=trainer.workload.blocks, in_place_sums=True)
                step.tracked_step(trainer, tracker)
            else:
                with step.gc_paused():
                    trainer.step()
    return backward_adds(prof), tracker


# tiny: tied embeddings and a residual stream; gru-lm: a sum at every time step, many of
# them into views of one buffer; llama-tiny with checkpointing: sums in the recomputation
@pytest.mark.parametrize("config", [
    dict(model="tiny", batch_size=4, seq_len=32, precision="amp-bf16"),
    dict(model="gru-lm", batch_size=4, seq_len=16),
    dict(model="llama-tiny", batch_size=4, seq_len=32, checkpointing=True),
], ids=lambda c: c["model"])
def test_folded_sums_are_the_ones_an_untracked_step_makes_in_place(config) -> None:
    exp = Experiment(**config, backend="cpu")
    untracked, _ = one_step(exp, tracked=False)
    tracked, tracker = one_step(exp, tracked=True)
    tracker.lives()
    folded = tracker.sums.folded
    assert folded > 0
    # (some additions run in place even in a tracked step: those are not the engine's sums)
    assert untracked["aten::add_"] - tracked["aten::add_"] == folded
    assert tracked["aten::add"] - folded == untracked["aten::add"]
