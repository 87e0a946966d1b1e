"""A real step on a CUDA GPU, checked against the caching allocator's own statistics.

The five steps whose peaks a user or a published run sees (the warm-up, where the optimizer
creates its state, and four more) run untracked; the tracked step that labels the memory
comes after them, with peaks of its own. Tracking changes what a step allocates: while a
TorchDispatchMode is on, every tensor counts as a subclass (`isTensorSubclassLike`,
aten/src/ATen/TensorSubclassLikeUtils.h), so autograd adds up a tensor's gradients out of
place instead of into the first one (`can_accumulate_inplace`,
torch/csrc/autograd/input_buffer.cpp), and a storage touched from Python keeps a second
reference that blocks the same reuse. On the CPU, bert-base's tracked step makes 72 more
allocations than an untracked one, with the same peak; on a GPU the extra blocks can move
the reserved peak.
"""

from __future__ import annotations

from typing import Any

import torch

from generator.experiment import Experiment
from generator.measure.backends.common import (
    build_workload,
    figures,
    median_step_seconds,
    tracked_step,
)
from generator.measure.tracking.tracker import CUDA_BLOCK_BYTES
from generator.measure.training.precision import MODEL_DTYPE
from generator.measure.training.step import Trainer, cast_model
from generator.results.notes import note

#: Untracked steps after the warm-up: with it, the five steps of the published runs.
UNTRACKED_STEPS = 4
_STATS = ("num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free",
          "allocated_bytes.all.peak", "reserved_bytes.all.peak", "inactive_split_bytes.all.peak")


def run(exp: Experiment, spec) -> dict[str, Any]:
    device = torch.device("cuda")
    torch.cuda.init()
    if exp.expandable_segments:  # before the first allocation of the run
        torch._C._accelerator_setAllocatorSettings("expandable_segments:True")
    if exp.gpu_memory is not None:  # a smaller GPU, emulated: the allocator refuses beyond it
        total = torch.cuda.get_device_properties(device).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, exp.gpu_memory / total), device)
    try:
        if exp.built_on_device:  # where it trains, in its training dtype (build_workload)
            with device:
                workload = build_workload(spec, exp)
        else:  # on the CPU, as a loaded model is, then moved in its training dtype
            workload = build_workload(spec, exp)
            cast_model(workload.model, MODEL_DTYPE[exp.precision])
            workload.model.to(device)
        trainer = Trainer.create(workload, exp, device=device)
        workload = trainer.workload  # with the adapters, where the step trains LoRA
        torch.cuda.synchronize()
        # What building left in the pool: the start the allocator simulation replays from
        before_steps = {"allocated_bytes": torch.cuda.memory_allocated(),
                        "reserved_bytes": torch.cuda.memory_reserved()}
        torch.cuda.reset_peak_memory_stats()
        # Five untracked steps, as the published H100 runs took them and the estimate's
        # allocator simulation counts them: the warm-up, then four, timed.
        warmups = trainer.warm_up()
        step_seconds = median_step_seconds(trainer, repeats=UNTRACKED_STEPS,
                                           synchronize=torch.cuda.synchronize)
        steps_peaks = (torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved())
        torch.cuda.reset_peak_memory_stats()
        report = tracked_step(trainer, round_bytes=CUDA_BLOCK_BYTES, device_type="cuda")
        torch.cuda.synchronize()
        max_allocated = torch.cuda.max_memory_allocated()
        max_reserved = torch.cuda.max_memory_reserved()
        stats = torch.cuda.memory_stats()
        free, total = torch.cuda.mem_get_info()
        # What the device has in use beyond PyTorch's pool: the CUDA context, cuBLAS/cuDNN
        # handles and libraries (and any other process on the same GPU).
        context = total - free - torch.cuda.memory_reserved()
    except torch.cuda.OutOfMemoryError as error:
        return {"error": "out_of_memory", "error_detail": str(error).splitlines()[0]}
    props = torch.cuda.get_device_properties(device)
    return {
        **figures(report, workload=workload, warmup_steps=warmups),
        "step_seconds": step_seconds,
        "ground_truth": {
            "source": "torch.cuda caching allocator statistics",
            "peak_bytes": max_allocated,
            "max_reserved_bytes": max_reserved,
            "allocator_overhead_bytes": max_reserved - max_allocated,
            "context_bytes": context,
            "before_steps": before_steps,
            "steps_peak_bytes": steps_peaks[0],
            "steps_max_reserved_bytes": steps_peaks[1],
            "device_total_bytes": total,
            "memory_stats": {name: stats.get(name) for name in _STATS},
        },
        "notes": [note("real_cuda_run", gpu=props.name), *workload.notes],
    }
