"""Pieces every backend shares: a tracked step, and the figures it reports."""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any, Callable

from generator.experiment import Experiment
from generator.measure import step
from generator.measure.step import Trainer
from generator.measure.timeline import TrackerReport
from generator.measure.tracker import MemoryTracker
from generator.measure.workload import Workload


def tracked_step(trainer: Trainer, *, round_bytes: int,
                 device_type: str | None) -> TrackerReport:
    """One measured step of a single-device trainer (see step.tracked_step)."""
    tracker = MemoryTracker(trainer.workload.model, trainer.optimizer, round_bytes=round_bytes,
                            device_type=device_type, blocks=trainer.workload.blocks)
    return step.tracked_step(trainer, tracker)


def median_step_seconds(trainer: Trainer, *, repeats: int = 3,
                        synchronize: Callable[[], None] = lambda: None) -> float:
    """Median wall time of untracked steps (the tracker slows a step down)."""
    times = []
    for _ in range(repeats):
        synchronize()
        start = time.perf_counter()
        trainer.step()
        synchronize()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def figures(report: TrackerReport, *, parameter_count: int, warmup_steps: int) -> dict[str, Any]:
    """The tracker's part of a result."""
    data = asdict(report)
    data["tracked_storages"] = data.pop("storages")
    data["parameter_count"] = parameter_count
    data["warmup_steps"] = warmup_steps
    return data


def build_workload(spec, exp: Experiment) -> Workload:
    """The experiment's model, built with the experiment's fields it takes (attention, …)."""
    return spec.build(**{name: getattr(exp, name) for name in spec.takes})


def count_parameters(model) -> int:
    return sum(p.numel() for p in model.parameters())
