"""An allocation trace: the caching allocator's input over the simulated steps, as text.

Why text: a trace has ten to twenty thousand events; a result stores it as one line, and the
calculator fits it over sizes and publishes it for the widget, which replays it through the
allocator (docs/assets/caching-allocator.js) at the sizes a reader picks.

An event is an integer: v >= 0 allocates v bytes (the bytes the tensor asked for; the
allocator rounds them), v < 0 frees the allocation made -v allocations earlier, counting the
newest as 1. Frees are relative so that a step replayed again reads the same; a run of frees
with no allocation between them is sorted oldest first, because their order cannot change
what the allocator holds afterwards (each free only merges with free neighbours), while the
order the tracker sees them in can differ between runs (hash order of a cache).

A trace is steps, each a comma-separated event list, and how many times each runs in a row.
As stored, the steps are one line each, deflated (zlib) and in base64: a step's layers repeat
one pattern, so 50 KB of text packs into 3 KB:
{"encoding": "zlib+base64, a step per line", "steps": "eJy…", "times": [1, 4]}.
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Hashable, Iterable, Sequence
from typing import Any


def encode(events: Sequence[tuple], step_starts: Sequence[int],
           workspaces: Sequence[int] = ()) -> dict[str, Any]:
    """("alloc", key, nbytes) / ("free", key) events, and the index where each step starts,
    as a trace; identical consecutive steps are stored once. `workspaces`: the indices of the
    events that allocate the cuBLAS workspaces, kept as [step, position] pairs (of the steps
    stored) so that a replay can give them another GPU's size."""
    numbers = _relative(events)  # an allocation keeps its place among the events
    bounds = list(step_starts) + [len(events)]
    steps: list[str] = []
    times: list[int] = []
    marked: list[list[int]] = []
    for start, end in zip(bounds, bounds[1:]):
        text = ",".join(map(str, numbers[start:end]))
        if steps and steps[-1] == text:
            times[-1] += 1
            continue
        marked += [[len(steps), i - start] for i in workspaces if start <= i < end]
        steps.append(text)
        times.append(1)
    packed = base64.b64encode(zlib.compress("\n".join(steps).encode("ascii"), 9)).decode("ascii")
    found = {"encoding": ENCODING, "steps": packed, "times": times}
    return {**found, "workspaces": marked} if marked else found


ENCODING = "zlib+base64, a step per line"


def steps(trace: dict[str, Any]) -> list[str]:
    """Each step's events as text (comma-separated integers)."""
    if trace.get("encoding") != ENCODING:
        raise ValueError(f"unknown trace encoding {trace.get('encoding')!r}")
    text = zlib.decompress(base64.b64decode(trace["steps"])).decode("ascii")
    return text.split("\n")


def _relative(events: Sequence[tuple]) -> list[int]:
    ordinal: dict[Hashable, int] = {}
    numbers: list[int] = []
    frees: list[int] = []  # the current run of frees, as ordinals

    def flush() -> None:
        numbers.extend(o - len(ordinal) for o in sorted(frees))
        frees.clear()

    for event in events:
        if event[0] == "alloc":
            flush()
            numbers.append(event[2])
            ordinal[event[1]] = len(ordinal)
        else:
            frees.append(ordinal[event[1]])
    flush()
    return numbers


def numbers(text: str) -> list[int]:
    """One step's events, from its text."""
    return list(map(int, text.split(","))) if text else []


def decode(trace: dict[str, Any]) -> list[int]:
    """The whole trace as absolute events, for the allocator: v >= 0 allocates v bytes,
    v < 0 frees allocation number -v - 1 (numbered from 0 in order)."""
    return absolute([numbers(text) for text in steps(trace)], trace["times"])


def absolute(step_events: Sequence[Sequence[int]], times: Sequence[int]) -> list[int]:
    """Steps of relative events, each run `times` times, as absolute events."""
    events: list[int] = []
    allocations = 0
    for numbers, repeat in zip(step_events, times):
        for _ in range(repeat):
            for v in numbers:
                if v >= 0:
                    events.append(v)
                    allocations += 1
                else:
                    events.append(-(allocations + v) - 1)
    return events


def as_tuples(events: Iterable[int]) -> list[tuple]:
    """Absolute events as the allocator model's ("alloc", n, nbytes) / ("free", n) tuples."""
    out: list[tuple] = []
    allocations = 0
    for v in events:
        if v >= 0:
            out.append(("alloc", allocations, v))
            allocations += 1
        else:
            out.append(("free", -v - 1))
    return out
