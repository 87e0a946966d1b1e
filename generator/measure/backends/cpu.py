"""A real step on the CPU, checked against the CPU allocator's own bookkeeping.

With `profile_memory=True` the profiler receives every allocation and free of PyTorch's CPU
allocator together with the allocator's running total of bytes it has handed out since
profiling began. The profiler runs from before the model is built, so that total covers
everything the step touches: parameters, optimizer state, activations and the rest. Its
largest value during the measured step is the ground truth for the tracker's peak.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from generator.experiment import Experiment
from generator.measure.backends.common import (
    build_workload,
    count_parameters,
    figures,
    median_step_seconds,
    tracked_step,
)
from generator.measure.step import Trainer

MEASURED_STEP = "generator::measured_step"


def run(exp: Experiment, spec) -> dict[str, Any]:
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        workload = build_workload(spec, exp)
        trainer = Trainer.create(workload, exp, device=torch.device("cpu"))
        warmups = trainer.warm_up()
        with record_function(MEASURED_STEP):
            report = tracked_step(trainer, round_bytes=1, device_type="cpu")
    allocator_peak = allocator_peak_bytes(prof, MEASURED_STEP)
    step_seconds = median_step_seconds(trainer)
    return {
        **figures(report, parameter_count=count_parameters(workload.model), warmup_steps=warmups),
        "step_seconds": step_seconds,
        "ground_truth": {
            "source": "cpu allocator events (torch.profiler, profile_memory=True)",
            "peak_bytes": allocator_peak,
        },
        "notes": [f"real run on the CPU with {torch.get_num_threads()} threads"],
    }


def allocator_peak_bytes(prof: profile, window_name: str) -> int:
    """The CPU allocator's largest running total inside the record_function `window_name`."""
    from torch._C._profiler import _EventType

    roots = prof.profiler.kineto_results.experimental_event_tree()
    window = None
    allocations = []
    stack = list(roots)
    while stack:
        event = stack.pop()
        stack.extend(event.children)
        if event.tag == _EventType.Allocation:
            fields = event.extra_fields
            if fields.device.type == "cpu":
                allocations.append((event.start_time_ns, fields.total_allocated))
        elif event.name == window_name and window is None:
            window = (event.start_time_ns, event.end_time_ns)
    if window is None:
        raise RuntimeError(f"profiler trace has no {window_name!r} range")
    start, end = window
    inside = [total for when, total in allocations if start <= when <= end]
    before = [(when, total) for when, total in allocations if when < start]
    baseline = max(before)[1] if before else 0  # the running total as the step begins
    return max(inside + [baseline])
