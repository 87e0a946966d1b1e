"""`python -m generator run --gpus N` on the shipped torchrun example
(generator/examples/parallel_loop.py), and the check of truth: the same script for real
under torchrun on this CPU (gloo, two processes; tests/slow/torchrun_script.py reads each
rank's CPU allocator peak) against `run --device cpu --gpus 2`, the simulation of rank 0
modelling this CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, cli_env, run_cli

EXAMPLE = REPO_ROOT / "generator" / "examples" / "parallel_loop.py"
MEASURE = REPO_ROOT / "tests" / "slow" / "torchrun_script.py"
STRATEGIES = ("ddp", "fsdp2", "tp")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_each_strategy_as_rank_zero_of_eight_simulated_gpus(strategy: str,
                                                              tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_cli(["run", "--gpus", "8", "--gpu", "H100", "--json", report, EXAMPLE,
                    "--strategy", strategy], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "rank 0 of 8, each figure one GPU's" in done.stdout
    assert "max memory allocated:" in done.stdout  # the script saw CUDA GPUs
    data = json.loads(report.read_text())
    assert data["gpus"] == 8 and len(data["steps"]) == 3 and data["verdict"] == "yes"


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_simulated_rank_against_a_real_torchrun_job_on_this_cpu(strategy: str,
                                                                   tmp_path: Path) -> None:
    """Within 1 % of rank 0's CPU allocator peak (no constant tuned to it)."""
    env = {**cli_env(), "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    real = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         MEASURE, tmp_path, EXAMPLE, "--strategy", strategy],
        env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert real.returncode == 0, real.stderr[-4000:]
    measured = json.loads((tmp_path / "rank-0.json").read_text())["allocator_peak_bytes"]
    report = tmp_path / "report.json"
    done = run_cli(["run", "--device", "cpu", "--gpus", "2", "--steps", "all", "--json",
                    report, EXAMPLE, "--strategy", strategy], tmp_path)
    assert done.returncode == 0, done.stderr
    simulated = json.loads(report.read_text())["allocated_bytes"]
    assert abs(simulated - measured) <= 0.01 * measured, (simulated, measured)
