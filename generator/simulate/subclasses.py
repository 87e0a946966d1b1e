"""Parameter subclasses made of simulated tensors, as libraries make them of real ones.

bitsandbytes keeps a 4-bit weight in `Params4bit` (and an 8-bit one in `Int8Params`), an
`nn.Parameter` subclass of its own that it makes with `torch.Tensor._make_subclass(cls,
data)`: a new Python object of class `cls` for the tensor `data`. A simulated tensor is a
FakeTensor, already a Python object of its own class, so PyTorch refuses ("the raw Tensor
object is already associated to a python object of type FakeTensor"); `nn.Parameter` itself
knows the case and keeps the FakeTensor, marked as a parameter (torch/nn/parameter.py).

`subclasses_of_fakes()` does for any such class what `nn.Parameter` does for its own, for as
long as the run lasts: `_make_subclass(cls, fake)` gives a detached FakeTensor of `fake`'s
storage whose class is `cls` and FakeTensor together (`cls` first: its methods and
attributes, `quant_state`, `to()` that quantizes on the way to the GPU, are the library's; its
ops are the fake tensor's). `isinstance(weight, Params4bit)`, which transformers and PEFT
ask, holds, and so does `isinstance(weight, FakeTensor)`, which the simulation asks.

`Module.to()` converts a real parameter by giving it new data (`param.data = new`): the
object, its class and its attributes stay. It swaps a fake one for a new Parameter instead
(`torch.utils.swap_tensors`, torch/nn/modules/module.py `_apply`), which would give the
module the new tensor's class and attributes, so meanwhile a swap keeps a subclass's own.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

import torch
from torch._subclasses.fake_tensor import FakeTensor


def _detach(self: torch.Tensor) -> torch.Tensor:
    """The tensor detached, of its own class and with its attributes: `nn.Module._apply`
    makes an `nn.Parameter` of the fake tensor a conversion returns (Params4bit.to returns a
    Params4bit), which refuses a tensor whose detach() changes its class."""
    made = FakeTensor.detach(self)
    made.__class__ = type(self)
    made.__dict__.update(self.__dict__)
    return made


#: The classes fake_subclass made.
_MADE: set[type] = set()


@functools.cache
def fake_subclass(cls: type) -> type:
    """`cls` (a Tensor subclass) and FakeTensor in one class, named as `cls` is."""
    made = type(cls.__name__, (cls, FakeTensor), {
        "__module__": cls.__module__, "__qualname__": cls.__qualname__, "detach": _detach})
    _MADE.add(made)
    return made


def make_subclass(original: Any) -> Any:
    """`torch.Tensor._make_subclass`, which also takes a FakeTensor (see the module)."""

    def _make_subclass(cls: type, data: torch.Tensor, require_grad: bool = False,
                       *args: Any, **kwargs: Any) -> torch.Tensor:
        if not isinstance(data, FakeTensor):
            return original(cls, data, require_grad, *args, **kwargs)
        made = data.detach()
        made.requires_grad_(require_grad)
        made.__class__ = fake_subclass(cls)
        return made

    return staticmethod(_make_subclass)


def swap_tensors(original: Any) -> Any:
    """`torch.utils.swap_tensors(t1, t2)`, after which a subclass of a fake tensor (`t1`,
    the module's parameter) keeps its class and attributes, as `param.data = t2` keeps a
    real one's (see the module)."""

    def swap(t1: torch.Tensor, t2: torch.Tensor) -> None:
        kept = type(t1), dict(t1.__dict__)
        original(t1, t2)
        if kept[0] in _MADE:
            t1.__class__ = kept[0]
            t1.__dict__.clear()
            t1.__dict__.update(kept[1])

    return swap


@contextlib.contextmanager
def subclasses_of_fakes() -> Iterator[None]:
    """`torch.Tensor._make_subclass` takes simulated tensors, and a module's conversion keeps
    their class, until the block ends."""
    before = torch.Tensor.__dict__.get("_make_subclass"), torch.utils.swap_tensors
    torch.Tensor._make_subclass = make_subclass(torch.Tensor._make_subclass)
    torch.utils.swap_tensors = swap_tensors(torch.utils.swap_tensors)
    try:
        yield
    finally:
        torch.utils.swap_tensors = before[1]
        if before[0] is None:
            del torch.Tensor._make_subclass
        else:
            torch.Tensor._make_subclass = before[0]
