"""bitsandbytes' 8-bit AdamW (Dettmers et al. 2022), where the package is installed.

Its state is two uint8 tensors per parameter tensor of at least 4096 elements, plus one fp32
scale per block of 256 (blockwise quantisation); smaller tensors keep fp32 state. The real
optimizer runs, so those rules are bitsandbytes' own, not restated here. Its update kernel
has a fake-tensor implementation and allocates nothing, so an estimate sees what a GPU does.
"""

from __future__ import annotations

import importlib.util
from typing import Iterable

import torch
from torch._subclasses.fake_tensor import unset_fake_temporarily

from generator.measure import importing_bitsandbytes

INSTALL = "pip install bitsandbytes"


def unavailable(optimizer: str) -> str | None:
    """Why `optimizer` cannot run here, or None."""
    if optimizer == "adamw-8bit" and importlib.util.find_spec("bitsandbytes") is None:
        return f"adamw-8bit needs the bitsandbytes package: {INSTALL}"
    return None


def adamw_8bit(params: Iterable[torch.nn.Parameter], *, lr: float,
               weight_decay: float | None) -> torch.optim.Optimizer:
    with importing_bitsandbytes():
        import bitsandbytes as bnb

    params = list(params)
    extra = {} if weight_decay is None else {"weight_decay": weight_decay}
    # The constructor builds its two quantisation maps from values (data-dependent ops that
    # fake tensors refuse), so it runs outside fake mode; under fake tensors the maps (256
    # floats each, which the first step moves to the device) then become fake too.
    with unset_fake_temporarily():
        optimizer = bnb.optim.AdamW8bit(params, lr=lr, **extra)
    fake_mode = getattr(params[0], "fake_mode", None) if params else None
    if fake_mode is not None:
        optimizer.name2qmap = {name: fake_mode.from_tensor(qmap)
                               for name, qmap in optimizer.name2qmap.items()}
    return optimizer
