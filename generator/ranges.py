"""What fp32, fp16 and bf16 can represent, from `torch.finfo`: computed, not typed."""

from __future__ import annotations

from typing import Any

import torch

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def number_ranges() -> list[dict[str, Any]]:
    """Per dtype: bits, exponent and mantissa bits, largest value, smallest normal and
    subnormal values, machine epsilon, and the decimal orders of magnitude it spans."""
    rows = []
    for name, dtype in DTYPES.items():
        info = torch.finfo(dtype)
        subnormal = float(info.smallest_normal) * float(info.eps)
        mantissa = round(-torch.log2(torch.tensor(float(info.eps))).item())
        rows.append({
            "name": name,
            "bits": info.bits,
            "exponent_bits": info.bits - 1 - mantissa,
            "mantissa_bits": mantissa,
            "max": float(info.max),
            "smallest_normal": float(info.smallest_normal),
            "smallest_subnormal": subnormal,
            "eps": float(info.eps),
            "decades": float(torch.log10(torch.tensor(float(info.max) / float(info.smallest_normal),
                                                      dtype=torch.float64))),
        })
    return rows


def fp16_to_fp32_max_ratio() -> float:
    """fp16's largest value over fp32's: the article's '1/16 of the range' claim, measured."""
    return float(torch.finfo(torch.float16).max) / float(torch.finfo(torch.float32).max)
