"""The simulated device's memory, online: every allocation and free as it happens.

The estimate replays a step's allocations through the caching-allocator model afterwards
(measure/emulation/allocator_replay.py). A script running on the simulated GPU asks for its
memory figures while it runs (`torch.cuda.memory_reserved()` mid-loop) and must meet an
out-of-memory error at the allocation that causes it, so here the same model
(allocator/caching.py) is driven one call at a time: `allocate` as a storage is born,
`free` as it dies. When the model finds no room even after it has freed its cache and
retried (as `DeviceCachingAllocator::malloc` does), `allocate` raises
`torch.cuda.OutOfMemoryError` with PyTorch's own wording.

On the CPU (`cuda=False`) there is no cache: c10's CPU allocator hands each storage its own
bytes and takes them back on free, so allocated and reserved are one figure.

Beside what `torch.cuda` reports (peaks the script may reset), the run keeps its own
figures: each window's peaks (a window ends at each optimizer step, steps.py) and the run's.
With `history`, it also records each allocation, free and segment with the script's stack
(history.py), as `torch.cuda.memory._record_memory_history()` does, for a snapshot.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from dataclasses import dataclass

import torch

from generator.allocator.blocks import allocation_size, round_size
from generator.allocator.caching import CachingAllocator
from generator.simulate.history import History
from generator.units import format_bytes


@dataclass(frozen=True)
class Peaks:
    """The largest figures of a stretch of the run, in bytes."""

    tensor_bytes: int
    """Live storages' own bytes (what the tensors asked for)."""
    allocated_bytes: int
    """The allocator's blocks (rounded, and the cuBLAS workspaces): max_memory_allocated."""
    reserved_bytes: int
    """What the allocator holds from the device: max_memory_reserved."""


def _figures(peaks: Peaks) -> tuple[int, int, int]:
    return peaks.tensor_bytes, peaks.allocated_bytes, peaks.reserved_bytes


