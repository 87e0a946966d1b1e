"""The sizes, pools and blocks of the caching allocator model (see caching.py).

Why apart: these are the allocator's data, shared by its default rules (caching.py)
and by expandable segments (expandable.py): the size constants and size rounding of
`c10/cuda/CUDACachingAllocator.cpp` (`round_size`, `get_allocation_size`), its `BlockPool`,
`ExpandableSegment` and `Block`, and `try_merge_blocks`, which both kinds of segment use.
Constants and defaults were checked against the headers of torch 2.13.0.
"""

from __future__ import annotations

import bisect

MIN_BLOCK_SIZE = 512  # kMinBlockSize: every block is a multiple of this
SMALL_SIZE = 1 << 20  # kSmallSize: the largest request the small pool serves
SMALL_BUFFER = 2 << 20  # kSmallBuffer: small segments, and small expandable pages
MIN_LARGE_ALLOC = 10 << 20  # kMinLargeAlloc: smaller large requests share a segment
ROUND_LARGE = 2 << 20  # kRoundLarge: larger requests get a segment rounded to this
LARGE_SEGMENT_SIZE = 20 << 20  # large_segment_size(): shared large segments and pages


def round_size(nbytes: int, roundup_power2_divisions: int = 0) -> int:
    """`round_size`: below 512 B, 512 B; else a multiple of 512 B, or with power-of-two
    divisions the next of `divisions` equal steps between two powers of two."""
    if nbytes < MIN_BLOCK_SIZE:
        return MIN_BLOCK_SIZE
    divisions = roundup_power2_divisions
    if divisions > 1 and nbytes > MIN_BLOCK_SIZE * divisions:
        if nbytes & (nbytes - 1) == 0:  # roundup_power2_next_division
            return nbytes
        floor = 1 << (nbytes.bit_length() - 1)
        step = floor >> (divisions.bit_length() - 1)
        if step == 0:
            return floor << 1
        rounded = nbytes & ~(step - 1)
        return nbytes if rounded == nbytes else rounded + step
    return -(-nbytes // MIN_BLOCK_SIZE) * MIN_BLOCK_SIZE


def allocation_size(size: int) -> int:
    """`get_allocation_size`: the segment cudaMalloc'd for a rounded request no cached
    block fits. Small ones share 2 MiB, 1-10 MiB ones share 20 MiB (fewer cudaMallocs,
    less fragmentation), larger ones get their own, rounded up to 2 MiB."""
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_SEGMENT_SIZE
    return -(-size // ROUND_LARGE) * ROUND_LARGE


class Pool:
    """`BlockPool`: free mapped blocks in `BlockComparatorSize` order (size, then address;
    one stream), as sorted int keys for `bisect`; and unmapped expandable ranges."""

    __slots__ = ("blocks", "keys", "small", "unmapped")

    def __init__(self, small: bool) -> None:
        self.small = small
        self.keys: list[int] = []
        self.blocks: dict[int, Block] = {}
        self.unmapped: dict[int, Block] = {}  # by address

    def insert(self, block: Block) -> None:
        key = (block.size << 64) | block.addr
        bisect.insort(self.keys, key)
        self.blocks[key] = block

    def remove(self, block: Block) -> None:
        key = (block.size << 64) | block.addr
        del self.keys[bisect.bisect_left(self.keys, key)]
        del self.blocks[key]

    def at(self, index: int) -> Block:
        return self.blocks[self.keys[index]]


class Segment:
    """An `ExpandableSegment`: reserved address space, mapped `page` bytes at a time."""

    __slots__ = ("base", "page")

    def __init__(self, base: int, page: int) -> None:
        self.base, self.page = base, page


class Block:
    """`Block`: a range of a segment; `prev`/`next` link the ranges of one segment."""

    __slots__ = ("addr", "allocated", "mapped", "next", "pool", "prev", "segment", "size")

    def __init__(self, addr: int, size: int, pool: Pool, segment: Segment | None = None,
                 mapped: bool = True) -> None:
        self.addr, self.size, self.pool, self.segment = addr, size, pool, segment
        self.mapped, self.allocated = mapped, False
        self.prev: Block | None = None
        self.next: Block | None = None

    def is_split(self) -> bool:
        return self.prev is not None or self.next is not None

    def splice(self, before: Block | None, after: Block | None) -> None:
        """`Block::splice`: put this block between two neighbours."""
        if before is not None:
            before.next = self
        if after is not None:
            after.prev = self
        self.prev, self.next = before, after


def try_merge_blocks(dst: Block, src: Block | None) -> None:
    """`try_merge_blocks`: absorb a free neighbour in the same (mapped) state."""
    if src is None or src.allocated or src.mapped != dst.mapped:
        return
    if src.mapped:
        src.pool.remove(src)
    else:
        del src.pool.unmapped[src.addr]
    if dst.prev is src:
        dst.addr = src.addr
        dst.splice(src.prev, dst.next)
    else:
        dst.splice(dst.prev, src.next)
    dst.size += src.size
