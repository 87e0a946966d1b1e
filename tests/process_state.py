"""What a library call must leave as it found it in the caller's process: the garbage
collector, torch's dispatch tables and fake-tensor rules, autocast, the default dtype, the
threads, sys.path, the environment, the warnings filters, the `kernels` module (blocked while
bitsandbytes is imported), the loggers the tool quiets, and transformers' functions it wraps."""

from __future__ import annotations

import gc
import logging
import os
import sys
import warnings
from typing import Any

import torch
from torch._subclasses import fake_impls

#: Ops whose kernels the estimate overrides while it runs (CUDA's autocast policy on the
#: AutocastCPU key, CUDA's softmax on AutogradCPU) or gives fake tensors a rule for.
OPS = ("aten::softmax.int", "aten::log_softmax.int", "aten::matmul", "aten::pow.Tensor_Scalar",
       "aten::layer_norm", "aten::cat", "aten::nll_loss", "aten::_grouped_mm")
LOGGERS = ("torch._subclasses.fake_tensor", "bitsandbytes.backends.cpu.ops", "huggingface_hub")


def snapshot() -> dict[str, Any]:
    state: dict[str, Any] = {
        "gc": (gc.isenabled(), gc.get_threshold()),
        "gc frozen": gc.get_freeze_count(),
        "dispatch": {op: torch._C._dispatch_dump(op) for op in OPS},
        "fake rules": sorted(map(str, fake_impls.op_implementations_dict)),
        "autocast": {device: (torch.is_autocast_enabled(device), torch.get_autocast_dtype(device))
                     for device in ("cpu", "cuda")},
        "autocast cache": torch.is_autocast_cache_enabled(),
        "default dtype": torch.get_default_dtype(),
        "threads": torch.get_num_threads(),
        "grad": torch.is_grad_enabled(),
        "sys.path": list(sys.path),
        "environment": dict(os.environ),
        "warnings filters": list(warnings.filters),
        "kernels module": sys.modules.get("kernels", "never imported"),
        "loggers": {name: logging.getLogger(name).level for name in LOGGERS},
    }
    masking = sys.modules.get("transformers.masking_utils")
    if masking is not None:
        state["transformers masks"] = {name: id(getattr(masking, name, None)) for name in
                                       ("_ignore_causal_mask_sdpa",
                                        "_ignore_bidirectional_mask_sdpa")}
    return state


def changes(before: dict[str, Any], after: dict[str, Any] | None = None) -> dict[str, Any]:
    """What differs between two snapshots (`after`: now), as {name: (before, after)}. The
    count of objects the garbage collector has frozen counts only where it grew (the call
    froze the caller's objects): a frozen object the call let go of leaves the count, and the
    test session freezes what collection made (conftest.py)."""
    after = snapshot() if after is None else after
    found = {name: (before.get(name), after.get(name)) for name in before.keys() | after.keys()
             if before.get(name) != after.get(name)}
    if "gc frozen" in found and after["gc frozen"] <= before["gc frozen"]:
        del found["gc frozen"]
    return found
