"""A real CPU step as the CPU allocator saw it, each of its blocks labelled by the tracker.

The tracker (a TorchDispatchMode) sees the tensors ops return; the allocator also hands out
memory that kernels use inside themselves and free before returning (oneDNN's scratchpads
and reordered weights, ATen's internal copies: see onednn_lstm.py). On a real run of an
LSTM those buffers were an eighth of the allocator's peak, which falls inside a kernel, and
the tracker alone cannot see them.

So the cpu backend replays the profiler's allocation events (torch.profiler with
profile_memory=True records every allocation and free of the CPU allocator, with its address
and the op it happened in) and labels each block:

- a block that holds a storage the tracker labelled takes that storage's label. The two are
  matched by address and time: `TimedTracker` notes each storage's address and the wall
  clock (time.time_ns, the profiler's clock too) when it first labels it, which falls
  between the block's allocation and its free;
- a block freed while an op that was running when it was allocated is still running is that
  op's internal buffer: a temporary;
- any other block is `not_attributed` (allocated outside every tracked tensor and outliving
  the op that made it; none in the zoo's models).

The labelled blocks, swept in the allocator's event order, give the step's figures: live at
the allocator's peak they sum to that peak exactly, and the timeline counts allocator events.
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass

import torch

from generator.measure.tracking.timeline import StorageLife, TrackerReport, summarise
from generator.measure.tracking.tracker import MemoryTracker


class TimedTracker(MemoryTracker):
    """A MemoryTracker that also notes, for each storage life in the order of `lives()`,
    the storage's address and when it was first labelled, and when each phase began."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.births: list[tuple[int, int]] = []  # (address, time_ns), one per life
        self.phase_times: list[int] = []

    def life_began(self, storage: torch.UntypedStorage) -> None:
        self.births.append((storage.data_ptr(), time.time_ns()))

    def mark_phase(self, name: str) -> None:
        self.phase_times.append(time.time_ns())
        super().mark_phase(name)


@dataclass
class Block:
    """One allocation of the CPU allocator, from its allocation to its free."""

    ptr: int
    nbytes: int
    allocated: int
    """The profiler's time of the allocation (ns)."""
    ops: list[tuple[int, int]]
    """(start, end) of each op that was running when it was allocated."""
    order: tuple[int, int | None]
    """The positions of its allocation and free among all the profile's events."""
    freed: int | None = None
    category: str = "not_attributed"
    module: str | None = None


def allocator_blocks(prof, window_name: str) -> tuple[list[Block], tuple[int, int]]:
    """Every CPU allocator block of the profile, in allocation order, and the (start, end)
    of the record_function `window_name`. Frees of blocks allocated before profiling began
    are left out, as the profiler's own running total leaves them out."""
    from torch._C._profiler import _EventType

    events, window = [], None
    stack = [(root, ()) for root in prof.profiler.kineto_results.experimental_event_tree()]
    while stack:
        event, around = stack.pop()
        if event.tag == _EventType.Allocation:
            fields = event.extra_fields
            if fields.device.type == "cpu":
                events.append((event.start_time_ns, fields.ptr, fields.alloc_size, around))
            continue
        if event.name == window_name and window is None:
            window = (event.start_time_ns, event.end_time_ns)
        inner = around + ((event.start_time_ns, event.end_time_ns),)
        stack.extend((child, inner) for child in event.children)
    if window is None:
        raise RuntimeError(f"profiler trace has no {window_name!r} range")
    events.sort(key=lambda e: e[0])  # stable: same-time events keep the tree's order
    blocks, open_blocks = [], {}
    for index, (when, ptr, size, around) in enumerate(events):
        if size > 0:
            # Ops around the window (and the window itself) enclose every block: not an op's.
            ops = [(s, e) for s, e in around if not (s <= window[0] and e >= window[1])]
            open_blocks[ptr] = Block(ptr, size, when, ops, (index, None))
            blocks.append(open_blocks[ptr])
        elif ptr in open_blocks:
            block = open_blocks.pop(ptr)
            block.freed, block.order = when, (block.order[0], index)
    return blocks, window


def peak_bytes(blocks: list[Block], window: tuple[int, int]) -> int:
    """The allocator's largest running total in the window (or as it opens), replayed from
    the profile's own allocations and frees. Not the `total_allocated` the profiler reports
    with each event: c10's ProfiledCPUMemoryReporter (c10/core/CPUAllocator.cpp) keeps that
    total across profiling sessions and counts a free only while profiling is on, so blocks
    an earlier profile in the same process allocated and freed later stay in it for good."""
    start, end = window
    changes = sorted([(b.order[0], b.allocated, b.nbytes) for b in blocks]
                     + [(b.order[1], b.freed, -b.nbytes) for b in blocks if b.freed is not None])
    total, peak = 0, 0
    for _, when, change in changes:
        if when > end:
            break
        total += change
        if when >= start:
            peak = max(peak, total)
    baseline = sum(b.nbytes for b in blocks
                   if b.allocated < start and (b.freed is None or b.freed >= start))
    return max(peak, baseline)


def label_blocks(blocks: list[Block], tracker: TimedTracker) -> None:
    """Give each block the label of the tracked storage it held, else temporaries (freed
    inside the op that allocated it) or not_attributed."""
    by_ptr: dict[int, list[Block]] = {}
    for block in blocks:
        by_ptr.setdefault(block.ptr, []).append(block)
    starts = {ptr: [b.allocated for b in found] for ptr, found in by_ptr.items()}
    lives = tracker.lives()
    if len(lives) != len(tracker.births):
        raise RuntimeError("tracker lives and their addresses are out of step")
    for life, (ptr, when) in zip(lives, tracker.births):
        # The block at this address allocated last before the label holds the storage,
        # unless it was freed before (memory the allocator did not hand out, e.g. from_blob).
        at = bisect.bisect_right(starts.get(ptr, []), when) - 1
        if at >= 0 and (by_ptr[ptr][at].freed is None or by_ptr[ptr][at].freed >= when):
            block = by_ptr[ptr][at]
            block.category, block.module = life.category, life.module
    for block in blocks:
        if block.category == "not_attributed" and block.freed is not None and any(
                start <= block.allocated and block.freed <= end for start, end in block.ops):
            block.category = "temporaries"


def aligned_report(blocks: list[Block], window: tuple[int, int], tracker: TimedTracker,
                   categories) -> TrackerReport:
    """The step's figures from the labelled blocks alive in the window, swept in allocator
    event order: tick n is the window's n-th allocation or free, tick 0 its start."""
    start, end = window
    times = sorted([(b.allocated, b.order[0]) for b in blocks if start <= b.allocated <= end]
                   + [(b.freed, b.order[1]) for b in blocks
                      if b.freed is not None and start <= b.freed <= end])
    tick = {order: n for n, (_, order) in enumerate(times, start=1)}
    lives = [StorageLife(nbytes=b.nbytes, category=b.category, module=b.module,
                         born=tick.get(b.order[0], 0),  # 0: live as the window opens
                         died=tick.get(b.order[1]) if b.order[1] is not None else None)
             for b in blocks
             if b.allocated <= end and (b.freed is None or b.freed >= start)]
    moments = [when for when, _ in times]
    phases = [(name, bisect.bisect_left(moments, when) + 1)
              for (name, _), when in zip(tracker.phases(), tracker.phase_times)]
    return summarise(lives, phases, end=len(times) + 1, categories=categories)
