"""A module deep-copied in the run: its copy's tensors are fake tensors of the run's mode.

`copy.deepcopy(module)` (`nn.TransformerEncoder` copies its layer so, `_get_clones`, as do
models that stack copies of a block, and frameworks that keep a copy of a model) meets two
things in the run that a real tensor does not have:

- A fake parameter is a FakeTensor (nn.Parameter of a tensor subclass marks the tensor
  itself), so Tensor.__deepcopy__ copies it, and the run's torch-function modes keep
  FakeTensor's own handling from it: it reads the fake's data pointer (a warning that says
  "almost definitely a bug in your code") and copies the tensor's `__dict__`, with the
  FakeTensorMode in it.
- That copied mode's converter memo holds weak references to every fake tensor the run
  had made so far, so `model.to("cuda")` (accelerate's `prepare`, Trainer's placement)
  cannot swap those parameters afterwards (`torch.utils.swap_tensors` refuses a tensor
  with a weak reference), and the copy's tensors would live in a mode of their own.

Meanwhile a fake tensor's deep copy is its clone (a storage of its own, on the device where
the original is, as Tensor.__deepcopy__ makes) with its attributes copied, and a mode's deep
copy is the mode itself. Two views of one storage copied in one deep copy get a storage each
(Tensor.__deepcopy__ would share one): a module's parameters are not views of each other.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator

import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode


def _mode_itself(mode: FakeTensorMode, memo: dict) -> FakeTensorMode:
    return mode


def _fake_copy(tensor: FakeTensor, memo: dict) -> torch.Tensor:
    """Tensor.__deepcopy__ for a fake tensor (see the module)."""
    if id(tensor) in memo:
        return memo[id(tensor)]
    if not tensor.is_leaf:  # Tensor.__deepcopy__'s own refusal, in its words
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                           "support the deepcopy protocol at the moment.")
    with torch.no_grad():
        copied = tensor.clone()
    copied.requires_grad_(tensor.requires_grad)
    memo[id(tensor)] = copied
    if tensor.grad is not None:
        copied.grad = copy.deepcopy(tensor.grad, memo)
    # its attributes: nn.Parameter's mark, a framework's flags, the fake mode (itself)
    copied.__dict__.update(copy.deepcopy(tensor.__dict__, memo))
    return copied


@contextlib.contextmanager
def fake_copies() -> Iterator[None]:
    """Deep copies made in the block are fake tensors of the run's mode (see the module)."""
    for owner, method in ((FakeTensorMode, _mode_itself), (FakeTensor, _fake_copy)):
        if "__deepcopy__" in owner.__dict__:  # PyTorch defines neither, this one both
            raise RuntimeError(f"{owner.__name__} has a __deepcopy__ of its own")
    FakeTensorMode.__deepcopy__, FakeTensor.__deepcopy__ = _mode_itself, _fake_copy
    try:
        yield
    finally:
        del FakeTensorMode.__deepcopy__, FakeTensor.__deepcopy__
