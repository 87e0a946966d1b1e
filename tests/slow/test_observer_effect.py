"""Tracking a step changes what it allocates, not (here) its peak: the published CPU figures
come from tracked steps, so their peak must be the one an untracked step reaches, to within
a few bytes.

While a TorchDispatchMode is on, every tensor counts as a subclass
(aten/src/ATen/TensorSubclassLikeUtils.h), so autograd adds up a tensor's gradients out of
place (torch/csrc/autograd/input_buffer.cpp): a tracked step allocates more often than a
user's. backends/cuda.py takes the peaks users see from untracked steps for that reason."""

from __future__ import annotations

import pytest
import torch
from torch.profiler import ProfilerActivity, profile, record_function

from generator.experiment import Experiment
from generator.measure import step
from generator.measure.allocator_alignment import TimedTracker, allocator_blocks, peak_bytes
from generator.measure.backends.common import build_workload
from generator.measure.models import resolve_model
from generator.measure.step import Trainer

WINDOW = "observer_effect::step"


def allocator_peak_and_allocations(exp: Experiment, *, tracked: bool) -> tuple[int, int]:
    """The CPU allocator's peak over one step after the warm-up, and its allocation count."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        trainer = Trainer.create(build_workload(resolve_model(exp.model), exp), exp,
                                 device=torch.device("cpu"))
        trainer.warm_up()
        with record_function(WINDOW):
            if tracked:
                step.tracked_step(trainer, TimedTracker(
                    trainer.workload.model, trainer.optimizer, round_bytes=1,
                    device_type="cpu", blocks=trainer.workload.blocks))
            else:
                with step.gc_paused():
                    trainer.step()
    blocks, window = allocator_blocks(prof, WINDOW)
    return peak_bytes(blocks, window), len(blocks)


# gru-lm: a gradient accumulates at every time step; tiny: a transformer's residual stream
@pytest.mark.parametrize("config", [dict(model="gru-lm", batch_size=4, seq_len=16),
                                    dict(model="tiny", batch_size=4, seq_len=32)],
                         ids=lambda c: c["model"])
def test_a_tracked_step_peaks_where_an_untracked_one_does(config) -> None:
    exp = Experiment(**config, backend="cpu")
    tracked, tracked_allocations = allocator_peak_and_allocations(exp, tracked=True)
    untracked, untracked_allocations = allocator_peak_and_allocations(exp, tracked=False)
    # gru-lm's tracked step peaks 8 B higher here (208,144,708 B against 208,144,700 B, in
    # 1,771 allocations against 1,598): a scalar's worth, far below what the pages print
    assert abs(tracked - untracked) <= untracked * 1e-4, (
        f"tracked {tracked} B in {tracked_allocations} allocations, "
        f"untracked {untracked} B in {untracked_allocations}")
