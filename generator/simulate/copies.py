"""A module deep-copied in the run keeps its tensors in the run's fake mode.

`copy.deepcopy` of a module copies each fake tensor's `__dict__`, and with it the
FakeTensorMode the tensor belongs to: the copy's tensors then live in a mode of their own,
whose converter memo holds weak references to every fake tensor the run had made so far.
`nn.TransformerEncoder` copies its layer so (`_get_clones`), as do models that stack copies of
a block; afterwards `model.to("cuda")` (accelerate's `prepare`, Trainer's placement) cannot
swap an earlier parameter, whose weak references in the copied memos make
`torch.utils.swap_tensors` refuse it, and ops that mix the copies' tensors with the others
would meet two fake modes. A mode is the run's, not a value: meanwhile, a deep copy of it is
the mode itself.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from torch._subclasses.fake_tensor import FakeTensorMode

_MISSING = object()


def _itself(mode: FakeTensorMode, memo: dict) -> FakeTensorMode:
    return mode


@contextlib.contextmanager
def modes_not_copied() -> Iterator[None]:
    """Deep copies made in the block share the fake mode of what they copy."""
    before = FakeTensorMode.__dict__.get("__deepcopy__", _MISSING)
    FakeTensorMode.__deepcopy__ = _itself
    try:
        yield
    finally:
        if before is _MISSING:
            del FakeTensorMode.__deepcopy__
        else:
            FakeTensorMode.__deepcopy__ = before
