"""What building a model on the GPU leaves in the caching allocator.

A model built on the GPU (`with torch.device("cuda"): AutoModel.from_config(...)`, as the
published H100 runs of the accuracy page do) allocates there as it is built, and what it
frees on the way stays in the allocator's cache when training starts: the output layer's own
weight, say, which `tie_weights` then replaces by the input embedding. Those cached blocks
are where the first steps' tensors can go, so the reserved peak depends on them. A model
loaded elsewhere and moved arrives as its parameters alone.

`BuildTracker` records every storage the build makes and when it dies, keyed like the step's
tracker (the storage's id) so that the first step finds its parameters (allocator_replay.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from torch._subclasses.fake_tensor import FakeTensor
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from generator.measure.emulation.fake_build import under_fake_tensors
from generator.measure.tracking.storage_lives import StorageLives
from generator.measure.tracking.timeline import StorageLife
from generator.measure.tracking.tracker import own_storage


class BuildTracker(TorchDispatchMode):
    """Every storage the ops make while the model is built, and when each dies. Entered
    under fake tensors (an estimate), it counts fake tensors alone: the real ones made then
    are the estimate's own (fake_build.py computes small constants for real), not the
    modelled device's."""

    def __init__(self) -> None:
        super().__init__()
        self.made = StorageLives()
        self.fake_only = under_fake_tensors()

    @property
    def lives(self) -> list[StorageLife]:
        """Every storage the build made, in the order it made them."""
        return self.made.all

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for tensor in tree_flatten(out)[0]:
            if self.fake_only and not isinstance(tensor, FakeTensor):
                continue
            storage = own_storage(tensor)
            if storage is None or storage.nbytes() == 0 or self.made.get(storage) is not None:
                continue
            self.made.add(storage, nbytes=storage.nbytes(), category="parameters")
        return out


@contextlib.contextmanager
def built_in(dtype: torch.dtype) -> Iterator[None]:
    """Build in `dtype` from the start, as `from_config(torch_dtype=…)` or
    `torch.set_default_dtype` do: a model built on the GPU in 16 bits never had fp32 weights
    there to free."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(before)


@contextlib.contextmanager
def traced(enabled: bool) -> Iterator[BuildTracker | None]:
    """A BuildTracker over the block, or None when the build is not on the device. Its
    lives end with the block: a storage the steps free later dies in their tracker, not in
    the build's."""
    if not enabled:
        yield None
        return
    tracker = BuildTracker()
    try:
        with tracker:
            yield tracker
    finally:
        tracker.made.forget()  # later frees belong to the steps

