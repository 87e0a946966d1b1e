"""Tracking a step changes what it allocates, not (here) its peak: the published CPU figures
come from tracked steps, so their peak must be the one an untracked step reaches, to within
a few bytes.

While a TorchDispatchMode is on, every tensor counts as a subclass
(aten/src/ATen/TensorSubclassLikeUtils.h), so autograd adds up a tensor's gradients out of
place (torch/csrc/autograd/input_buffer.cpp): a tracked step allocates more often than a
user's. backends/cuda.py takes the peaks users see from untracked steps for that reason."""

from __future__ import annotations

import pytest
from profiled_steps import WINDOW, profiled_step

from generator.experiment import Experiment
from generator.measure.tracking.cpu_allocator_blocks import (
    TimedTracker,
    allocator_blocks,
    peak_bytes,
)


def timed_tracker(trainer) -> TimedTracker:
    return TimedTracker(trainer.workload.model, trainer.optimizer, round_bytes=1,
                        device_type="cpu", blocks=trainer.workload.blocks)


def allocator_peak_and_allocations(exp: Experiment, *, tracked: bool) -> tuple[int, int]:
    """The CPU allocator's peak over one step after the warm-up, and its allocation count."""
    prof, _ = profiled_step(exp, timed_tracker if tracked else None, profile_memory=True)
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
