"""Predict `torch.cuda.max_memory_reserved()` by replaying allocations through a model of
PyTorch's CUDA caching allocator.

Why: the tracker sees tensors (bytes requested), but what a GPU reports as reserved, and what
decides an out-of-memory error, is what the caching allocator holds: requests rounded up and
packed into segments it got from cudaMalloc and keeps until `empty_cache()`. This replays one
stream's alloc/free events through the allocator's rules, so a CPU-only run can predict it.

Source: `c10/cuda/CUDACachingAllocator.cpp`, class `DeviceCachingAllocator` (`malloc`,
`get_free_block`, `should_split`, `alloc_found_block`, `alloc_block`, `free_block`,
`try_merge_blocks`, `release_available_cached_blocks`, `release_cached_blocks`,
`release_blocks`, and for expandable segments `find_expandable_block`, `map_block`,
`try_allocate_expandable_block`, `unmap_block`). The v2.13.0 tag of that file was not in
reach; we followed the newest whole copy found (it reads `large_segment_size()`,
`max_non_split_rounding_size()` and `per_process_memory_fraction`, so 2.9 or later, but it
lacks the `throw_on_cudamalloc_oom` check that 2.13's headers declare, so it predates 2.13
a little) and checked every constant and default against the headers of the installed
torch 2.13.0 (`c10/core/AllocatorConfig.h`, `c10/cuda/CUDAAllocatorConfig.h`). What 2.13
adds there is off by default. A newer snapshot adds reserve sizes for expandable segments.

Modelled, with the default configuration unless a parameter says otherwise:
- `round_size` (512-byte multiples; `roundup_power2_divisions` in its one-number form),
  the small (<= 1 MiB) and large pools, `get_allocation_size` (2 MiB, 20 MiB, or rounded to
  2 MiB from 10 MiB up), best fit ordered by (size, address), splitting, merging on free;
- `allocated_bytes` counts block sizes after the split decision, as `alloc_found_block`
  does: a 19 MiB request in a 20 MiB segment is not split and counts 20 MiB;
- `max_split_size` and `max_non_split_rounding_size` (default 20 MiB) in `get_free_block`,
  `should_split` and `release_available_cached_blocks`;
- `capacity`: cudaMalloc (or page mapping) fails past it; then, as `malloc` does, release
  oversize cached blocks, then every whole free segment, retry, and else report OOM;
- `expandable_segments`: one growing segment per pool (and stream), whose pages (2 MiB
  small, 20 MiB large) are mapped at the lowest address with room and unmapped by
  `empty_cache`; its address space is 1 1/8 of `capacity` (of the GPU in PyTorch), or
  64 TiB without one, which only matters once a free block is larger than what is left.
Not modelled: other streams and `record_stream` (events delay reuse), CUDA graph and
`MemPool` private pools, `set_per_process_memory_fraction` and with it
`garbage_collection_threshold`, free-memory callbacks, the 'oversize', 'inactive_split' and
'requested' statistics, and real cudaMalloc addresses (segments get increasing addresses,
which break ties between equal sizes and place blocks in a snapshot: `segment_blocks`). Nor what it is not told: memory outside the
allocator (CUDA context, NCCL's own buffers), and blocks that kernels take from it for no
tensor (cuBLAS and cuDNN workspaces), which count in reserved and allocated on a GPU but
only appear here if given as events.

The sizes, pools and blocks are in blocks.py, expandable segments in
expandable.py; this module holds the allocator's default rules and its API.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass

from generator.allocator.blocks import (
    LARGE_SEGMENT_SIZE,
    MIN_BLOCK_SIZE,
    SMALL_SIZE,
    Block,
    Pool,
    allocation_size,
    round_size,
    try_merge_blocks,
)
from generator.allocator.expandable import (
    expandable_size,
    try_allocate_expandable_block,
    unmap_block,
)


@dataclass(frozen=True)
class AllocatorReport:
    peak_reserved_bytes: int  # torch.cuda.max_memory_reserved()
    peak_allocated_bytes: int  # max_memory_allocated(): block sizes, not requests
    reserved_bytes: int  # at the end (or at the out-of-memory error)
    allocated_bytes: int
    segments: int  # cudaMalloc segments held, or expandable segments
    segment_allocations: int  # cudaMalloc calls, or page mappings (num_device_alloc)
    out_of_memory: str | None  # what failed, when an allocation did


class CachingAllocator:
    """One device's `DeviceCachingAllocator`, one stream. `allocate` returns False on an
    out-of-memory error, which is a result (kept in `out_of_memory`), not an exception."""

    def __init__(self, *, capacity: int | None = None, expandable_segments: bool = False,
                 max_split_size: int | None = None,
                 max_non_split_rounding_size: int = LARGE_SEGMENT_SIZE,
                 roundup_power2_divisions: int = 0) -> None:
        if max_split_size is not None and max_split_size < LARGE_SEGMENT_SIZE:
            raise ValueError("max_split_size must be at least 20 MiB (parseMaxSplitSize)")
        if roundup_power2_divisions & (roundup_power2_divisions - 1):
            raise ValueError("roundup_power2_divisions must be 0 or a power of two")
        self.capacity, self.expandable = capacity, expandable_segments
        self.max_split, self.max_non_split_rounding = max_split_size, max_non_split_rounding_size
        self.divisions = roundup_power2_divisions
        self.small, self.large = Pool(small=True), Pool(small=False)
        self._live: dict[Hashable, Block | None] = {}
        self._next_address = 1 << 32
        self.allocated_bytes = self.reserved_bytes = 0
        self.peak_allocated_bytes = self.peak_reserved_bytes = 0
        self.segments = self.segment_allocations = 0
        self.out_of_memory: str | None = None
        self.segment_sizes: dict[int, int] = {}
        """The cudaMalloc segments held, address → size (not expandable segments)."""
        self.on_segment: Callable[[str, int, int], None] | None = None
        """Told ("segment_alloc" | "segment_free", address, size) as a segment is got or
        given back (cudaMalloc, cudaFree): what `_record_memory_history` traces."""

    def allocate(self, key: Hashable, nbytes: int) -> bool:
        """`malloc`: a cached block, else a new segment, else free cached segments and
        retry. Zero bytes never reach `malloc` (`NativeCachingAllocator::allocate`)."""
        if key in self._live or nbytes < 0:
            raise ValueError(f"bad allocation {key!r} of {nbytes} bytes")
        if nbytes == 0:
            self._live[key] = None
            return True
        size = round_size(nbytes, self.divisions)
        pool = self.small if size <= SMALL_SIZE else self.large
        alloc_size = allocation_size(size)
        block = self._get_free_block(pool, size) or self._alloc_block(pool, size, alloc_size)
        if block is None and self._release_available_cached_blocks(pool, size):
            block = self._alloc_block(pool, size, alloc_size)
        if block is None:
            self.empty_cache()
            block = self._alloc_block(pool, size, alloc_size)
        if block is None:
            self.out_of_memory = (
                f"out of memory: tried to allocate {alloc_size} B (request {nbytes} B, "
                f"rounded {size} B, {'small' if pool.small else 'large'} pool) with "
                f"{self.allocated_bytes} B allocated, {self.reserved_bytes} B reserved, "
                f"capacity {self.capacity} B")
            return False
        self._live[key] = self._alloc_found_block(pool, block, size)
        return True

    def free(self, key: Hashable) -> None:
        """`free` and `free_block`: back to its pool, merged with free neighbours."""
        if key not in self._live:
            raise ValueError(f"free of {key!r}, which is not live")
        block = self._live.pop(key)
        if block is None:
            return
        block.allocated = False
        self.allocated_bytes -= block.size
        try_merge_blocks(block, block.prev)
        try_merge_blocks(block, block.next)
        block.pool.insert(block)

    def empty_cache(self) -> None:
        """`release_cached_blocks` / `release_blocks`: cudaFree every whole free segment;
        with expandable segments, unmap every free whole page and drop empty segments."""
        for pool in (self.large, self.small):
            to_unmap = []
            for key in list(pool.keys):
                block = pool.blocks[key]
                if block.segment is not None:
                    to_unmap.append(block)
                elif not block.is_split():
                    self._release_block(block)
            for block in to_unmap:
                unmap_block(self, block)
                if not block.mapped and not block.is_split():  # release_expandable_segment
                    del pool.unmapped[block.addr]
                    self.segments -= 1

    def block(self, key: Hashable) -> Block | None:
        """The block a live allocation holds (None for zero bytes)."""
        return self._live[key]

    def segment_blocks(self) -> list[tuple[int, int, list[Block]]]:
        """Each cudaMalloc segment held, by address: (address, size, its blocks in address
        order, allocated and free), as `torch.cuda.memory._snapshot()` lists them."""
        if self.expandable:
            raise ValueError("segment_blocks lists cudaMalloc segments, not expandable ones")
        blocks = [b for b in self._live.values() if b is not None]
        blocks += [*self.small.blocks.values(), *self.large.blocks.values()]
        blocks.sort(key=lambda b: b.addr)
        found, index = [], 0
        for address in sorted(self.segment_sizes):
            size, inside = self.segment_sizes[address], []
            while index < len(blocks) and blocks[index].addr < address + size:
                inside.append(blocks[index])
                index += 1
            found.append((address, size, inside))
        return found

    def reset_peak_stats(self) -> None:
        """`resetPeakStats` (torch.cuda.reset_peak_memory_stats): the peaks start again
        from what is allocated and reserved now."""
        self.peak_allocated_bytes, self.peak_reserved_bytes = (self.allocated_bytes,
                                                               self.reserved_bytes)

    def report(self) -> AllocatorReport:
        return AllocatorReport(self.peak_reserved_bytes, self.peak_allocated_bytes,
                               self.reserved_bytes, self.allocated_bytes, self.segments,
                               self.segment_allocations, self.out_of_memory)

    def _get_free_block(self, pool: Pool, size: int) -> Block | None:
        """`get_free_block`: best fit, the first block in (size, address) order >= size."""
        index = bisect.bisect_left(pool.keys, size << 64)
        if index == len(pool.keys):
            return None
        block = pool.at(index)
        # With expandable segments a block counts the unmapped space after it too, so a
        # free end of the segment is passed over for the next block if that one is smaller.
        while (self.expandable and index + 1 < len(pool.keys)
               and expandable_size(pool.at(index + 1)) < expandable_size(block)):
            index += 1
            block = pool.at(index)
        if self.max_split is not None:
            if size < self.max_split and block.size >= self.max_split:
                return None  # an oversize block is not split for a smaller request
            if size >= self.max_split and block.size >= size + self.max_non_split_rounding:
                return None  # nor handed out whole when too much larger
        pool.remove(block)
        return block

    def _alloc_found_block(self, pool: Pool, block: Block, size: int) -> Block:
        """`should_split` then `alloc_found_block`. Outside expandable segments, large
        blocks split only when over 1 MiB would be left: smaller slivers stay with the
        request (and count as allocated), so they do not fragment the pool."""
        remaining = block.size - size
        if pool.small or self.expandable:
            split = remaining >= MIN_BLOCK_SIZE
        else:
            split = (self.max_split is None or size < self.max_split) and remaining > SMALL_SIZE
        if split:
            head = Block(block.addr, size, pool, block.segment)
            head.splice(block.prev, block)
            block.addr, block.size = block.addr + size, remaining
            pool.insert(block)
            block = head
        block.allocated = True
        self.allocated_bytes += block.size
        self.peak_allocated_bytes = max(self.peak_allocated_bytes, self.allocated_bytes)
        return block

    def _alloc_block(self, pool: Pool, size: int, alloc_size: int) -> Block | None:
        """`alloc_block`: a new cudaMalloc segment, or with expandable segments more pages."""
        if self.expandable:
            return try_allocate_expandable_block(self, pool, size)
        if self.capacity is not None and self.reserved_bytes + alloc_size > self.capacity:
            return None
        self.segments += 1
        self.segment_allocations += 1
        self.grow_reserved(alloc_size)
        address = self.reserve_addresses(alloc_size)
        self.segment_sizes[address] = alloc_size
        if self.on_segment is not None:
            self.on_segment("segment_alloc", address, alloc_size)
        return Block(address, alloc_size, pool)

    def _release_available_cached_blocks(self, pool: Pool, size: int) -> bool:
        """`release_available_cached_blocks`: with max_split_size set, cudaFree the
        smallest oversize block big enough, or the largest ones until enough is freed.
        These are whole segments: with max_split_size >= 20 MiB no split piece is as large."""
        if self.max_split is None or self.expandable:  # it skips expandable blocks
            return False
        target = max(size, self.max_split)
        index = bisect.bisect_left(pool.keys, target << 64)
        if index < len(pool.keys):
            self._release_block(pool.at(index))
            return True
        released, index = 0, index - 1
        while index >= 0 and released < target and pool.at(index).size >= self.max_split:
            released += pool.at(index).size
            self._release_block(pool.at(index))
            index -= 1
        return released >= target

    def _release_block(self, block: Block) -> None:
        """`release_block`: cudaFree a whole free segment."""
        block.pool.remove(block)
        self.reserved_bytes -= block.size
        self.segments -= 1
        del self.segment_sizes[block.addr]
        if self.on_segment is not None:
            self.on_segment("segment_free", block.addr, block.size)

    def grow_reserved(self, nbytes: int) -> None:
        """Count memory got from the device (a segment or pages) in reserved and its peak."""
        self.reserved_bytes += nbytes
        self.peak_reserved_bytes = max(self.peak_reserved_bytes, self.reserved_bytes)

    def reserve_addresses(self, nbytes: int) -> int:
        """Made-up increasing addresses for a new segment; they only break ties."""
        address, self._next_address = self._next_address, self._next_address + nbytes
        return address


def simulate(events: Iterable[tuple], *, capacity: int | None = None,
             expandable_segments: bool = False, max_split_size: int | None = None,
             roundup_power2_divisions: int = 0) -> AllocatorReport:
    """Replay `("alloc", key, nbytes)`, `("free", key)` and `("empty_cache",)` events of one
    stream; stop at the first out-of-memory error, as the program would."""
    allocator = CachingAllocator(capacity=capacity, expandable_segments=expandable_segments,
                                 max_split_size=max_split_size,
                                 roundup_power2_divisions=roundup_power2_divisions)
    replay(allocator, events)
    return allocator.report()


def replay(allocator: CachingAllocator, events: Iterable[tuple]) -> None:
    """Send the events to `allocator` in order, up to its first out-of-memory error."""
    for event in events:
        if event[0] == "alloc":
            if not allocator.allocate(event[1], event[2]):
                break
        elif event[0] == "free":
            allocator.free(event[1])
        elif event[0] == "empty_cache":
            allocator.empty_cache()
        else:
            raise ValueError(f"unknown allocator event {event!r}")
