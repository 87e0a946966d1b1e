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

`comm_buffers` is a seventh category beside the tracker's six: FSDP2's gathered weights, and
DDP's gradient buckets (registered as persistent buffers).
"""

from __future__ import annotations

import weakref
from typing import Any, Iterable

import torch
from torch import nn
from torch.utils._python_dispatch import is_traceable_wrapper_subclass

from generator.measure.timeline import StorageLife
from generator.measure.tracker import MemoryTracker, _Live
from generator.results.shapes import CATEGORIES

SHARDING_CATEGORIES: tuple[str, ...] = CATEGORIES + ("comm_buffers",)
#: As the tracker's ranks; gathered weights stay communication buffers when autograd saves
#: them for backward (FSDP2 frees and re-gathers them, so they are not activations).
_RANK = {"temporaries": 0, "activations": 1, "autocast_copies": 2, "comm_buffers": 2.5,
         "gradients": 3, "optimizer_state": 4, "parameters": 5}


def local_storages(tensor: Any) -> list[torch.UntypedStorage]:
    """The storages a tensor holds on this rank: a DTensor's local shard, a plain tensor's own."""
    found, todo = [], [tensor]
    while todo:
        item = todo.pop()
        if is_traceable_wrapper_subclass(item):
            names, _ = item.__tensor_flatten__()
            todo += [getattr(item, n) for n in names if isinstance(getattr(item, n), torch.Tensor)]
        elif isinstance(item, torch.Tensor) and item.layout == torch.strided:
            try:
                found.append(item.untyped_storage())
            except (RuntimeError, NotImplementedError):  # tensors without storage
                pass
    return found


class ShardedMemoryTracker(MemoryTracker):
    """MemoryTracker for one rank of a DDP or FSDP2 step (see the module's docstring)."""

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, *,
                 round_bytes: int = 1, device_type: str | None = None,
                 persistent: Iterable[torch.Tensor] = (),
                 cast_category: str = "autocast_copies") -> None:
        """persistent: buffers that outlive the step (DDP's buckets), counted from its start.
        cast_category: the label of low-precision copies of parameters; FSDP2's mixed
        precision casts each shard before the all-gather, a communication buffer."""
        super().__init__(model, optimizer, round_bytes=round_bytes, device_type=device_type)
        self._persistent = list(persistent)
        self._cast_category = cast_category
        self._original_resize = torch.UntypedStorage.resize_

    def __enter__(self) -> "ShardedMemoryTracker":
        for tensor in self._persistent:
            self._see(tensor, "comm_buffers", born=0)
        self._handles.append(self.optimizer.register_step_pre_hook(self._label_gradients))
        tracker, original = self, self._original_resize

        def resize_(storage: torch.UntypedStorage, size: int):
            tracker._end_life(storage)
            out = original(storage, size)
            if size > 0:
                tracker._see_storage(storage, "comm_buffers", None, None)
            return out

        torch.UntypedStorage.resize_ = resize_
        try:
            super().__enter__()
        except BaseException:
            torch.UntypedStorage.resize_ = original
            raise
        return self

    def __exit__(self, *exc) -> None:
        torch.UntypedStorage.resize_ = self._original_resize
        super().__exit__(*exc)

    def lives(self) -> list[StorageLife]:
        with self._lock:
            return list(self._lives)

    def phases(self) -> list[tuple[str, int]]:
        return list(self._phases)

    # -- labels ----------------------------------------------------------------------------
    def label(self, tensor: torch.Tensor, category: str) -> None:
        """Label a tensor the step uses, e.g. a DDP bucket handed to a communication hook;
        the label holds for its storage's whole life."""
        self._see(tensor, category)

    def _label_gradients(self, *_: Any) -> None:
        for param in self.model.parameters():
            if param.grad is not None:
                self._see(param.grad, "gradients")

    def _see(self, tensor: torch.Tensor, category: str, *, born: int | None = None,
             module: str | None = None) -> None:
        if category == "autocast_copies":
            category = self._cast_category
        for storage in local_storages(tensor):
            self._see_storage(storage, category, born, module)

    def _see_storage(self, storage: torch.UntypedStorage, category: str, born: int | None,
                     module: str | None) -> None:
        if storage.nbytes() == 0 or (self.device_type is not None
                                     and storage.device.type != self.device_type):
            return
        with self._lock:
            entry = self._live.get(id(storage))
            if entry is not None:
                if _RANK[category] > _RANK[entry.life.category]:
                    entry.life.category = category
                    if category == "activations":
                        entry.life.module = module
                return
            nbytes = -(-storage.nbytes() // self.round_bytes) * self.round_bytes
            life = StorageLife(nbytes=nbytes, category=category,
                               born=next(self._clock) if born is None else born, module=module)
            key = id(storage)
            ref = weakref.ref(storage, lambda _r, key=key, life=life: self._on_free(key, life))
            self._live[key] = _Live(life, ref)
            self._lives.append(life)

    def _end_life(self, storage: torch.UntypedStorage) -> None:
        """The storage is about to be resized: its current bytes are given back now. Dropping
        the entry drops its weak reference too, so no callback ends the life a second time."""
        with self._lock:
            entry = self._live.pop(id(storage), None)
            if entry is not None:
                entry.life.died = next(self._clock)


def summarise(lives: list[StorageLife], phases: list[tuple[str, int]]) -> dict[str, Any]:
    """The peak, what is live at it per category, each category's own maximum, and the phase
    the peak falls in; as timeline.summarise, over SHARDING_CATEGORIES."""
    index = {name: i for i, name in enumerate(SHARDING_CATEGORIES)}
    changes: dict[int, list[int]] = {}
    for life in lives:
        row = index[life.category]
        changes.setdefault(life.born, [0] * len(index))[row] += life.nbytes
        if life.died is not None:
            changes.setdefault(life.died, [0] * len(index))[row] -= life.nbytes
    totals, maxima = [0] * len(index), [0] * len(index)
    peak, at_peak, peak_tick = 0, list(totals), 0
    for tick in sorted(changes):
        totals = [t + d for t, d in zip(totals, changes[tick])]
        maxima = [max(m, t) for m, t in zip(maxima, totals)]
        if sum(totals) > peak:
            peak, at_peak, peak_tick = sum(totals), totals, tick
    phase = next((name for name, tick in reversed(phases) if tick <= peak_tick), None)
    return {"peak_bytes": peak,
            "live_at_peak_bytes": dict(zip(SHARDING_CATEGORIES, at_peak)),
            "category_max_bytes": dict(zip(SHARDING_CATEGORIES, maxima)),
            "peak_phase": phase}
