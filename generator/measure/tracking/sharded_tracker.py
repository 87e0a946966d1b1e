"""The project's MemoryTracker, taught what a sharded step does to storages.

Three things differ from a single-device step, and each would miscount one rank's memory:

1. FSDP2's parameters, gradients and optimizer state are DTensors: wrapper tensors without a
   storage of their own. We count the storages of their local shards (`__tensor_flatten__`,
   as PyTorch's own `torch.distributed._tools` trackers do), i.e. what this rank holds.
2. FSDP2 gathers a block's full weights into buffers it frees with `storage.resize_(0)` after
   use and re-grows with `resize_(n)` before the next use: the storage object lives on, so a
   weak reference never sees the free. Like PyTorch's MemTracker we intercept
   `UntypedStorage.resize_` while tracking: a shrink ends the storage's life, a regrowth starts
   a new one. The only storages a training step resizes are these gathered weights, so each
   new life is labelled `comm_buffers`.
3. FSDP2 assigns the reduce-scattered gradient shards to `.grad` itself; autograd never
   accumulates into the sharded parameters, so their grad hooks never fire. The gradients
   are labelled when the optimizer is about to read them (a step pre-hook); a label holds for
   a storage's whole life, so they count as gradients from the reduce-scatter on.

With FSDP2's CPU offload, the storages a `host` (training/cpu_offload.HostMemory) holds are
not this GPU's: the tracker leaves them out, and the optimizer's step (on the CPU) with them.

`comm_buffers` is the category of FSDP2's gathered weights and DDP's gradient buckets
(registered as persistent buffers); a single-device step has none. It ranks between autocast
copies and gradients (tracker.PRECEDENCE): gathered weights stay communication buffers when
autograd saves them for backward (FSDP2 frees and re-gathers them, so they are not
activations).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import torch
from torch import nn
from torch.utils._python_dispatch import is_traceable_wrapper_subclass

from generator.measure.tracking.timeline import TrackerReport
from generator.measure.tracking.tracker import MemoryTracker, own_storage


def local_storages(tensor: Any) -> list[torch.UntypedStorage]:
    """The storages a tensor holds on this rank: a DTensor's local shard, a plain tensor's own."""
    found, todo = [], [tensor]
    while todo:
        item = todo.pop()
        if is_traceable_wrapper_subclass(item):
            names, _ = item.__tensor_flatten__()
            todo += [getattr(item, n) for n in names if isinstance(getattr(item, n), torch.Tensor)]
        elif (storage := own_storage(item)) is not None:
            found.append(storage)
    return found


class ShardedMemoryTracker(MemoryTracker):
    """MemoryTracker for one rank of a DDP, FSDP2 or tensor-parallel step (see the module's
    docstring)."""

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, *,
                 persistent: Iterable[torch.Tensor] = (),
                 cast_category: str = "autocast_copies", host: Any = None,
                 **options: Any) -> None:
        """persistent: buffers that outlive the step (DDP's buckets), counted from its start.
        cast_category: the label of low-precision copies of parameters; FSDP2's mixed
        precision casts each shard before the all-gather, a communication buffer.
        host: FSDP2's CPU offload's HostMemory (None: no offload). options: MemoryTracker's."""
        super().__init__(model, optimizer, **options)
        self._persistent = list(persistent)
        self._cast_category = cast_category
        self._host = host

    def __enter__(self) -> "ShardedMemoryTracker":
        for tensor in self._persistent:
            self.label(tensor, "comm_buffers", born=0)
        self.on_exit(self.optimizer.register_step_pre_hook(self._label_gradients).remove)
        if self._host is not None:  # the optimizer steps on the CPU
            self.on_exit(self.optimizer.register_step_pre_hook(self._host.begin_step).remove)
            self.on_exit(self.optimizer.register_step_post_hook(self._host.end_step).remove)
        self.on_exit(_intercept_resize(self))
        return super().__enter__()

    def storages(self, tensor: object) -> list[torch.UntypedStorage]:
        """This rank's storages: a DTensor's local shard."""
        return local_storages(tensor)

    def label(self, tensor: object, category: str, *, born: int | None = None,
              module: str | None = None) -> None:
        """As MemoryTracker.label; a low-precision copy of a parameter becomes
        `cast_category`. Also for a tensor the step hands over, e.g. a DDP bucket given to a
        communication hook."""
        if category == "autocast_copies":
            category = self._cast_category
        super().label(tensor, category, born=born, module=module)

    def label_storage(self, storage: torch.UntypedStorage, category: str,
                      **options: Any) -> None:
        """As MemoryTracker.label_storage, for the GPU's storages only (see `host`)."""
        if self._host is None or not self._host.holds(storage):
            super().label_storage(storage, category, **options)

    def _is_parameter(self, tensor) -> bool:
        """A parameter's storage, or FSDP2's gathered weights (communication buffers): under
        autocast with fp32 parameters, FSDP2's blocks run on the gathered weights, so their
        bf16 casts are autocast copies, as a replica's are (no other communication buffer is
        cast: DDP's buckets are only copied into). A tensor-parallel weight is a DTensor:
        autocast casts the DTensor, so its local shard's storage is the one to look up."""
        storages = local_storages(tensor)
        life = self._storages.get(storages[0]) if len(storages) == 1 else None
        return life is not None and life.category in ("parameters", "comm_buffers")

    def _label_gradients(self, *_: Any) -> None:
        for param in self.model.parameters():
            if param.grad is not None:
                self.label(param.grad, "gradients")


def _intercept_resize(tracker: MemoryTracker) -> Callable[[], None]:
    """Make `UntypedStorage.resize_` tell `tracker` (see the module's docstring, point 2);
    returns what undoes it."""
    original = torch.UntypedStorage.resize_

    def resize_(storage: torch.UntypedStorage, size: int):
        tracker.end_life(storage)
        out = original(storage, size)
        if size > 0:
            tracker.label_storage(storage, "comm_buffers")
        return out

    torch.UntypedStorage.resize_ = resize_

    def restore() -> None:
        torch.UntypedStorage.resize_ = original

    return restore


def rank_figures(report: TrackerReport) -> dict[str, Any]:
    """What the sharding study keeps of a rank's report: the peak, what is live at it per
    category, each category's own maximum, and the phase the peak falls in."""
    return {"peak_bytes": report.peak_bytes,
            "live_at_peak_bytes": report.live_at_peak_bytes,
            "category_max_bytes": report.category_max_bytes,
            "peak_phase": report.peak_phase()}
