"""Precisions and optimizers as lookup tables, so that every backend trains the same way."""

from __future__ import annotations

import contextlib
from typing import Iterable

import torch

from generator.experiment.option import resolved_optimizer_impl
from generator.measure.training.optimizer_8bit import adamw_8bit

#: The low-precision dtype of each precision's autocast; None means no autocast.
AUTOCAST_DTYPE: dict[str, torch.dtype | None] = {
    "fp32": None,
    "amp-fp16": torch.float16,
    "amp-bf16": torch.bfloat16,
    "fp16": None,
    "bf16": None,
}
#: The dtype of the weights (and so of the gradients and the optimizer state).
MODEL_DTYPE: dict[str, torch.dtype] = {
    "fp32": torch.float32,
    "amp-fp16": torch.float32,
    "amp-bf16": torch.float32,
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
}


def autocast_context(precision: str, device_type: str) -> contextlib.AbstractContextManager:
    """The one autocast context of a step (nanoGPT's pattern: a table plus one context)."""
    dtype = AUTOCAST_DTYPE[precision]
    if dtype is None:
        return contextlib.nullcontext()
    return torch.amp.autocast(device_type=device_type, dtype=dtype)


def make_grad_scaler(precision: str, device_type: str,
                     loss_scaling: str = "auto") -> torch.amp.GradScaler | None:
    """fp16 autocast needs loss scaling against gradient underflow unless told otherwise
    (loss_scaling "off"); bf16 has fp32's range and does not. Pure fp16 training cannot use
    GradScaler, which refuses to unscale fp16 gradients."""
    if precision != "amp-fp16" or loss_scaling == "off":
        return None
    return torch.amp.GradScaler(device_type)


def make_optimizer(name: str, params: Iterable[torch.nn.Parameter], *, impl: str,
                   modelled_device: str, weight_decay: float | None = None
                   ) -> torch.optim.Optimizer:
    """impl "auto" is what PyTorch itself picks on the modelled device: foreach on CUDA, the
    for-loop on the CPU. It matters for memory: the foreach kernels hold a temporary for every
    parameter at once, the for-loop one parameter's worth, the fused kernels none.
    weight_decay None keeps the optimizer's own default."""
    if name == "adamw-8bit":  # bitsandbytes' own kernels: no impl to choose
        return adamw_8bit(params, lr=1e-4, weight_decay=weight_decay)
    kinds = {"for-loop": {"foreach": False}, "foreach": {"foreach": True},
             "fused": {"fused": True}}[resolved_optimizer_impl(impl, modelled_device)]
    if weight_decay is not None:
        kinds["weight_decay"] = weight_decay
    params = list(params)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-4, **kinds)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-4, **kinds)
    if name == "sgd":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9, **kinds)
    raise ValueError(f"unknown optimizer {name!r}")
