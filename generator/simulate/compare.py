"""A snapshot recorded on a real GPU beside the simulated run of the same script: what each
holds, and where they differ (`python -m generator compare`).

Both sides are read the same way, from the snapshot's own contents (snapshot.py), so a
simulated run compared with its own snapshot shows no difference:
- the peaks: the trace replayed from the state at its end backwards (a trace may start
  after the first allocations, or lose its oldest entries to `max_entries`), so the bytes
  live before it began are known too. Allocated is the bytes the tensors asked for (the
  trace's sizes, as PyTorch records them); reserved is the segments';
- the segments, at the end and at most at once;
- the allocations of the trace, by size class (the allocator's pools: small up to 1 MiB,
  shared 20 MiB segments below 10 MiB, their own segments from 10 MiB);
- by phase, read from each allocation's stack frames. A snapshot has no categories
  (parameters, gradients, activations): those live in the estimate's tracker, which a real
  run's snapshot does not have, so the phase is what can be told honestly: optimizer (a
  frame in torch/optim), backward (autograd's engine thread: PyTorch's C++ frames
  `torch::autograd::Engine::…`, or the simulation's frame in their place), forward (a frame
  in a module's call), other, and no stack (allocated on a thread without Python frames and
  recorded without C++ ones, or before recording began);
- which allocations one has and the other lacks, by size and the stack frame that made
  them: the innermost Python frame outside torch, as file name (not its folder, which
  differs between machines), line and function.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from generator.allocator.blocks import MIN_LARGE_ALLOC, SMALL_SIZE
from generator.errors import ConfigError
from generator.units import format_bytes

PHASES = ("forward", "backward", "optimizer", "other", "no stack")
#: The bytes live when the trace began: allocated before recording, so of no known phase.
BEFORE = "before the trace"
SIZE_CLASSES = ("up to 1 MiB", "1 to 10 MiB", "10 MiB and more")
#: What each action does to the reserved bytes (times its size) and to the segments held.
_GROWS = {"segment_alloc": 1, "segment_map": 1, "segment_free": -1, "segment_unmap": -1}
_SEGMENTS = {"segment_alloc": 1, "segment_free": -1}
_NO_FRAMES: list = []


@dataclass(frozen=True)
class Figures:
    """What one snapshot holds for one device (see the module). Sizes in bytes."""

    peak_allocated: int
    peak_reserved: int
    segments: int
    most_segments: int
    traced: int
    """How many allocations the trace holds (0: a snapshot of the state alone)."""
    out_of_memory: int
    size_classes: dict[str, tuple[int, int]]
    """Per size class: the trace's allocations (count, bytes)."""
    phases_at_peak: dict[str, int]
    """Per phase: the bytes live at the allocated peak."""
    phases: dict[str, tuple[int, int]]
    """Per phase: the trace's allocations (count, bytes)."""
    allocations: Counter = field(default_factory=Counter)
    """(site, size) → how many times the trace allocates it."""


def devices(snapshot: dict[str, Any]) -> list[int]:
    """The devices a snapshot holds anything for."""
    found = {i for i, trace in enumerate(snapshot["device_traces"]) if trace}
    found |= {s.get("device", 0) for s in snapshot["segments"]}
    return sorted(d for d in found if type(d) is int)


def device_of(snapshot: dict[str, Any], chosen: int | None) -> int:
    """The device to compare: the one chosen, or the only one the snapshot holds."""
    held = devices(snapshot)
    if chosen is not None:
        if chosen not in held:
            raise ConfigError(f"the snapshot holds nothing for device {chosen} (it holds "
                              f"{', '.join(map(str, held)) or 'none'})")
        return chosen
    if not held:
        raise ConfigError("the snapshot holds no segment and no trace entry: record it with "
                          "torch.cuda.memory._record_memory_history() before the script's "
                          "allocations")
    if len(held) > 1:
        raise ConfigError(f"the snapshot holds devices {', '.join(map(str, held))}: choose "
                          "one with --snapshot-device N")
    return held[0]