class DeviceMemory:
    """One device's allocator, driven online. capacity: what the allocator may take from
    the device (None: no limit); cuda: the caching allocator's rules, else the CPU's;
    history: record what the allocator does (GPU only: the CPU's has no snapshot)."""

    def __init__(self, *, cuda: bool = True, capacity: int | None = None,
                 history: bool = False) -> None:
        self.cuda, self.capacity = cuda, capacity
        self._device_capacity = capacity  # what the device itself leaves the allocator
        self.allocator = CachingAllocator(capacity=capacity) if cuda else None
        self.lock = threading.RLock()  # frees fire from the garbage collector and autograd
        self.history: History | None = None
        if history and cuda:
            self.record_history()
        self._bytes: dict[Hashable, tuple[int, bool]] = {}  # live key → (bytes, a tensor's?)
        self.tensor_bytes = 0
        self._cpu_bytes = 0  # the CPU's allocated (= reserved) bytes
        self._cpu_peak = 0  # and their peak since reset_peak_stats
        self.window = Peaks(0, 0, 0)
        self.run = Peaks(0, 0, 0)
        self.refused: Peaks | None = None
        """The figures an allocation refused for want of memory would have reached."""
        self.out_of_memory: str | None = None
        """The first out-of-memory error's message."""
        self.ooms = 0
        """How many allocations were refused (torch.cuda.memory_stats' num_ooms)."""

    # -- what torch.cuda reports ---------------------------------------------------------------
    @property
    def allocated_bytes(self) -> int:
        return self.allocator.allocated_bytes if self.cuda else self._cpu_bytes

    @property
    def reserved_bytes(self) -> int:
        return self.allocator.reserved_bytes if self.cuda else self._cpu_bytes

    @property
    def peak_allocated_bytes(self) -> int:
        return self.allocator.peak_allocated_bytes if self.cuda else self._cpu_peak

    @property
    def peak_reserved_bytes(self) -> int:
        return self.allocator.peak_reserved_bytes if self.cuda else self._cpu_peak

    def reset_peak_stats(self) -> None:
        """torch.cuda.reset_peak_memory_stats: the script's peaks, not the run's."""
        with self.lock:
            if self.cuda:
                self.allocator.reset_peak_stats()
            self._cpu_peak = self._cpu_bytes

    def limit(self, nbytes: int) -> None:
        """torch.cuda.set_per_process_memory_fraction: from now the allocator holds no more
        than `nbytes` (PyTorch's allowed_memory_maximum, which caps the reserved bytes), nor
        more than the device leaves it."""
        with self.lock:
            device = self._device_capacity
            self.capacity = nbytes if device is None else min(device, nbytes)
            self.allocator.capacity = self.capacity

    def empty_cache(self) -> None:
        with self.lock:
            if self.cuda:
                self.allocator.empty_cache()

    # -- allocations ---------------------------------------------------------------------------
    def allocate(self, key: Hashable, nbytes: int, *, tensor: bool = True) -> None:
        """A storage of `nbytes` is born (not a tensor's: a workspace or a kernel's
        buffer); torch.cuda.OutOfMemoryError if it cannot be."""
        with self.lock:
            if self.cuda and not self.allocator.allocate(key, nbytes):
                self.allocator.out_of_memory = None  # the script may catch it and go on
                message = self._out_of_memory(nbytes)
                self._refused(nbytes, message)
                if self.history is not None:
                    self.history.out_of_memory(nbytes, self._device_free())
                raise torch.cuda.OutOfMemoryError(message)
            if not self.cuda:
                self._cpu_bytes += nbytes
                self._cpu_peak = max(self._cpu_peak, self._cpu_bytes)
            elif self.history is not None and nbytes:
                self.history.allocated(key, self.allocator.block(key).addr, nbytes)
            self._bytes[key] = (nbytes, tensor)
            self.tensor_bytes += nbytes if tensor else 0
            self._note_peaks()

    def free(self, key: Hashable) -> None:
        with self.lock:
            entry = self._bytes.pop(key, None)
            if entry is None:  # not allocated here (it failed, or the run had ended)
                return
            nbytes, tensor = entry
            self.tensor_bytes -= nbytes if tensor else 0
            if self.cuda:
                if self.history is not None and nbytes:
                    self.history.freed(key, self.allocator.block(key).addr, nbytes)
                self.allocator.free(key)
            else:
                self._cpu_bytes -= nbytes

    def record_history(self) -> History:
        """Record from now on, if not yet (GPU only); the history."""
        with self.lock:
            if self.history is None:
                self.history = History()
                self.allocator.on_segment = self.history.segment
            return self.history

    def live(self) -> dict[Hashable, int]:
        """The bytes each live allocation asked for, by key."""
        with self.lock:
            return {key: nbytes for key, (nbytes, _tensor) in self._bytes.items()}

    def _device_free(self) -> int:
        """What the device has left for the allocator (an OOM entry's device_free)."""
        if self.capacity is None:
            return 0
        return max(0, self.capacity - self.reserved_bytes)

    def end_window(self) -> Peaks:
        """The peaks since the last window ended (an optimizer step); a new window begins
        with what is held now."""
        with self.lock:
            ended = self.window
            self.window = Peaks(self.tensor_bytes, self.allocated_bytes, self.reserved_bytes)
            return ended

    def _note_peaks(self) -> None:
        now = (self.tensor_bytes, self.allocated_bytes, self.reserved_bytes)
        self.window = Peaks(*map(max, zip(now, _figures(self.window))))
        self.run = Peaks(*map(max, zip(now, _figures(self.run))))

    def _refused(self, nbytes: int, message: str) -> None:
        """Keep what the refused allocation would have taken the figures to (the first
        refusal's message with them): the run's verdict judges the memory it asked for."""
        size = round_size(nbytes)
        asked = Peaks(self.tensor_bytes + nbytes, self.allocated_bytes + size,
                      self.reserved_bytes + allocation_size(size))
        self.ooms += 1
        if self.refused is None:
            self.out_of_memory = message
        self.refused = asked if self.refused is None else Peaks(
            *map(max, zip(_figures(asked), _figures(self.refused))))

    def _out_of_memory(self, nbytes: int) -> str:
        """PyTorch's message (c10/cuda/CUDACachingAllocator.cpp), with the simulation's
        figures."""
        total = "unlimited" if self.capacity is None else format_bytes(self.capacity)
        return (f"CUDA out of memory. Tried to allocate {format_bytes(nbytes)}. GPU 0 has "
                f"{total} that the allocator may take. Of the allocated memory "
                f"{format_bytes(self.allocated_bytes)} is allocated by PyTorch, and "
                f"{format_bytes(self.reserved_bytes - self.allocated_bytes)} is reserved by "
                "PyTorch but unallocated. (simulated GPU)")
