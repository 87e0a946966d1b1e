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
    makes an `nn.Parameter` of a fake parameter it converts (`model.to("cuda")`), which
    refuses a tensor whose detach() changes its class, and swaps it in for the old one, which
    would lose the library's attributes (a real parameter keeps its own, given new data)."""
    made = FakeTensor.detach(self)
    made.__class__ = type(self)
    made.__dict__.update(self.__dict__)
    return made


@functools.cache
def fake_subclass(cls: type) -> type:
    """`cls` (a Tensor subclass) and FakeTensor in one class, named as `cls` is."""
    return type(cls.__name__, (cls, FakeTensor), {
        "__module__": cls.__module__, "__qualname__": cls.__qualname__, "detach": _detach})


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


@contextlib.contextmanager
def subclasses_of_fakes() -> Iterator[None]:
    """`torch.Tensor._make_subclass` takes simulated tensors until the block ends."""
    before = torch.Tensor.__dict__.get("_make_subclass")
    torch.Tensor._make_subclass = make_subclass(torch.Tensor._make_subclass)
    try:
        yield
    finally:
        if before is None:
            del torch.Tensor._make_subclass
        else:
            torch.Tensor._make_subclass = before
