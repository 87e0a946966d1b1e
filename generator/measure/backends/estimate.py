"""Estimate a step with fake tensors: every op runs for its shapes only, nothing is allocated.

A CPU-only PyTorch cannot run autograd on fake CUDA tensors, so the estimate runs fake CPU
tensors and models the CUDA device by what matters for memory: the caching allocator's
512-byte blocks, the foreach optimizer kernels that PyTorch picks on CUDA, CUDA's kernels and
autocast policy (cuda_kernels.py), and, over the warm-up and measured steps, the caching
allocator itself with the cuBLAS workspaces (allocator_replay.py), for the allocated and reserved
peaks a GPU would report.

A step over several GPUs (exp.parallel) is rank 0 of its job on a fake process group: the
real torch.distributed code (FSDP2, DTensor) shares the model out and runs the collectives,
which move nothing; the tracker counts this rank's storages (sharded_tracker.py), and the
allocator replays them as a single GPU's. NCCL's communicators hold memory outside the
caching allocator: a stated range beside the CUDA context's (gpus.py).
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from generator.experiment import Experiment
from generator.measure import quiet
from generator.measure.backends.common import (
    build_workload,
    figures,
    new_tracker,
    tracked_warm_up,
)
from generator.measure.emulation import allocator_replay, cuda_kernels, fake_kernel_gaps
from generator.measure.emulation.allocator_replay import TrackedSteps
from generator.measure.emulation.cpu_kernels import modelled_kernels, unmodelled
from generator.measure.emulation.cuda_kernels import CudaKernelPolicy
from generator.measure.models import hf_masks
from generator.measure.tracking import build_trace
from generator.measure.tracking.timeline import the_next_step
from generator.measure.tracking.tracker import CUDA_BLOCK_BYTES
from generator.measure.training import parallel, step
from generator.measure.training.precision import AUTOCAST_DTYPE
from generator.measure.training.step import Trainer
from generator import gpus
from generator.results.notes import note

#: FakeTensorMode logs a model's own error with its traceback before re-raising it; the
#: command reports that error as one line (generator/errors.py), which the log would bury.
FAKE_TENSOR_LOG = logging.getLogger("torch._subclasses.fake_tensor")


def run(exp: Experiment, spec) -> dict[str, Any]:
    notes = [note("estimate")]
    cuda = exp.device == "cuda"
    if cuda:
        notes.append(note("models_cuda", block=CUDA_BLOCK_BYTES))
    policy = CudaKernelPolicy() if cuda else contextlib.nullcontext()
    unpadded_reads, unpacked_reads = hf_masks.unpadded_reads(), hf_masks.unpacked_reads()
    with contextlib.ExitStack() as scoped:  # every patch of torch or transformers, undone
        mesh = scoped.enter_context(parallel.world(exp))  # None on one GPU
        sharding = parallel.Sharding(exp, mesh, fake=True) if mesh is not None else None
        if sharding is not None:
            scoped.enter_context(sharding.copies_modelled())
        scoped.enter_context(quiet(FAKE_TENSOR_LOG))
        scoped.enter_context(fake_kernel_gaps.installed())
        scoped.enter_context(FakeTensorMode())
        scoped.enter_context(policy)
        kernels = scoped.enter_context(modelled_kernels(exp.device))
        with build_trace.traced(exp.built_on_device) as building:  # (a CUDA step's option)
            workload = build_workload(spec, exp)
            trainer = Trainer.create(workload, exp, device=torch.device("cpu"), fake=True,
                                     parallelize=sharding)
        # transformers' modules are imported by now, where the model is theirs
        scoped.enter_context(hf_masks.fake_masks_read_as_unpadded())
        workload = trainer.workload  # with the adapters, where the step trains LoRA
        round_bytes = CUDA_BLOCK_BYTES if cuda else 1
        # Host-side optimizer state (step counts) is not the GPU's memory.
        on_host = policy.state_on_host if cuda else None
        # The warm-up step, tracked: the allocator simulation replays it, and when it was the
        # only one and keeps no gradients, the measured step follows from it (the_next_step)
        # instead of being run: the same figures in half the time.
        # Both trackers add gradients up in place where autograd would in an untracked
        # step (in_place_sums.py): fake tensors always take a new tensor for the sum.
        warmups, warm = tracked_warm_up(trainer, round_bytes=round_bytes, device_type=None,
                                        in_place_sums=True, state_on_host=on_host,
                                        sharding=sharding)
        # One reading of the warm-up's lives for all that follows: a storage it left alive
        # may still be freed later (when the fake mode exits, or by the garbage collector),
        # and two readings would then disagree on what the next step starts with.
        warm_up = TrackedSteps(warm.lives(), warm.phases())
        # (Not for a rank of a sharded step: FSDP2's first step does its lazy set-up.)
        if cuda and warmups == 1 and not trainer.keeps_gradients and trainer.scaler is None \
                and sharding is None:
            measured = TrackedSteps(the_next_step(warm_up.lives), warm_up.phases)
            report = warm.report(measured.lives)
            sums = warm.sums
        else:
            tracker = new_tracker(trainer, round_bytes=round_bytes, device_type=None,
                                  in_place_sums=True, state_on_host=on_host, sharding=sharding)
            report = step.tracked_step(trainer, tracker)
            measured = TrackedSteps(tracker.lives(), tracker.phases())
            sums = tracker.sums
    if cuda:  # what the step met of CUDA's kernels, known once it has run
        notes += cuda_kernels.notes(policy.met,
                                    autocast=AUTOCAST_DTYPE[exp.precision] is not None)
    notes += [*workload.notes, *kernels.notes(), *unmodelled(workload.model, exp.device)]
    if sums.folded:
        notes.append(note("in_place_sums", count=sums.folded))
    if hf_masks.unpadded_reads() > unpadded_reads:
        notes.append(note("unpadded_masks"))
    if hf_masks.unpacked_reads() > unpacked_reads:
        notes.append(note("unpacked_positions"))
    allocator = None
    if cuda:
        gpu = gpus.find(exp.gpu) if exp.gpu else gpus.assumed()
        steps = [warm_up, measured]
        built = TrackedSteps(building.lives) if building is not None else None
        # A budget is the GPU's memory: the allocator gets it less the CUDA context.
        capacity = (None if exp.gpu_memory is None
                    else max(0, exp.gpu_memory - gpu.context_bytes[0]))
        allocator = allocator_replay.predict_on(
            gpu, steps, capacity=capacity, expandable_segments=exp.expandable_segments,
            keep_trace=exp.allocation_trace, building=built,
            communicators=parallel.communicators(exp))
        notes.append(note("allocator_replay" if exp.gpu else "allocator_replay_assumed",
                          steps=allocator["steps"], gpu=gpu.name))
        if building is not None:
            notes.append(note("built_on_device",
                              freed_bytes=allocator["freed_while_building_bytes"]))
    if sharding is not None:
        notes += parallel.notes(exp, sharding, cuda=cuda)
    return {
        **figures(report, workload=workload, warmup_steps=warmups),
        "parallel": None if sharding is None else parallel.layout(exp, sharding),
        "step_seconds": None,
        "ground_truth": None,
        "allocator": allocator,
        "notes": notes,
    }