def _python(frame: dict) -> bool:
    return frame["filename"].endswith(".py")


def _in_torch(frame: dict) -> bool:
    return "/torch/" in frame["filename"].replace("\\", "/")


def phase(frames: list[dict]) -> str:
    """The phase an allocation was made in, from its stack (see the module)."""
    if not frames:
        return "no stack"
    if any("autograd::Engine" in f["name"] for f in frames):
        return "backward"
    if any(_in_torch(f) and "/optim/" in f["filename"].replace("\\", "/") for f in frames):
        return "optimizer"
    if any(f["name"] == "_call_impl" and _in_torch(f) for f in frames):
        return "forward"
    return "other"


def site(frames: list[dict]) -> str:
    """Where an allocation was made: the innermost Python frame outside torch, as
    file:line function; else the innermost frame; else "no stack"."""
    chosen = next((f for f in frames if _python(f) and not _in_torch(f)), None)
    if chosen is None and frames:
        engine = next((f for f in frames if "autograd::Engine" in f["name"]), None)
        chosen = engine or frames[0]
    if chosen is None:
        return "no stack"
    name = os.path.basename(chosen["filename"].replace("\\", "/")) or chosen["filename"]
    return f"{name}:{chosen['line']} {chosen['name']}"


def size_class(nbytes: int) -> str:
    if nbytes <= SMALL_SIZE:
        return SIZE_CLASSES[0]
    return SIZE_CLASSES[1] if nbytes < MIN_LARGE_ALLOC else SIZE_CLASSES[2]


def _at_start(snapshot: dict[str, Any], device: int) -> tuple[list, list, tuple[int, int, int]]:
    """One device's segments and trace, and its allocated bytes, reserved bytes and segments
    when the trace began: the state at the end, less what the trace did."""
    segments = [s for s in snapshot["segments"] if s.get("device", 0) == device]
    traces = snapshot["device_traces"]
    trace = traces[device] if device < len(traces) else []
    active = [b for s in segments for b in s["blocks"] if b["state"] == "active_allocated"]
    allocated = sum(b.get("requested_size", b["size"]) for b in active)
    reserved = sum(s["total_size"] for s in segments)
    count = len(segments)
    for entry in trace:
        action, size = entry["action"], entry["size"]
        if action == "alloc":
            allocated -= size
        elif action == "free_completed":
            allocated += size
        elif action in _GROWS:
            reserved -= _GROWS[action] * size
            count -= _SEGMENTS.get(action, 0)
    return segments, trace, (allocated, reserved, count)


def figures(snapshot: dict[str, Any], device: int = 0) -> Figures:
    """One device's figures (see the module)."""
    segments, trace, (allocated, reserved, count) = _at_start(snapshot, device)
    live: dict[int, tuple[int, str]] = {}
    by_phase = Counter({BEFORE: allocated})
    peak, at_peak = allocated, dict(by_phase)
    peak_reserved, most = reserved, count
    classes: dict[str, list[int]] = {c: [0, 0] for c in SIZE_CLASSES}
    phases: dict[str, list[int]] = {p: [0, 0] for p in PHASES}
    made: Counter = Counter()
    ooms = 0
    read: dict[int, tuple[str, str]] = {}  # id(frames) → (phase, site): stacks repeat
    for entry in trace:
        action, size = entry["action"], entry["size"]
        if action == "alloc":
            frames = entry.get("frames") or _NO_FRAMES
            if id(frames) not in read:
                read[id(frames)] = (phase(frames), site(frames))
            where, made_at = read[id(frames)]
            live[entry["addr"]] = (size, where)
            allocated += size
            by_phase[where] += size
            for tally in (classes[size_class(size)], phases[where]):
                tally[0] += 1
                tally[1] += size
            made[(made_at, size)] += 1
            if allocated > peak:
                peak, at_peak = allocated, dict(by_phase)
        elif action == "free_completed":
            size, where = live.pop(entry["addr"], (size, BEFORE))
            allocated -= size
            by_phase[where] -= size
        elif action in _GROWS:
            reserved += _GROWS[action] * size
            count += _SEGMENTS.get(action, 0)
            peak_reserved, most = max(peak_reserved, reserved), max(most, count)
        elif action == "oom":
            ooms += 1
    return Figures(
        peak_allocated=peak, peak_reserved=peak_reserved, segments=len(segments),
        most_segments=most, traced=sum(made.values()), out_of_memory=ooms,
        size_classes={c: (n, b) for c, (n, b) in classes.items()},
        phases_at_peak={p: at_peak.get(p, 0) for p in (BEFORE, *PHASES)},
        phases={p: (n, b) for p, (n, b) in phases.items()}, allocations=made)


