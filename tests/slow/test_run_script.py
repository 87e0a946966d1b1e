"""`python -m generator run` as a user runs it, in a subprocess, on the shipped example
(generator/examples/plain_loop.py); and the check of truth: the same script run for real on
this CPU, its allocator's peak read from the profiler's memory events as the `cpu` backend
reads it, against `run --device cpu`, the simulation modelling this CPU (script_runs.py)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import REPO_ROOT, assert_refused, run_cli
from script_runs import assert_cpu_agrees

EXAMPLE = REPO_ROOT / "generator" / "examples" / "plain_loop.py"


def test_the_example_on_a_simulated_gpu(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_cli(["run", "--gpu", "RTX 4090", "--json", report, EXAMPLE, "--steps", "4"],
                   tmp_path)
    assert done.returncode == 0, done.stderr
    assert "step 3: loss 0.0000" in done.stdout  # the script's own prints, placeholders
    assert "max memory allocated:" in done.stdout  # it saw a CUDA GPU
    assert "simulated NVIDIA GeForce RTX 4090" in done.stdout and "nvidia-smi" in done.stdout
    data = json.loads(report.read_text())
    assert len(data["steps"]) == 4 and data["verdict"] == "yes"
    assert not data["stopped_after_steps"]
    printed = float(done.stdout.split("max memory allocated: ")[1].split(" MiB")[0])
    assert abs(printed * 2**20 - data["allocated_bytes"]) < 0.1 * 2**20  # the same figure


def test_the_example_as_a_module_stopped_after_its_steps(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_cli(["run", "--steps", "2", "--json", report, "-m",
                    "generator.examples.plain_loop", "--steps", "6"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "stopped after 2 optimizer steps" in done.stdout
    assert "assumed: --gpu NAME for yours" in done.stdout
    assert len(json.loads(report.read_text())["steps"]) == 2


def test_a_missing_script_is_one_line(tmp_path: Path) -> None:
    assert_refused(run_cli, tmp_path, ["run", "nothing.py"], "no script at nothing.py")


def test_the_simulation_of_the_cpu_against_a_real_run_on_it(tmp_path: Path) -> None:
    """Within 1 % (no constant tuned to it; script_runs.py)."""
    assert_cpu_agrees(tmp_path, EXAMPLE, ("--steps", "3"))
