"""Benchmark the estimate: wall time of the CLI, and its error against a real CPU run.

    python -m generator.bench.estimate [--runs 5]

Prints the median wall time of `python -m generator estimate bert-base --batch-size 32
--seq-len 128` (target: under 3 s on a 2-core machine, import of torch included), and the
estimate's error against the CPU allocator's peak on the validation configuration (bert-base,
batch 4, sequence 128, fp32 and amp-bf16), measured now in fresh processes.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the project: its docs/data/ and mkdocs.yml

from generator.experiment import Experiment
from generator.jobs.runner import run_all


def time_cli(runs: int) -> list[float]:
    command = [sys.executable, "-m", "generator", "estimate", "bert-base",
               "--batch-size", "32", "--seq-len", "128"]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return times


def estimate_errors(scratch: Path) -> list[tuple[str, float, float]]:
    rows = []
    for precision in ("fp32", "amp-bf16"):
        config = dict(model="bert-base", batch_size=4, seq_len=128, precision=precision)
        real, estimate = run_all([Experiment(**config, backend="cpu"),
                                  Experiment(**config, backend="estimate", device="cpu")],
                                 scratch, force=True)
        truth = real.result["ground_truth"]["peak_bytes"]
        rows.append((precision, real.result["peak_bytes"] / truth - 1,
                     estimate.result["peak_bytes"] / truth - 1))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    times = time_cli(args.runs)
    print(f"estimate bert-base batch 32 seq 128: median {statistics.median(times):.2f} s "
          f"over {len(times)} runs (min {min(times):.2f}, max {max(times):.2f}); target under 3 s")
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        for precision, tracker_error, estimate_error in estimate_errors(Path(scratch)):
            print(f"bert-base batch 4 seq 128 {precision}: tracker {tracker_error:+.4%}, "
                  f"estimate {estimate_error:+.4%} against the CPU allocator's peak; target ≤ 1 %")


if __name__ == "__main__":
    main()
