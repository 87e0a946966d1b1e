"""The script's data is real: which host ops run for real, and whose values a simulated
tensor keeps beside it (placement.py applies both).

A script's loader shuffles, pads and packs real data, and its step reads counts and masks
back; the simulation keeps that data real on the host, and on the GPU keeps the values of
small integral outputs (ids, masks, counts) beside their fake tensors, so the script takes
the branches, lengths and shapes it would take on a real GPU.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch._subclasses.fake_tensor import FakeTensor
from torch.utils._python_dispatch import is_traceable_wrapper_subclass

aten = torch.ops.aten

#: Factories of indices whose values a script's data pipeline reads back (a shuffled
#: sampler's `torch.randperm(n).tolist()`, random token ids, positions).
_INDEX_FACTORIES = {aten.randperm, aten.randint, aten.arange}
_FILLED = {aten.empty, aten.zeros, aten.ones, aten.full}
#: `torch.unique`'s ops. Of values the simulation does not have (a model's predictions) they
#: run on the values' placeholders (values.py: 0), so give one value: a summary of the
#: values, at most their size, that scripts check rather than compute on (torchmetrics counts
#: the classes it is given). The other ops whose output's shape depends on unknown values
#: (nonzero, boolean-mask indexing) are refused: their output may be as large as the input.
UNIQUE = {aten._unique, aten._unique2, aten.unique_dim, aten.unique_consecutive,
           aten.unique_dim_consecutive}
#: The most elements of an op's outputs whose values are kept beside the fake ones (the
#: script's data on the GPU: 16 Mi elements of token ids are a batch of 4 × 4 Mi tokens).
VALUES_LIMIT = 2**24
FEW_NUMBERS = 4096


def stays_real(func: Any, args: tuple, kwargs: dict, inputs: list) -> bool:
    """Whether an op on the host runs for real: the script's data is real (its loader's
    indices, token ids, masks, labels), so that shuffling, padding and packing happen as on
    the GPU. An op whose inputs are all real tensors stays real; of the ops that make a
    tensor from nothing, those of indices do (randperm, randint, arange): an empty tensor to
    fill stays fake, whatever its dtype (a checkpoint's int8 weights), however large (one of
    no elements has nothing to fill: it stays real, see below). A
    real tensor becomes fake where it meets a fake one, or moves to the GPU."""
    if inputs:
        return not any(isinstance(t, FakeTensor) or is_traceable_wrapper_subclass(t)
                       or device_type(t) == "meta" for t in inputs)
    device = kwargs.get("device")
    if device is not None and torch.device(device).type != "cpu":  # the meta device's stay
        return False
    if func.overloadpacket in _INDEX_FACTORIES or func.overloadpacket is aten.scalar_tensor:
        return True
    if func.overloadpacket in _FILLED and _integral(func, args, kwargs):
        return True  # ids and masks filled with a constant (a collator's padding)
    size = args[0] if args and isinstance(args[0], (list, tuple)) else None
    if func is aten.empty.memory_format and size is not None and math.prod(size) == 0:
        # an empty tensor of nothing on the host: it has no values, and PyTorch makes one to
        # wrap a host storage it then sets (`set_`): a tensor rebuilt from its storage
        # (pickle, DataLoader's worker processes), a storage's copy (`clone()`, so a deep
        # copy); a fake one, of the meta device, cannot take it ('set the storage of a
        # tensor on device "meta"')
        return True
    # a single number made to be filled (DataLoader's seed: torch.empty((), dtype=int64)
    # .random_().item())
    return func.overloadpacket in _FILLED and size is not None and math.prod(size) == 1


def _integral(func: Any, args: tuple, kwargs: dict) -> bool:
    """Whether zeros/ones/full make integers or truth values (full's from its fill value);
    an empty tensor's values are not made, so it is never one of them."""
    dtype = kwargs.get("dtype")
    if dtype is None:
        return (func.overloadpacket is aten.full and len(args) > 1
                and isinstance(args[1], int))
    return func.overloadpacket is not aten.empty and not (
        dtype.is_floating_point or dtype.is_complex)


def values_kept(outputs: list[torch.Tensor]) -> bool:
    """Outputs whose values are kept: integers or truth values up to VALUES_LIMIT elements,
    numbers computed from them (a count of tokens divided by a chunk's length) up to
    FEW_NUMBERS."""
    count = sum(t.numel() for t in outputs)
    if all(not t.dtype.is_floating_point and not t.dtype.is_complex for t in outputs):
        return count <= VALUES_LIMIT
    return count <= FEW_NUMBERS


def device_type(tensor: torch.Tensor) -> str:
    """Where a tensor really is: a fake one's own device (not the simulated GPU that
    device.py makes its `device` answer, which asks this module)."""
    return (tensor.fake_device if isinstance(tensor, FakeTensor) else tensor.device).type
