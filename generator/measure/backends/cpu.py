"""A real step on the CPU, checked against the CPU allocator's own bookkeeping.

With `profile_memory=True` the profiler receives every allocation and free of PyTorch's CPU
allocator together with the allocator's running total of bytes it has handed out since
profiling began. The profiler runs from before the model is built, so that total covers
everything the step touches: parameters, optimizer state, activations and the rest. Its
largest value during the measured step is the ground truth for the tracker's peak.

The result's figures are the allocator's blocks labelled by the tracker
(cpu_allocator_blocks.py): live at the peak they sum to the allocator's peak, buffers that
kernels allocate and free inside themselves count as temporaries, and what neither explains
as `not_attributed`. The tracker's own peak, blind to those buffers, is kept beside the
ground truth as `tracker_peak_bytes`.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from generator.experiment import Experiment
from generator.measure import quiet_profiler
from generator.measure.backends.common import (
    build_workload,
    figures,
    median_step_seconds,
)
from generator.measure.tracking.cpu_allocator_blocks import (
    TimedTracker,
    aligned_report,
    allocator_blocks,
    label_blocks,
    peak_bytes,
)
from generator.measure.training import step
from generator.measure.training.step import Trainer
from generator.results.notes import note

MEASURED_STEP = "generator::measured_step"


def run(exp: Experiment, spec) -> dict[str, Any]:
    with quiet_profiler(), profile(activities=[ProfilerActivity.CPU],
                                   profile_memory=True) as prof:
        workload = build_workload(spec, exp)
        trainer = Trainer.create(workload, exp, device=torch.device("cpu"))
        workload = trainer.workload  # with the adapters, where the step trains LoRA
        warmups = trainer.warm_up()
        with record_function(MEASURED_STEP):
            tracker = TimedTracker(workload.model, trainer.optimizer, round_bytes=1,
                                   device_type="cpu", blocks=workload.blocks)
            own = step.tracked_step(trainer, tracker)
    blocks, window = allocator_blocks(prof, MEASURED_STEP)
    allocator_peak = peak_bytes(blocks, window)
    label_blocks(blocks, tracker)
    report = aligned_report(blocks, window, tracker, tracker.categories)
    report.storages, report.module_activation_bytes = own.storages, own.module_activation_bytes
    step_seconds = median_step_seconds(trainer)
    return {
        **figures(report, workload=workload, warmup_steps=warmups),
        "step_seconds": step_seconds,
        "ground_truth": {
            "source": "cpu allocator events (torch.profiler, profile_memory=True)",
            "peak_bytes": allocator_peak,
            "tracker_peak_bytes": own.peak_bytes,
        },
        "notes": [note("real_cpu_run", threads=torch.get_num_threads()),
                  *workload.notes, note("cpu_blocks")],
    }


def allocator_peak_bytes(prof: profile, window_name: str) -> int:
    """The CPU allocator's largest running total inside the record_function `window_name`,
    replayed from this profile's allocations and frees (see cpu_allocator_blocks.peak_bytes:
    the total the profiler reports with each event also counts blocks of earlier profiles in
    the same process)."""
    return peak_bytes(*allocator_blocks(prof, window_name))
