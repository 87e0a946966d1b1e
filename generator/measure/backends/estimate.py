"""Estimate a step with fake tensors: every op runs for its shapes only, nothing is allocated.

A CPU-only PyTorch cannot run autograd on fake CUDA tensors, so the estimate runs fake CPU
tensors and models the CUDA device by what matters for memory: the caching allocator's
512-byte blocks, the foreach optimizer kernels that PyTorch picks on CUDA, and CUDA's dropout
and autocast policies (cuda_emulation.py) on top of CPU autocast.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from generator.experiment import Experiment
from generator.measure.backends.common import (
    build_workload,
    count_parameters,
    figures,
    tracked_step,
)
from generator.measure.cuda_emulation import CudaKernelPolicy
from generator.measure.step import Trainer
from generator.measure.tracker import CUDA_BLOCK_BYTES


def run(exp: Experiment, spec) -> dict[str, Any]:
    notes = ["estimate: fake tensors, nothing allocated; kernels' internal workspaces are not seen"]
    if exp.device == "cuda":
        notes.append("models CUDA: sizes rounded up to 512-byte blocks, foreach optimizer "
                     "kernels, fused dropout with 1-byte masks")
        if exp.precision != "fp32":
            notes.append("CPU autocast stands in for CUDA autocast, with CUDA's fp32 policy "
                         "for softmax, log_softmax, layer_norm and group_norm")
    policy = CudaKernelPolicy() if exp.device == "cuda" else contextlib.nullcontext()
    with FakeTensorMode(), policy:
        workload = build_workload(spec, exp)
        trainer = Trainer.create(workload, exp, device=torch.device("cpu"), fake=True)
        warmups = trainer.warm_up()
        report = tracked_step(trainer,
                              round_bytes=CUDA_BLOCK_BYTES if exp.device == "cuda" else 1,
                              device_type=None)
        parameters = count_parameters(workload.model)
    return {
        **figures(report, parameter_count=parameters, warmup_steps=warmups),
        "step_seconds": None,
        "ground_truth": None,
        "notes": notes,
    }
