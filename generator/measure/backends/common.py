"""Pieces every backend shares: a tracked step, and the figures it reports."""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import asdict
from typing import Any, Callable

from generator.experiment import Experiment
from generator.measure.emulation.cpu_kernels import KernelBufferTracker, tracker_class
from generator.measure.emulation.fake_build import fake_build
from generator.measure.tracking.build_trace import built_in
from generator.measure.tracking.sharded_tracker import ShardedMemoryTracker
from generator.measure.tracking.timeline import TrackerReport
from generator.measure.tracking.tracker import MemoryTracker, StatePlacement
from generator.measure.training import step
from generator.measure.training.precision import MODEL_DTYPE
from generator.measure.training.parallel import Sharding
from generator.measure.training.quantize_4bit import weights_in
from generator.measure.training.step import Trainer
from generator.measure.training.workload import Workload


class ShardedKernelBufferTracker(ShardedMemoryTracker, KernelBufferTracker):
    """One rank's storages (ShardedMemoryTracker) and the buffers the CPU's kernels and
    gloo's collectives hold while they run (KernelBufferTracker): a rank of an estimate of
    the CPU."""


def new_tracker(trainer: Trainer, *, round_bytes: int, device_type: str | None,
                in_place_sums: bool = False, state_on_host: StatePlacement | None = None,
                sharding: Sharding | None = None) -> MemoryTracker:
    """A tracker for `trainer`'s step; inside modelled_kernels (an estimate) one that also
    counts the buffers fused kernels hold while they run; for one rank of a multi-GPU step
    (`sharding`) one that counts its local shards and communication buffers. in_place_sums,
    state_on_host: see MemoryTracker (an estimate's step stands for a user's untracked one,
    on its device)."""
    options = dict(round_bytes=round_bytes, device_type=device_type,
                   blocks=trainer.workload.blocks, in_place_sums=in_place_sums,
                   state_on_host=state_on_host)
    if sharding is not None:
        sharded = ShardedMemoryTracker if tracker_class() is MemoryTracker else \
            ShardedKernelBufferTracker
        return sharded(trainer.workload.model, trainer.optimizer,
                       persistent=sharding.persistent, cast_category=sharding.cast_category,
                       host=sharding.host, **options)
    return tracker_class()(trainer.workload.model, trainer.optimizer, **options)


def tracked_step(trainer: Trainer, *, round_bytes: int,
                 device_type: str | None) -> TrackerReport:
    """One measured step of a single-device trainer (see step.tracked_step)."""
    return step.tracked_step(trainer, new_tracker(trainer, round_bytes=round_bytes,
                                                  device_type=device_type))


def tracked_warm_up(trainer: Trainer, *, round_bytes: int, device_type: str | None,
                    in_place_sums: bool = False, state_on_host: StatePlacement | None = None,
                    sharding: Sharding | None = None) -> tuple[int, MemoryTracker]:
    """The warm-up steps (Trainer.warm_up) under a tracker: their count and the tracker,
    which holds the lives of every storage they touched and when each phase began (the
    allocator simulation replays them)."""
    tracker = new_tracker(trainer, round_bytes=round_bytes, device_type=device_type,
                          in_place_sums=in_place_sums, state_on_host=state_on_host,
                          sharding=sharding)
    with step.gc_paused(), tracker:
        count = trainer.warm_up(tracker.mark_phase)
    return count, tracker


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


def figures(report: TrackerReport, *, workload: Workload, warmup_steps: int) -> dict[str, Any]:
    """The tracker's part of a result, the model's parameters (all of them, and the
    trainable ones: a frozen parameter gets no gradient and no optimizer state), and the
    attention the model chose where it chose it. A 4-bit weight counts the weights it holds,
    not its bytes, as transformers' num_parameters does."""
    model = workload.model
    data = asdict(report)
    data["tracked_storages"] = data.pop("storages")
    data["parameter_count"] = sum(weights_in(p) for p in model.parameters())
    data["trainable_parameter_count"] = sum(p.numel() for p in model.parameters()
                                            if p.requires_grad)
    data["warmup_steps"] = warmup_steps
    data["attention"] = workload.attention
    return data


def build_workload(spec, exp: Experiment) -> Workload:
    """The experiment's model, built with the experiment's fields it takes (attention, …);
    in its training dtype from the start when it is built on the device (build_trace.py).
    On fake tensors, what a build may do that fake tensors refuse is made to work
    (fake_build.py: drop-path rates read with .item(), `model.to(torch.bfloat16)`)."""
    in_dtype = built_in(MODEL_DTYPE[exp.precision]) if exp.built_on_device else nullcontext()
    with fake_build(), in_dtype:
        return spec.build(**{name: getattr(exp, name) for name in spec.takes})
