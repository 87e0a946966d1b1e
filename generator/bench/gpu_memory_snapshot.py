"""What the real CUDA caching allocator did over a published H100 run's step, on this GPU.

    python -m generator.bench.gpu_memory_snapshot [--results DIR] OUT_DIR [text a run's name contains ...]

Needs a CUDA GPU and the transformers version the estimates used (4.46.0; see
generator/results/reference_data/SOURCE.md). For each matching run of the `[[reference]]`
table (default: Gemma 2B b8 s512 MP and b2 s2048 MP, the pair whose reserved peaks the
estimate sets 6 % apart and the H100 0.1 %), it runs the step through this project's cuda
backend (building; the warm-up and four timed steps, untracked as the H100's were; then the
tracked step, whose segments come last) with PyTorch's memory history recording, and writes
OUT_DIR/<run>.json:

- `ground_truth`: what the cuda backend reports (peaks, what building left reserved);
- `segments`: each segment the allocator took, in the order it took them: its size, the
  ordinal of the allocation that made it take it, and that allocation's size;
- `events`: every allocation and free of at least `MIN_BYTES`, in order, as
  [action, bytes, segment, offset in the segment]: which block served each large request.

With --results DIR each run's result is stored there too, as `measure` stores it (the
validation-cuda suite then reuses it instead of running the step again).

generator/bench/compare_snapshot.py sets these segments beside the ones the estimate's allocator
simulation takes for the same step, and shows where the two part.
"""

from __future__ import annotations

import bisect
import gc
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]  # the project: its docs/data/ and mkdocs.yml

#: Entries the history keeps (a Gemma 2B step makes a few tens of thousands).
MAX_ENTRIES = 2_000_000
#: Requests smaller than this are left out of `events` (they live in small segments and
#: cannot move a reserved peak of tens of GiB).
MIN_BYTES = 1 << 20
DEFAULT_RUNS = ("gemma_2b b8 s512 MP", "gemma_2b b2 s2048 MP")
ACTIONS = ("alloc", "free_completed", "segment_alloc", "segment_free")


def summarise(snapshot: dict[str, Any], *, min_bytes: int = MIN_BYTES,
              max_entries: int | None = None) -> dict[str, Any]:
    """A memory snapshot (torch.cuda.memory._snapshot()) as segments in the order they were
    taken and the large allocations and frees, each placed in its segment. `max_entries`:
    the history's length limit, to tell whether its oldest entries were dropped."""
    segments: list[dict[str, int]] = []  # in the order taken: address, bytes, made_by
    live: list[tuple[int, int]] = []  # (address, index) of the segments held, sorted
    events: list[list[Any]] = []
    allocations = 0
    trace = next((t for t in snapshot.get("device_traces", []) if t), [])
    for entry in trace:
        action, address, nbytes = entry["action"], entry["addr"], entry["size"]
        if action == "alloc":
            allocations += 1
            if segments and segments[-1]["made_by"] == allocations:
                segments[-1]["for_bytes"] = nbytes
        elif action == "segment_alloc":
            # taken for the allocation that comes next in the trace
            segments.append({"address": address, "bytes": nbytes, "made_by": allocations + 1})
            bisect.insort(live, (address, len(segments) - 1))
        if action not in ACTIONS or nbytes < min_bytes:
            continue
        index = _segment_of(segments, live, address)
        offset = address - segments[index]["address"] if index is not None else None
        events.append([action, nbytes, index, offset])
        if action == "segment_free" and index is not None:
            live.remove((segments[index]["address"], index))
    return {"segments": [{key: s[key] for key in ("bytes", "for_bytes", "made_by") if key in s}
                         for s in segments],
            "events": events, "allocations": allocations,
            "truncated": max_entries is not None and len(trace) >= max_entries}


def _segment_of(segments: list[dict[str, int]], live: list[tuple[int, int]],
                address: int) -> int | None:
    """The held segment whose range holds `address`, or None (taken before the history)."""
    at = bisect.bisect_right(live, (address, len(segments))) - 1
    if at < 0:
        return None
    start, index = live[at]
    return index if address < start + segments[index]["bytes"] else None


def snapshot_run(name_part: str, out_dir: Path, results_dir: Path | None = None) -> Path:
    """Run the step, write its summary into `out_dir`, and, with `results_dir`, store its
    result there as `measure` would (so that validation-cuda.toml reuses it)."""
    import torch

    from generator import results
    from generator.experiment import Experiment
    from generator.jobs.runner import job_path
    from generator.measure.run import measure_to_result
    from generator.results.reference_runs import runs

    run = next(r for r in runs() if name_part in r.name and not r.skipped)
    experiment = Experiment.from_dict({**run.experiment(), "backend": "cuda"})
    torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python",
                                             max_entries=MAX_ENTRIES)
    try:
        result = measure_to_result(experiment)
        summary = summarise(torch.cuda.memory._snapshot(), max_entries=MAX_ENTRIES)
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)
    if results_dir is not None:
        results.save(job_path(results_dir, experiment), result)
    summary.update(run=run.name, key=experiment.key, error=result.get("error"),
                   ground_truth=result.get("ground_truth"), torch=torch.__version__,
                   h100_reserved_bytes=run.reserved_peak_bytes,
                   h100_active_bytes=run.active_peak_bytes)
    path = out_dir / (run.name.replace(" ", "_") + ".json")
    path.write_text(json.dumps(summary), encoding="utf-8")
    return path


def main(argv: list[str]) -> int:
    results_dir = None
    if argv[:1] == ["--results"] and len(argv) > 1:
        results_dir, argv = Path(argv[1]), argv[2:]
    if not argv:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    import torch

    if not torch.cuda.is_available():
        print("needs a CUDA GPU: torch.cuda.is_available() is False here", file=sys.stderr)
        return 2
    out_dir = Path(argv[0])
    out_dir.mkdir(parents=True, exist_ok=True)
    for part in argv[1:] or DEFAULT_RUNS:
        path = snapshot_run(part, out_dir, results_dir)
        summary = json.loads(path.read_text(encoding="utf-8"))
        truth = summary["ground_truth"] or {}
        reserved = truth.get("steps_max_reserved_bytes")
        print(f"{summary['run']}: {len(summary['segments'])} segments, reserved "
              f"{reserved} B ({reserved / summary['h100_reserved_bytes']:.3f} of the H100's)"
              if reserved else f"{summary['run']}: {summary['error']}")
        gc.collect()
        torch.cuda.empty_cache()  # the next run starts from an empty cache, as in a new process
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
