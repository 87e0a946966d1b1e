"""FSDP2's CPU offload (`CPUOffloadPolicy`) on fake tensors: which storages are the host's.

With the policy, FSDP2 keeps each rank's sharded parameters in host memory, copies a unit's
shards to the GPU just before it gathers them (`FSDPParam.all_gather_inputs`), copies each
reduce-scattered gradient shard back to the host (`foreach_reduce`), and the optimizer steps
on the CPU, where its state lives. An estimate runs everything on fake CPU tensors standing
for the GPU's, so FSDP2's `.to(device)` and `.to("cpu")` are no-ops there: nothing would move
and nothing would be copied. This module makes the two copies happen and tells the tracker
which storages are the host's (`HostMemory`), so that a rank's GPU figures leave them out:
- the sharded parameters, from the moment FSDP2 has made them;
- the GPU's copy of a unit's shards, a communication buffer while it is gathered from;
- the gradients, copied out of the reduce-scatter's output, which the GPU then frees;
- everything the optimizer's step allocates (its state and temporaries).
`HostMemory` also adds up what the host holds, with the pinned part as CUDA's pinned-memory
allocator holds it (rounded up to powers of two).
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterator

import torch
from torch import nn


def pinned_bytes(nbytes: int) -> int:
    """What PyTorch's caching host allocator sets aside for a pinned tensor: its size rounded
    up to a power of two (ATen/core/CachingHostAllocator.h, PowerOf2Ceil; the default
    pinned_max_round_threshold rounds every size)."""
    return 1 << (nbytes - 1).bit_length() if nbytes > 1 else nbytes


class HostMemory:
    """The storages of one rank that live in host memory, by id while they live (as
    storage_lives.StorageLives knows storages), and how many bytes they hold. The parameters'
    and gradients' host copies are pinned, as CPUOffloadPolicy's default pin_memory has them
    on CUDA (a fake run's own tensors cannot be pinned: the pinned allocator's rounding is
    added here)."""

    def __init__(self) -> None:
        # id -> (weak reference, bytes it holds, pinned?)
        self._live: dict[int, tuple[weakref.ref, int, bool]] = {}
        self._lock = threading.RLock()
        self._allocating = 0
        self.held_at_optimizer = (0, 0)
        """(bytes, of which pinned) the host held as the last optimizer step began:
        parameters, gradients and optimizer state (the state from the step before)."""

    def holds(self, storage: torch.UntypedStorage) -> bool:
        """Whether `storage` is the host's; while `allocating`, every storage not seen yet
        becomes the host's (pageable) as it is asked about."""
        with self._lock:
            if id(storage) in self._live:
                return True
            if self._allocating:
                self._add(storage, pinned=False)
                return True
            return False

    def add(self, tensor: torch.Tensor, *, pinned: bool = False) -> None:
        """Count the storages `tensor` holds on this rank (a DTensor's local shard) as the
        host's."""
        from generator.measure.tracking.sharded_tracker import local_storages

        with self._lock:
            # a storage already counted (made while `allocating`) is counted anew, as pinned
            for storage in local_storages(tensor):
                self._add(storage, pinned=pinned)

    def _add(self, storage: torch.UntypedStorage, *, pinned: bool) -> None:
        key = id(storage)
        nbytes = pinned_bytes(storage.nbytes()) if pinned else storage.nbytes()
        self._live[key] = (weakref.ref(storage, lambda _: self._live.pop(key, None)), nbytes,
                           pinned)

    @contextlib.contextmanager
    def allocating(self) -> Iterator[None]:
        """Every storage made inside is the host's (the optimizer's step, a D2H copy)."""
        with self._lock:
            self._allocating += 1
        try:
            yield
        finally:
            with self._lock:
                self._allocating -= 1

    def begin_step(self, *_) -> None:
        """An optimizer step pre-hook: the step runs on the CPU."""
        with self._lock:
            held = list(self._live.values())
            self.held_at_optimizer = (sum(nbytes for _, nbytes, _ in held),
                                      sum(nbytes for _, nbytes, pinned in held if pinned))
            self._allocating += 1

    def end_step(self, *_) -> None:
        """An optimizer step post-hook."""
        with self._lock:
            self._allocating = max(0, self._allocating - 1)


def offload_parameters(model: nn.Module, host: HostMemory) -> None:
    """After fully_shard with the policy: the sharded parameters are the host's (pinned)."""
    for param in model.parameters():
        host.add(param, pinned=True)


@contextlib.contextmanager
def copies_modelled(host: HostMemory) -> Iterator[None]:
    """FSDP2's host-to-device and device-to-host copies, made on fake tensors where they
    would be no-ops (see the module's docstring); undone on exit."""
    from torch.distributed.fsdp._fully_shard import _fsdp_param_group
    from torch.distributed.fsdp._fully_shard._fsdp_param import FSDPParam, ShardedState

    from generator.measure.tracking.tracker import label_for_trackers

    gathering, reducing = FSDPParam.all_gather_inputs, _fsdp_param_group.foreach_reduce

    def all_gather_inputs(self: FSDPParam) -> list[torch.Tensor]:
        if not (self.offload_to_cpu and self.sharded_state == ShardedState.SHARDED
                and not hasattr(self._sharded_local_tensor, "fsdp_pre_all_gather")):
            return gathering.fget(self)
        # FSDP2 reads `_sharded_param_data.to(device)`: hand it the GPU's copy to read
        on_host = self._sharded_param_data
        self._sharded_param_data = on_host.clone()
        label_for_trackers(self._sharded_param_data, "comm_buffers")
        try:
            return gathering.fget(self)
        finally:
            self._sharded_param_data = on_host

    def foreach_reduce(fsdp_params, *args, **kwargs):
        out = reducing(fsdp_params, *args, **kwargs)
        for fsdp_param in fsdp_params:
            grad = fsdp_param.sharded_param.grad
            if not fsdp_param.offload_to_cpu or grad is None:
                continue
            local = grad.to_local()
            if host.holds(local.untyped_storage()):  # added up into the host's gradient
                continue
            # the gradient is a view of the GPU's reduce-scatter output: copy it to the host
            with host.allocating():
                copied = local.clone()
            host.add(copied, pinned=True)
            fsdp_param.sharded_param.grad = fsdp_param.to_sharded_dtensor(copied)
        return out

    FSDPParam.all_gather_inputs = property(all_gather_inputs)
    _fsdp_param_group.foreach_reduce = foreach_reduce
    try:
        yield
    finally:
        FSDPParam.all_gather_inputs = gathering
        _fsdp_param_group.foreach_reduce = reducing
