"""Study `torch_facts`: what the installed PyTorch says about its number formats and its AMP API.

The pages quote these facts (fp16's range, GradScaler's defaults, whether `torch.cuda.amp` is
deprecated); reading them here, when measuring, keeps PyTorch out of rendering: the site is
built from results alone. Nothing runs on a device; the facts depend on the PyTorch version
only, so the study runs on the `estimate` backend and is measured again when PyTorch changes.

No params.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any

from generator.measure.studies import unknown_params

VERSION = 1
BACKENDS = ("estimate",)
FORMATS = ("fp32", "fp16", "bf16")


def problems(params: dict[str, Any]) -> list[str]:
    return unknown_params("torch_facts", params, ())


def run(params: dict[str, Any]) -> dict[str, Any]:
    import torch

    return {"torch": torch.__version__, "formats": number_formats(),
            "grad_scaler": grad_scaler_defaults(), "cuda_amp_deprecated": cuda_amp_deprecated()}


def number_formats() -> list[dict[str, Any]]:
    """Per format, from `torch.finfo`: bits, exponent and mantissa bits, largest value,
    smallest normal and subnormal values, machine epsilon, and the decades it spans."""
    import torch

    dtypes = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    rows = []
    for name in FORMATS:
        info = torch.finfo(dtypes[name])
        mantissa = round(-torch.log2(torch.tensor(float(info.eps))).item())
        rows.append({
            "name": name,
            "bits": info.bits,
            "exponent_bits": info.bits - 1 - mantissa,
            "mantissa_bits": mantissa,
            "max": float(info.max),
            "smallest_normal": float(info.smallest_normal),
            "smallest_subnormal": float(info.smallest_normal) * float(info.eps),
            "eps": float(info.eps),
            "decades": float(torch.log10(torch.tensor(
                float(info.max) / float(info.smallest_normal), dtype=torch.float64))),
        })
    return rows


def grad_scaler_defaults() -> dict[str, float]:
    """`torch.amp.GradScaler`'s defaults, from its signature."""
    import torch

    params = inspect.signature(torch.amp.GradScaler).parameters
    return {name: params[name].default
            for name in ("init_scale", "growth_factor", "backoff_factor", "growth_interval")}


def cuda_amp_deprecated() -> bool:
    """The article imports autocast and GradScaler from `torch.cuda.amp`: whether this
    PyTorch warns that the API is deprecated in favour of `torch.amp`."""
    import torch

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.amp.GradScaler(enabled=False)
    return any(issubclass(w.category, FutureWarning) for w in caught)
