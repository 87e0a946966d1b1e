"""Where the real CUDA caching allocator and the estimate's simulation of it part ways.

    python -m generator.bench.compare_snapshot SNAPSHOT.json [--min-mib 64]

SNAPSHOT.json is what generator/bench/gpu_memory_snapshot.py wrote on a GPU for one published H100
run. This script estimates the same step here (transformers 4.46, as the snapshot's run),
replays the estimate's allocation trace through generator/allocator, records each segment
the simulation takes, and prints both lists of large segments side by side, aligned: equal
runs collapsed, every difference in full (segment size, and the request that made the
allocator take it). Both lists start with the segments building the model took (the real
ones up to what the cuda backend found reserved before the first step): the published runs
build their models on the GPU, and so does the estimate of them (`built_on_device`). The
first difference is where to look. The snapshot's last segments may be the tracked step's,
a sixth step after the five untracked ones, which the simulation does not take.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]  # the project: its docs/data/ and mkdocs.yml

from generator.allocator import trace as allocation_trace
from generator.allocator.caching import CachingAllocator, replay

MIB = 1 << 20


class RecordingAllocator(CachingAllocator):
    """The simulation, noting each segment it takes: its bytes, the request's bytes and
    which allocation (counted from 1) made it take it."""

    def __init__(self) -> None:
        super().__init__()
        self.taken: list[dict[str, int]] = []
        self._allocations = 0
        self._request = 0

    def allocate(self, key, nbytes: int) -> bool:
        if nbytes:
            self._allocations += 1
            self._request = nbytes
        return super().allocate(key, nbytes)

    def _alloc_block(self, pool, size: int, alloc_size: int):
        block = super()._alloc_block(pool, size, alloc_size)
        if block is not None:
            self.taken.append({"bytes": alloc_size, "for_bytes": self._request,
                               "made_by": self._allocations})
        return block


def simulated_segments(events: list[tuple]) -> list[dict[str, int]]:
    """The segments the simulation takes over ("alloc", key, n) / ("free", key) events."""
    allocator = RecordingAllocator()
    replay(allocator, events)
    return allocator.taken


def building_segments(segments: list[dict[str, int]], reserved_before_steps: int) -> int:
    """How many of the real segments building the model took: the first ones whose bytes add
    up to what was reserved before the first step."""
    total = 0
    for count, segment in enumerate(segments):
        if total + segment["bytes"] > reserved_before_steps:
            return count
        total += segment["bytes"]
    return len(segments)


def aligned(real: list[dict[str, int]], simulated: list[dict[str, int]],
            min_bytes: int) -> list[str]:
    """Lines setting the large segments of both side by side: runs of equal segments as one
    line, each difference in full."""
    def large(segments):
        return [(s["bytes"], s.get("for_bytes", 0)) for s in segments if s["bytes"] >= min_bytes]

    a, b = large(real), large(simulated)
    lines = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            count, gib = i2 - i1, sum(s for s, _ in a[i1:i2]) / 2**30
            lines.append(f"  = {count} segment{'s' * (count != 1)} alike ({gib:.2f} GiB)")
            continue
        for index in range(max(i2 - i1, j2 - j1)):
            left = _segment(a[i1 + index]) if i1 + index < i2 else ""
            right = _segment(b[j1 + index]) if j1 + index < j2 else ""
            lines.append(f"  {tag[0]} {left:<40}{right}")
    return lines


def _segment(segment: tuple[int, int]) -> str:
    size, request = segment
    return f"{size / MIB:,.0f} MiB for {request / MIB:,.1f} MiB"


def estimate_events(run_name: str) -> list[tuple]:
    from generator.experiment import Experiment
    from generator.measure.backends import measure
    from generator.results.reference_runs import runs

    run = next(r for r in runs() if r.name == run_name)
    result = measure(Experiment.from_dict({**run.experiment(), "allocation_trace": True}))
    return allocation_trace.as_tuples(allocation_trace.decode(result["allocator"]["trace"]))


def compare(snapshot: dict[str, Any], simulated: list[dict[str, int]], min_bytes: int
            ) -> list[str]:
    real = snapshot["segments"]
    before = (snapshot.get("ground_truth") or {}).get("before_steps", {}).get("reserved_bytes", 0)
    built = building_segments(real, before)
    total = sum(s["bytes"] for s in real)
    lines = [f"{snapshot['run']}: real {len(real)} segments, {total / 2**30:.2f} GiB "
             f"({built} of them, {before / 2**30:.2f} GiB, taken while building); simulated "
             f"{len(simulated)}, {sum(s['bytes'] for s in simulated) / 2**30:.2f} GiB",
             f"  segments of at least {min_bytes / MIB:,.0f} MiB, building included: "
             f"{'real':<38}simulated"]
    return lines + aligned(real, simulated, min_bytes)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("snapshot", type=Path)
    parser.add_argument("--min-mib", type=int, default=64,
                        help="leave out segments smaller than this (default 64)")
    args = parser.parse_args(argv)
    snapshot = json.loads(args.snapshot.read_text(encoding="utf-8"))
    simulated = simulated_segments(estimate_events(snapshot["run"]))
    print("\n".join(compare(snapshot, simulated, args.min_mib * MIB)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
