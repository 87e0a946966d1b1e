"""generator/bench/gpu_check.sh, the one command a GPU lease runs, on a machine without a GPU: every
stage starts within its share of the time, the GPU-only scripts refuse with their one line,
the suites skip their cuda jobs, and the archive and the log come back even so. (On a GPU the
stages measure; that can only be seen there.)"""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import torch
from conftest import REPO_ROOT, cli_env

from generator.jobs.load import DEFAULT_SUITE, load_suite

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="checks a run without a "
                                "GPU, and this machine has one (there the stages measure)")


def test_every_stage_runs_and_what_it_made_comes_back(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run(["bash", "generator/bench/gpu_check.sh", str(out), "300"], cwd=REPO_ROOT,
                          env={**cli_env(), "PYTHON": sys.executable}, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    log = (out / "log.txt").read_text(encoding="utf-8")
    stages = [line for line in log.splitlines() if "[gpu_check" in line and "] start" in line]
    commands = [s.split(": ", 1)[1].split() for s in stages]
    assert [c[1].split("=")[0] for c in commands] == ["-m", "-m", "-m", "-m", "PYTHONPATH", "-m"]
    assert [c[2] for c in commands[:3]] == ["generator.bench.gpu_cudnn_rnn_reserve", "pytest",
                                            "generator.bench.gpu_memory_snapshot"]
    assert "Traceback" not in log
    refusals = [line for line in log.splitlines() if line.startswith("needs a CUDA GPU:")]
    assert len(refusals) == 2  # the two scripts that need one say so
    # every cuda job of the suites the script measures, skipped for want of a GPU
    validation = len(load_suite(DEFAULT_SUITE / "optional" / "validation-cuda.toml"))
    qlora = sum(job.backend == "cuda"
                for job in load_suite(DEFAULT_SUITE / "optional" / "qlora-cuda.toml"))
    built_in = sum(getattr(job, "backend", None) == "cuda" for job in load_suite())
    for count in (validation, qlora, built_in):
        assert f"{count} jobs: {count} skipped" in log
    with tarfile.open(out / "results.tgz") as archive:
        assert archive.getnames() == []  # no GPU, no results; nothing else written
    assert (out / "new_results.txt").read_text(encoding="utf-8") == ""
