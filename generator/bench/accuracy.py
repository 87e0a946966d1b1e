"""The estimates against the published real H100 runs: the accuracy page's table, here.

    python -m generator.bench.accuracy [--results docs/data] [--run]

Without --run it reads the stored estimates (docs/data/); with --run it estimates every
reproduced run afresh in this process first (the `[[reference]]` table of
generator/experiment/suites/validation.toml) and prints the wall time of the whole suite. Each
row: allocated and reserved peaks, estimate ÷ real, and PyTorch MemTracker's ÷ real; then
the worst and median errors. Reproduce the stored figures with the transformers version
the H100 runs used (see generator/results/reference_data/SOURCE.md):

    pip install transformers==4.46.0 tokenizers==0.20.3 huggingface-hub==0.26.2
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the project: its docs/data/ and mkdocs.yml

from generator.files import RESULTS_DIR
from generator.results import load_all
from generator.site.pages import accuracy


def estimate_all() -> tuple[list[dict], float]:
    """Every reproduced run, estimated now: (results, seconds for all of them)."""
    from generator.experiment import Experiment
    from generator.measure.run import measure_to_result
    from generator.results.reference_runs import runs

    start = time.perf_counter()
    results = []
    for run in runs():
        if run.skipped:
            continue
        results.append(measure_to_result(Experiment.from_dict(run.experiment())))
        print(f"  {run.name}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    return results, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS_DIR)
    parser.add_argument("--run", action="store_true", help="estimate every run afresh first")
    args = parser.parse_args()
    seconds = None
    if args.run:
        results, seconds = estimate_all()
    else:
        results = load_all(args.results)
    ctx = accuracy.context(results, [])
    if ctx is None:
        print("no estimate of the published runs found; run with --run", file=sys.stderr)
        return 1
    print(f"{'run':<34}{'alloc':>8}{'reserved':>10}{'MemTracker':>12}")
    for row in ctx["rows"]:
        memtracker = f"{row['memtracker_ratio']:.3f}" if row["memtracker_ratio"] else "–"
        print(f"{row['name']:<34}{row['active_ratio']:>8.3f}{row['reserved_ratio']:>10.3f}"
              f"{memtracker:>12}")
    for name, stats in ctx["summary"].items():
        if isinstance(stats, dict):
            print(f"{name:<12} worst {stats['worst']:.2%}  median {stats['median']:.2%}  "
                  f"({stats['count']} runs)")
    for item in ctx["skipped"]:
        print(f"skipped {item['model']} ({item['count']} runs): {item['reason'].en}")
    if seconds is not None:
        print(f"estimated {len(ctx['rows'])} runs in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
