"""Estimate a step with fake tensors: every op runs for its shapes only, nothing is allocated.

A CPU-only PyTorch cannot run autograd on fake CUDA tensors, so the estimate runs fake CPU
tensors and models the CUDA device by what matters for memory: the caching allocator's
512-byte blocks, the foreach optimizer kernels that PyTorch picks on CUDA, CUDA's kernels and
autocast policy (cuda_kernels.py), and, over the warm-up and measured steps, the caching
allocator itself with the cuBLAS workspaces (allocator_replay.py), for the allocated and reserved
peaks a GPU would report.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from generator.plan import gpus as gpu_overheads
from generator.experiment import Experiment
from generator.measure.tracking import build_trace
from generator.measure.emulation import cuda_kernels as cuda_emulation, fake_kernel_gaps, allocator_replay as reserved
from generator.measure import imports_frozen, quiet
from generator.measure.training import step
from generator.measure.backends.common import (
    build_workload,
    figures,
    new_tracker,
    tracked_warm_up,
)
from generator.measure.emulation.cuda_kernels import CudaKernelPolicy
from generator.measure.emulation.cpu_kernels import modelled_kernels, unmodelled
from generator.measure.models import hf_masks
from generator.measure.training.precision import AUTOCAST_DTYPE
from generator.measure.emulation.allocator_replay import TrackedSteps
from generator.measure.training.step import Trainer
from generator.measure.tracking.timeline import the_next_step
from generator.measure.tracking.tracker import CUDA_BLOCK_BYTES

with imports_frozen():  # FakeTensorMode imports torch._dynamo at its first use: 1 s of imports
    import torch._dynamo

#: FakeTensorMode logs a model's own error with its traceback before re-raising it; the
#: command reports that error as one line (generator/errors.py), which the log would bury.
FAKE_TENSOR_LOG = logging.getLogger("torch._subclasses.fake_tensor")

#: The GPU whose allocator-side figures (cuBLAS workspaces) an estimate models: a Hopper GPU,
#: the generation of the published H100 runs the accuracy page compares against.
MODELLED_GPU = gpu_overheads.for_device_name("NVIDIA H100")


def run(exp: Experiment, spec) -> dict[str, Any]:
    notes = ["estimate: fake tensors, nothing allocated; kernels' internal buffers are not seen "
             "unless modelled"]
    cuda = exp.device == "cuda"
    if cuda:
        notes.append("models CUDA: sizes rounded up to 512-byte blocks, foreach optimizer "
                     "kernels")
        notes += cuda_emulation.notes(autocast=AUTOCAST_DTYPE[exp.precision] is not None)
    policy = CudaKernelPolicy() if cuda else contextlib.nullcontext()
    fake_kernel_gaps.install()
    unpadded_reads = hf_masks.unpadded_reads()
    with quiet(FAKE_TENSOR_LOG), FakeTensorMode(), policy, \
            modelled_kernels(exp.device) as kernels:
        with build_trace.traced(exp.built_on_device) as building:  # (a CUDA step's option)
            workload = build_workload(spec, exp)
            trainer = Trainer.create(workload, exp, device=torch.device("cpu"), fake=True)
        workload = trainer.workload  # with the adapters, where the step trains LoRA
        round_bytes = CUDA_BLOCK_BYTES if cuda else 1
        # Host-side optimizer state (step counts) is not the GPU's memory.
        on_host = cuda_emulation.optimizer_state_on_host if cuda else None
        # The warm-up step, tracked: the allocator simulation replays it, and when it was the
        # only one and keeps no gradients, the measured step follows from it (the_next_step)
        # instead of being run: the same figures in half the time.
        # Both trackers add gradients up in place where autograd would in an untracked
        # step (in_place_sums.py): fake tensors always take a new tensor for the sum.
        warmups, warm = tracked_warm_up(trainer, round_bytes=round_bytes, device_type=None,
                                        in_place_sums=True, state_on_host=on_host)
        # One reading of the warm-up's lives for all that follows: a storage it left alive
        # may still be freed later (when the fake mode exits, or by the garbage collector),
        # and two readings would then disagree on what the next step starts with.
        warm_up = TrackedSteps(warm.lives(), warm.phases())
        if cuda and warmups == 1 and trainer.set_to_none and trainer.scaler is None:
            measured = TrackedSteps(the_next_step(warm_up.lives), warm_up.phases)
            report = warm.report(measured.lives)
            sums = warm.sums
        else:
            tracker = new_tracker(trainer, round_bytes=round_bytes, device_type=None,
                                  in_place_sums=True, state_on_host=on_host)
            report = step.tracked_step(trainer, tracker)
            measured = TrackedSteps(tracker.lives(), tracker.phases())
            sums = tracker.sums
    notes += [*workload.notes, *kernels.notes(), *unmodelled(workload.model, exp.device)]
    sums_note = sums.note_line()
    if sums_note:
        notes.append(sums_note)
    if hf_masks.unpadded_reads() > unpadded_reads:
        notes.append(hf_masks.NOTE)
    allocator = None
    if cuda:
        gpu = MODELLED_GPU
        # A budget is the GPU's memory: the allocator gets it less the CUDA context.
        capacity = (None if exp.gpu_memory is None
                    else max(0, exp.gpu_memory - gpu.context_bytes_low))
        allocator = reserved.predict(
            [warm_up, measured],
            workspace_bytes=gpu.cublas_workspace_bytes, workspaces=gpu.cublas_workspaces,
            capacity=capacity, expandable_segments=exp.expandable_segments,
            keep_trace=exp.allocation_trace,
            building=TrackedSteps(building.lives) if building is not None else None)
        allocator["context_bytes"] = [gpu.context_bytes_low, gpu.context_bytes_high]
        notes.append(f"allocated and reserved peaks: the CUDA caching allocator's rules "
                     f"replayed over {allocator['steps']} steps, with the cuBLAS workspaces "
                     f"of a {gpu.name} GPU")
        if building is not None:
            notes.append(build_trace.note(allocator["freed_while_building_bytes"]))
    return {
        **figures(report, workload=workload, warmup_steps=warmups),
        "step_seconds": None,
        "ground_truth": None,
        "allocator": allocator,
        "notes": notes,
    }
