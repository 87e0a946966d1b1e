"""How much the simulated reserved peak depends on what the allocator holds when training starts.

    python -m generator.bench.reserved_start_state [text a run's name contains ...]

A model that arrives on the GPU built (loaded elsewhere, then moved) starts the allocator with
its parameters alone. The published H100 runs build theirs on the GPU
(`with torch.device(dev): from_config(...)`, in fp16 from the start for their pure-fp16 runs,
which set torch's default dtype first), and building frees blocks that stay cached: the
output layer's own weight, which `tie_weights` replaces by the input embedding. This script
estimates each of those runs (the `[[reference]]` table of
generator/experiment/suites/validation.toml) both ways, `built_on_device` off and on, and prints
estimate ÷ real for the reserved peak. The allocated peak counts from the first step either
way (the runs reset the peaks after building), so it does not move.

What it showed (transformers 4.46, see generator/results/reference_data/SOURCE.md; about four
minutes here): built on the device, as the runs were, the reserved estimates come closer to
the H100 (Llama 3.2 1B AMP 1.017 -> 0.998, Gemma 2B b2 s2048 AMP 1.012 -> 1.000, Llama in fp16
with checkpointing 1.005 -> 1.000) and none moves away by more than 1.4 %. An earlier version
of this script built the pure-fp16 runs in fp32 and cast them, which their code does not do;
the fp32 weights that cast freed sent those runs 11-16 % away.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the project: its docs/data/ and mkdocs.yml

from generator.experiment import Experiment
from generator.measure.backends import measure
from generator.results.reference_runs import runs


def reserved_ratio(run, built_on_device: bool) -> float:
    exp = Experiment.from_dict({**run.experiment(), "built_on_device": built_on_device})
    return measure(exp)["allocator"]["peak_reserved_bytes"] / run.reserved_peak_bytes


def main() -> int:
    names = sys.argv[1:]
    print(f"{'run':<34}{'moved':>8}{'built on the GPU':>18}")
    for run in runs():
        if run.skipped or (names and not any(n in run.name for n in names)):
            continue
        print(f"{run.name:<34}{reserved_ratio(run, False):>8.3f}"
              f"{reserved_ratio(run, True):>18.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
