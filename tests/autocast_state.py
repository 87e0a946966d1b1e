"""Autocast turned on by its state functions, for tests: `torch.autocast("cuda")` refuses to
start without a GPU, but the real AutocastCUDA kernels run on fake CUDA tensors."""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch


@contextlib.contextmanager
def forced_autocast(device: str, dtype: torch.dtype) -> Iterator[None]:
    enabled, previous = torch.is_autocast_enabled(device), torch.get_autocast_dtype(device)
    torch.set_autocast_enabled(device, True)
    torch.set_autocast_dtype(device, dtype)
    torch.autocast_increment_nesting()
    try:
        yield
    finally:
        if torch.autocast_decrement_nesting() == 0:
            torch.clear_autocast_cache()
        torch.set_autocast_enabled(device, enabled)
        torch.set_autocast_dtype(device, previous)
