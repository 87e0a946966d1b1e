"""The model of PyTorch's CUDA caching allocator: hand-worked cases, one rule each, and a
long random replay checked against invariants."""

from __future__ import annotations

import random

import pytest

from generator.allocator.blocks import allocation_size, round_size
from generator.allocator.caching import CachingAllocator, simulate

KiB, MiB = 1 << 10, 1 << 20


def allocs(*sizes):
    return [("alloc", i, size) for i, size in enumerate(sizes)]


def test_requests_round_to_512_bytes_and_pick_a_segment_size():
    assert round_size(100) == 512  # below kMinBlockSize
    assert round_size(512) == 512
    assert round_size(513) == 1024
    assert round_size(5 * MiB + 1) == 5 * MiB + 512
    # roundup_power2_divisions:4 — between 4 and 8 MiB the steps are 1 MiB apart.
    assert round_size(5 * MiB + 1, 4) == 6 * MiB
    assert round_size(4 * MiB, 4) == 4 * MiB  # a power of two stays
    assert round_size(3000, 4) == 3072  # 2048..4096 in 512 B steps
    assert round_size(1000, 4) == 1024  # not above 4 * 512 B: plain 512 B rounding
    assert allocation_size(1 * MiB) == 2 * MiB  # still the small pool
    assert allocation_size(1 * MiB + 512) == 20 * MiB
    assert allocation_size(10 * MiB - 512) == 20 * MiB  # below kMinLargeAlloc
    assert allocation_size(10 * MiB) == 10 * MiB  # from there: rounded to 2 MiB
    assert allocation_size(25 * MiB) == 26 * MiB


def test_a_tiny_request_reserves_a_2_mib_small_segment():
    # 100 B rounds to 512 B (allocated); the small pool cudaMallocs 2 MiB (reserved).
    report = simulate(allocs(100))
    assert (report.reserved_bytes, report.allocated_bytes) == (2 * MiB, 512)
    assert (report.segments, report.peak_allocated_bytes) == (1, 512)


def test_the_pool_boundary_is_1_mib():
    # 1 MiB is still small (2 MiB segment); 1 MiB + 1 B rounds to 1 MiB + 512 B: large.
    assert simulate(allocs(1 * MiB)).reserved_bytes == 2 * MiB
    assert simulate(allocs(1 * MiB + 1)).reserved_bytes == 20 * MiB


def test_a_5_mib_request_reserves_20_mib():
    report = simulate(allocs(5 * MiB))
    assert (report.reserved_bytes, report.allocated_bytes) == (20 * MiB, 5 * MiB)


def test_5_and_6_mib_share_one_20_mib_segment():
    # 5 MiB splits the new 20 MiB segment (15 MiB left > 1 MiB); 6 MiB best-fits into the
    # 15 MiB block and splits it again (9 MiB left). One cudaMalloc.
    report = simulate(allocs(5 * MiB, 6 * MiB))
    assert (report.reserved_bytes, report.allocated_bytes) == (20 * MiB, 11 * MiB)
    assert (report.segments, report.segment_allocations) == (1, 1)


def test_a_25_mib_request_gets_its_own_26_mib_segment():
    # From 10 MiB up the segment is the request rounded up to 2 MiB. The 1 MiB left is
    # not split off (not > 1 MiB), so the block, and allocated_bytes, is 26 MiB too.
    report = simulate(allocs(25 * MiB))
    assert (report.reserved_bytes, report.allocated_bytes) == (26 * MiB, 26 * MiB)
    report = simulate(allocs(24 * MiB + 1))  # 24 MiB + 512 B: 1.5 MiB left, split off
    assert (report.reserved_bytes, report.allocated_bytes) == (26 * MiB, 24 * MiB + 512)


def test_a_freed_block_is_reused_without_a_new_segment():
    # The freed 5 MiB merges back into the whole 20 MiB block, which the second 5 MiB
    # request splits again. Nothing goes back to the driver, so reserved stays 20 MiB.
    report = simulate([("alloc", "a", 5 * MiB), ("free", "a"), ("alloc", "b", 5 * MiB)])
    assert (report.reserved_bytes, report.segment_allocations) == (20 * MiB, 1)
    assert report.peak_allocated_bytes == 5 * MiB


def test_freeing_keeps_the_segment_reserved():
    report = simulate([("alloc", "a", 5 * MiB), ("free", "a")])
    assert (report.reserved_bytes, report.allocated_bytes) == (20 * MiB, 0)