def timeline(snapshot: dict[str, Any], device: int = 0, *, points: int = 320
             ) -> dict[str, list[int]]:
    """The allocated and reserved bytes over the trace, as PyTorch's visualizer draws its
    timeline: after each allocator event, then the largest of each of about `points` equal
    runs of events (an envelope: no peak is averaged away). `events`: each run's last."""
    _, trace, (allocated, reserved, _) = _at_start(snapshot, device)
    found: dict[str, list[int]] = {"events": [], "allocated": [], "reserved": []}
    run = max(1, -(-len(trace) // points))
    for index, entry in enumerate(trace):
        if entry["action"] == "alloc":
            allocated += entry["size"]
        elif entry["action"] == "free_completed":
            allocated -= entry["size"]
        elif entry["action"] in _GROWS:
            reserved += _GROWS[entry["action"]] * entry["size"]
        if index % run == 0:
            found["events"].append(index + 1)
            found["allocated"].append(allocated)
            found["reserved"].append(reserved)
        else:
            found["events"][-1] = index + 1
            found["allocated"][-1] = max(found["allocated"][-1], allocated)
            found["reserved"][-1] = max(found["reserved"][-1], reserved)
    return found


@dataclass(frozen=True)
class Lacking:
    """Allocations of one size at one site that one side has more of than the other."""

    site: str
    size: int
    times: int

    @property
    def nbytes(self) -> int:
        return self.size * self.times


def lacking(have: Figures, other: Figures) -> list[Lacking]:
    """The allocations `have` makes that `other` does not (as many times), most bytes first."""
    extra = have.allocations - other.allocations
    found = [Lacking(where, size, times) for (where, size), times in extra.items()]
    return sorted(found, key=lambda x: (-x.nbytes, x.site, x.size))


def same(real: Figures, simulated: Figures) -> bool:
    """Whether the two hold the same figures and the same allocations: no difference."""
    return real == simulated


def difference(snapshot: int, simulated: int, *, nbytes: bool = True) -> str:
    """The simulated figure less the snapshot's, in words: "the same", or signed, with the
    share of the snapshot's where it has one."""
    if snapshot == simulated:
        return "the same"
    delta = simulated - snapshot
    sign = "+" if delta > 0 else "−"
    shown = f"{sign}{_amount(abs(delta), nbytes)}"
    return f"{shown} ({sign}{abs(delta) / snapshot:.1%})" if snapshot else shown


def _amount(value: int, nbytes: bool) -> str:
    return format_bytes(value) if nbytes else f"{value:,}"


def summary(snapshot: Figures, simulated: Figures) -> str:
    """The comparison in one sentence, checked on the figures."""
    if same(snapshot, simulated):
        return ("no difference: the same peaks, segments and allocations (each size at each "
                "stack frame, as many times)")
    differing = [name for name, a, b in (
        ("peak allocated", snapshot.peak_allocated, simulated.peak_allocated),
        ("peak reserved", snapshot.peak_reserved, simulated.peak_reserved),
        ("segments", (snapshot.segments, snapshot.most_segments),
         (simulated.segments, simulated.most_segments)),
        ("allocations", snapshot.allocations, simulated.allocations)) if a != b]
    return f"they differ in: {', '.join(differing) or 'how the allocations fall in phases'}"
