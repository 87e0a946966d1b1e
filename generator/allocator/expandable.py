"""Expandable segments (`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`) in the caching
allocator model: what `CachingAllocator` does instead of cudaMalloc and cudaFree when
`expandable_segments=True`.

Why apart: it is a second way to get and give back memory, with its own geometry: one growing
segment per pool (and stream) whose pages (2 MiB small, 20 MiB large) are mapped at the
lowest address with room and unmapped by `empty_cache`. Source:
`c10/cuda/CUDACachingAllocator.cpp`, `find_expandable_block`, `map_block`,
`try_allocate_expandable_block` and `unmap_block` of `DeviceCachingAllocator`. The
allocator's counters are read and updated through `Reserving`, which it implements.
"""

from __future__ import annotations

from typing import Protocol

from generator.allocator.blocks import (
    LARGE_SEGMENT_SIZE,
    SMALL_BUFFER,
    Block,
    Pool,
    Segment,
    try_merge_blocks,
)

_DEFAULT_DEVICE_TOTAL = 1 << 46  # address space of an expandable segment without capacity


class Reserving(Protocol):
    """What mapping pages needs of the allocator: its capacity and reserved bytes."""

    capacity: int | None
    reserved_bytes: int
    segments: int  # expandable segments held
    segment_allocations: int  # page mappings (num_device_alloc)

    def grow_reserved(self, nbytes: int) -> None: ...

    def reserve_addresses(self, nbytes: int) -> int: ...


def expandable_size(block: Block) -> int:
    """A free block's size with the unmapped space after it, which it can grow into."""
    following = block.next
    return block.size + (following.size if following is not None and not following.mapped
                         else 0)


def try_allocate_expandable_block(allocator: Reserving, pool: Pool, size: int) -> Block | None:
    """`try_allocate_expandable_block`: map pages at the lowest address with room."""
    block = find_expandable_block(allocator, pool, size)
    if not block.mapped and not map_block(allocator, block, min(block.size, size)):
        return None
    while block.size < size:  # free -> unmapped: map the gap, which absorbs block
        gap = block.next
        assert gap is not None
        if not map_block(allocator, gap, min(size - block.size, gap.size)):
            return None
        block = gap
    pool.remove(block)
    return block


def find_expandable_block(allocator: Reserving, pool: Pool, size: int) -> Block:
    """`find_expandable_block`: the lowest unmapped range (with the free block just
    before it) that has room; else a new segment spanning 1 1/8 of the device."""
    for block in sorted(pool.unmapped.values(), key=lambda b: b.addr):
        if block.prev is not None and not block.prev.allocated:
            block = block.prev
        room, cursor = 0, block
        while room < size and cursor is not None and not cursor.allocated:
            room, cursor = room + cursor.size, cursor.next
        if room >= size:
            return block
    page = SMALL_BUFFER if pool.small else LARGE_SEGMENT_SIZE
    total = allocator.capacity if allocator.capacity is not None else _DEFAULT_DEVICE_TOTAL
    span = -(-(total + total // 8) // page) * page
    segment = Segment(allocator.reserve_addresses(span), page)
    block = Block(segment.base, span, pool, segment, mapped=False)
    pool.unmapped[block.addr] = block
    allocator.segments += 1
    return block


def map_block(allocator: Reserving, block: Block, size: int) -> bool:
    """`map_block`: map whole pages from the start of an unmapped range."""
    segment, pool = block.segment, block.pool
    assert segment is not None
    first = (block.addr - segment.base) // segment.page
    mapped = (-(-(block.addr + size - segment.base) // segment.page) - first) * segment.page
    capacity = allocator.capacity
    if capacity is not None and allocator.reserved_bytes + mapped > capacity:
        return False  # cuMemCreate failed: ExpandableSegment::map returns nothing
    del pool.unmapped[block.addr]
    block.mapped = True
    if mapped < block.size:
        rest = Block(block.addr + mapped, block.size - mapped, pool, segment, False)
        rest.splice(block, block.next)
        pool.unmapped[rest.addr] = rest
        block.size = mapped
    try_merge_blocks(block, block.prev)
    try_merge_blocks(block, block.next)
    pool.insert(block)
    allocator.segment_allocations += 1
    allocator.grow_reserved(mapped)
    return True


def unmap_block(allocator: Reserving, block: Block) -> None:
    """`unmap_block`: give back the whole pages inside a free block."""
    segment, pool = block.segment, block.pool
    assert segment is not None
    first = -(-(block.addr - segment.base) // segment.page)
    last = (block.addr + block.size - segment.base) // segment.page
    if first >= last:
        return
    pool.remove(block)
    start, length = segment.base + first * segment.page, (last - first) * segment.page
    end = block.addr + block.size
    if start > block.addr:
        before = Block(block.addr, start - block.addr, pool, segment)
        before.splice(block.prev, block)
        pool.insert(before)
    if end > start + length:
        after = Block(start + length, end - start - length, pool, segment)
        after.splice(block, block.next)
        pool.insert(after)
    block.addr, block.size, block.mapped = start, length, False
    try_merge_blocks(block, block.prev)
    try_merge_blocks(block, block.next)
    pool.unmapped[block.addr] = block
    allocator.reserved_bytes -= length