def test_adjacent_free_blocks_merge_so_a_larger_request_fits():
    # Three 6 MiB blocks fill one 20 MiB segment: [a 6][b 6][c 6][2 free]. Freeing a and b
    # merges them into one 12 MiB block; 10 MiB fits there (2 MiB left > 1 MiB: split).
    events = allocs(6 * MiB, 6 * MiB, 6 * MiB) + [("free", 0), ("free", 1),
                                                  ("alloc", 3, 10 * MiB)]
    report = simulate(events)
    assert (report.reserved_bytes, report.segment_allocations) == (20 * MiB, 1)
    assert report.allocated_bytes == 16 * MiB


def test_a_large_block_is_not_split_for_1_mib_or_less():
    # 19 MiB gets a 20 MiB segment; the 1 MiB left is not > kSmallSize, so the whole
    # block is handed out and counted: allocated 20 MiB. A 1.5 MiB request then needs a
    # second segment.
    report = simulate(allocs(19 * MiB, 3 * MiB // 2))
    assert report.peak_allocated_bytes == 20 * MiB + 3 * MiB // 2
    assert report.reserved_bytes == 40 * MiB
    # 18.5 MiB leaves 1.5 MiB, which is split off and exactly fits the 1.5 MiB request.
    report = simulate(allocs(37 * MiB // 2, 3 * MiB // 2))
    assert (report.reserved_bytes, report.allocated_bytes) == (20 * MiB, 20 * MiB)


def test_the_small_pool_splits_down_to_512_bytes():
    # A 2 MiB segment: 1 MiB, then 1 MiB - 512 B (leaves 512 B, still split), then 512 B
    # fill it exactly. The next 512 B needs a second segment.
    report = simulate(allocs(1 * MiB, 1 * MiB - 512, 512))
    assert (report.reserved_bytes, report.allocated_bytes) == (2 * MiB, 2 * MiB)
    assert simulate(allocs(1 * MiB, 1 * MiB - 512, 512, 1)).reserved_bytes == 4 * MiB


def test_best_fit_takes_the_smallest_block_that_fits():
    # Segments of 16 MiB (lower address) and 12 MiB, both freed. 11 MiB best-fits the
    # 12 MiB block (1 MiB left: not split, 12 MiB counted), where first fit would split
    # 11 off the 16 MiB block. 15 MiB then takes the 16 MiB block whole.
    events = allocs(16 * MiB, 12 * MiB) + [("free", 0), ("free", 1), ("alloc", "x", 11 * MiB)]
    assert simulate(events).allocated_bytes == 12 * MiB
    report = simulate(events + [("alloc", "y", 15 * MiB)])
    assert (report.allocated_bytes, report.reserved_bytes) == (28 * MiB, 28 * MiB)
    assert report.segment_allocations == 2


def test_empty_cache_releases_only_whole_free_segments():
    # a: its own 12 MiB segment; b and c share a 20 MiB one. With a and b freed, only a's
    # segment is whole and free; c keeps the 20 MiB segment.
    events = allocs(12 * MiB, 5 * MiB, 6 * MiB) + [("free", 0), ("free", 1), ("empty_cache",)]
    report = simulate(events)
    assert (report.reserved_bytes, report.segments) == (20 * MiB, 1)
    assert report.peak_reserved_bytes == 32 * MiB
    report = simulate(events + [("free", 2), ("empty_cache",)])
    assert (report.reserved_bytes, report.segments) == (0, 0)


def test_capacity_releases_cached_segments_and_retries():
    # 12 MiB is cached; 16 MiB would make 28 MiB > 25 MiB, so the cudaMalloc fails, the
    # free 12 MiB segment is released, and the retry succeeds.
    events = [("alloc", "a", 12 * MiB), ("free", "a"), ("alloc", "b", 16 * MiB)]
    report = simulate(events, capacity=25 * MiB)
    assert report.out_of_memory is None
    assert (report.reserved_bytes, report.peak_reserved_bytes) == (16 * MiB, 16 * MiB)
    assert report.segment_allocations == 2


def test_capacity_reports_out_of_memory_and_stops_the_replay():
    # With a still live nothing can be released: 12 + 16 MiB > 25 MiB is an OOM. The replay
    # stops there, so the later events (one would be an error) are never replayed.
    events = [("alloc", "a", 12 * MiB), ("alloc", "b", 16 * MiB), ("alloc", "c", 1 * MiB),
              ("free", "never allocated")]
    report = simulate(events, capacity=25 * MiB)
    assert report.out_of_memory is not None
    assert f"allocate {16 * MiB} B" in report.out_of_memory
    assert (report.allocated_bytes, report.reserved_bytes) == (12 * MiB, 12 * MiB)


def test_zero_byte_allocations_take_nothing():
    report = simulate([("alloc", "a", 0), ("free", "a")])
    assert (report.peak_reserved_bytes, report.segment_allocations) == (0, 0)


@pytest.mark.parametrize("events", [
    [("alloc", "a", 1), ("alloc", "a", 1)],
    [("free", "a")],
    [("realloc", "a", 1)],
])
def test_malformed_events_are_errors(events):
    with pytest.raises(ValueError):
        simulate(events)


def test_max_split_size_keeps_oversize_blocks_from_smaller_requests():
    # max_split_size 30 MiB: the cached 40 MiB block is oversize, so 12 MiB may not split
    # it and gets a 12 MiB segment of its own. By default it would split the 40 MiB block.
    events = [("alloc", "a", 40 * MiB), ("free", "a"), ("alloc", "b", 12 * MiB)]
    assert simulate(events, max_split_size=30 * MiB).reserved_bytes == 52 * MiB
    assert simulate(events).reserved_bytes == 40 * MiB


def test_max_split_size_hands_out_oversize_blocks_only_within_20_mib():
    # A cached 60 MiB block serves 45 MiB whole (60 < 45 + 20), counting 60 MiB, but not
    # 35 MiB (60 >= 35 + 20), which gets a 36 MiB segment.
    cached = [("alloc", "a", 60 * MiB), ("free", "a")]
    report = simulate(cached + [("alloc", "b", 45 * MiB)], max_split_size=30 * MiB)
    assert (report.reserved_bytes, report.allocated_bytes) == (60 * MiB, 60 * MiB)
    report = simulate(cached + [("alloc", "b", 35 * MiB)], max_split_size=30 * MiB)
    assert report.reserved_bytes == 96 * MiB


def test_max_split_size_releases_one_oversize_block_when_cudamalloc_fails():
    # 40 and 50 MiB cached, capacity 100 MiB: a 12 MiB segment would make 102 MiB. The
    # smallest cached block of at least max_split_size (40 MiB) is released, not all.
    events = allocs(40 * MiB, 50 * MiB) + [("free", 0), ("free", 1), ("alloc", 2, 12 * MiB)]
    report = simulate(events, capacity=100 * MiB, max_split_size=30 * MiB)
    assert (report.reserved_bytes, report.segments) == (62 * MiB, 2)


def test_expandable_segments_map_20_mib_pages_for_large_requests():
    # 25 MiB maps two 20 MiB pages (40 MiB, where cudaMalloc would take 26 MiB); 10 MiB
    # then fits in the 15 MiB left, so nothing more is mapped.
    report = simulate(allocs(25 * MiB, 10 * MiB), expandable_segments=True)
    assert (report.reserved_bytes, report.segments, report.segment_allocations) == (
        40 * MiB, 1, 1)
    assert simulate(allocs(100), expandable_segments=True).reserved_bytes == 2 * MiB
    # should_split: in expandable segments any remainder of 512 B or more is split off, so
    # 19 MiB counts 19 MiB (a cudaMalloc'd 20 MiB segment would hand out all 20 MiB).
    assert simulate(allocs(19 * MiB), expandable_segments=True).allocated_bytes == 19 * MiB


def test_expandable_segments_grow_one_segment():
    # 5 and 6 MiB fill [0, 11) of a first 20 MiB page; 12 MiB does not fit the 9 MiB left,
    # so a second page is mapped after it and the 29 MiB free block takes it: one segment
    # of 40 MiB, where cudaMalloc would have made a second, 12 MiB, segment.
    events = allocs(5 * MiB, 6 * MiB, 12 * MiB)
    report = simulate(events, expandable_segments=True)
    assert (report.reserved_bytes, report.segments, report.segment_allocations) == (
        40 * MiB, 1, 2)
    report = simulate(events)
    assert (report.reserved_bytes, report.segments) == (32 * MiB, 2)


def test_expandable_empty_cache_unmaps_free_pages_and_refills_the_gap_first():
    # Pages are 20 MiB (MiB offsets in the segment). a=[0,5); b=40 MiB maps pages 1-2,
    # b=[5,45); c=[45,57). Freeing b and emptying the cache unmaps page 1 = [20,40), the
    # only whole page inside [5,45): reserved 60 -> 40 MiB. d=18 MiB fits no free block
    # (15, 5 and 3 MiB), so page 1 is mapped again, the lowest place with room, merging
    # [5,45) back: d=[5,23). e=20 MiB then fits [23,45): no new page.
    events = allocs(5 * MiB, 40 * MiB, 12 * MiB) + [("free", 1), ("empty_cache",)]
    report = simulate(events, expandable_segments=True)
    assert (report.reserved_bytes, report.peak_reserved_bytes) == (40 * MiB, 60 * MiB)
    events += [("alloc", "d", 18 * MiB), ("alloc", "e", 20 * MiB)]
    report = simulate(events, expandable_segments=True)
    assert (report.reserved_bytes, report.segment_allocations) == (60 * MiB, 3)
    assert report.allocated_bytes == 55 * MiB


def test_expandable_best_fit_passes_over_the_growable_end():
    # a=[0,8) and b=[8,20) fill page 0; d=[20,34) maps page 1, leaving X=[34,40) free at
    # the growable end. Freeing a leaves Y=[0,8). For 5 MiB, X (6 MiB) comes first by size,
    # but counted with the unmapped space after it, it is larger than Y (8 MiB), so 5 MiB
    # goes to Y. Then 7 MiB fits neither X nor Y's 3 MiB rest: X grows by a page.
    events = allocs(8 * MiB, 12 * MiB, 14 * MiB) + [("free", 0), ("alloc", "e", 5 * MiB),
                                                    ("alloc", "f", 7 * MiB)]
    assert simulate(events, expandable_segments=True).reserved_bytes == 60 * MiB


def test_expandable_pages_can_run_out_where_a_segment_would_not():
    # 25 MiB needs two 20 MiB pages (40 MiB > 30 MiB) but a 26 MiB cudaMalloc fits.
    report = simulate(allocs(25 * MiB), capacity=30 * MiB, expandable_segments=True)
    assert report.out_of_memory is not None and report.reserved_bytes == 0
    report = simulate(allocs(25 * MiB), capacity=30 * MiB)
    assert (report.out_of_memory, report.reserved_bytes) == (None, 26 * MiB)


def _random_size(rng: random.Random) -> int:
    kind = rng.random()
    if kind < 0.6:
        return rng.randrange(1, 1 * MiB + 1)  # small pool
    if kind < 0.9:
        return rng.randrange(1 * MiB, 10 * MiB)  # shared 20 MiB segments
    return rng.randrange(10 * MiB, 64 * MiB)  # own segments


@pytest.mark.parametrize("expandable, steps", [(False, 200_000), (True, 200_000)])
def test_a_long_random_replay_keeps_the_invariants(expandable, steps):
    rng = random.Random(1234)
    allocator = CachingAllocator(expandable_segments=expandable)
    live: list[tuple[int, int]] = []  # (key, rounded request)
    requested = reserved = 0
    for step in range(steps):
        if live and (len(live) > 300 or rng.random() < 0.5):
            index = rng.randrange(len(live))  # free a random live allocation
            live[index], live[-1] = live[-1], live[index]
            key, size = live.pop()
            allocator.free(key)
            requested -= size
            assert allocator.reserved_bytes == reserved  # a free never returns memory
        else:
            nbytes = _random_size(rng)
            assert allocator.allocate(step, nbytes)
            live.append((step, round_size(nbytes)))
            requested += round_size(nbytes)
            assert allocator.reserved_bytes >= reserved
        reserved = allocator.reserved_bytes
        # Blocks are never smaller than their rounded requests; segments hold the blocks.
        assert allocator.reserved_bytes >= allocator.allocated_bytes >= requested
        if step % 20_000 == 0:  # every reserved byte is allocated or in a free list
            cached = sum(b.size for pool in (allocator.small, allocator.large)
                         for b in pool.blocks.values())
            assert allocator.reserved_bytes == allocator.allocated_bytes + cached
    for key, _ in live:
        allocator.free(key)
    report = allocator.report()
    assert (report.allocated_bytes, report.reserved_bytes) == (0, reserved)
    assert report.peak_reserved_bytes >= report.peak_allocated_bytes > 0
    allocator.empty_cache()
    assert (allocator.reserved_bytes, allocator.segments) == (0, 0)
