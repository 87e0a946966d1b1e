"""On real models, the gradient sums a tracker folds (in_place_sums.py) are the ones an
untracked CPU step makes in place, and the rest are the ones it makes in a new tensor: the
estimate's step stands for the user's own, where nothing watches autograd."""

from __future__ import annotations

import pytest
from profiled_steps import backward_adds, profiled_step

from generator.experiment import Experiment
from generator.measure.tracking.tracker import MemoryTracker


def summing_tracker(trainer) -> MemoryTracker:
    return MemoryTracker(trainer.workload.model, trainer.optimizer,
                         blocks=trainer.workload.blocks, in_place_sums=True)


# tiny: tied embeddings and a residual stream; gru-lm: a sum at every time step, many of
# them into views of one buffer; llama-tiny with checkpointing: sums in the recomputation
@pytest.mark.parametrize("config", [
    dict(model="tiny", batch_size=4, seq_len=32, precision="amp-bf16"),
    dict(model="gru-lm", batch_size=4, seq_len=16),
    dict(model="llama-tiny", batch_size=4, seq_len=32, checkpointing=True),
], ids=lambda c: c["model"])
def test_folded_sums_are_the_ones_an_untracked_step_makes_in_place(config) -> None:
    exp = Experiment(**config, backend="cpu")
    untracked = backward_adds(profiled_step(exp, None)[0])
    prof, tracker = profiled_step(exp, summing_tracker)
    tracked = backward_adds(prof)
    tracker.lives()
    folded = tracker.sums.folded
    assert folded > 0
    # (some additions run in place even in a tracked step: those are not the engine's sums)
    assert untracked["aten::add_"] - tracked["aten::add_"] == folded
    assert tracked["aten::add"] - folded == untracked["aten::add"]
