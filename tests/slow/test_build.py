"""`python -m generator build` end to end in a fresh project folder: a small suite of
estimates and a real CPU run measured, rendered and built; progress one line per job; a
second build reuses everything; --force measures again.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from conftest import make_project, run_cli, tree_state
from made_results import PAST

SMALL_SUITE = """\
[[experiment]]
model = "tiny"
batch_size = 2
seq_len = 16
precision = ["fp32", "amp-bf16"]
backend = "estimate"

[[experiment]]
model = "tiny"
batch_size = 2
seq_len = 16
precision = "fp32"
backend = "cpu"

[[experiment]]
model = "tiny"
batch_size = 2
seq_len = 16
precision = "fp32"
backend = "estimate"
device = "cpu"
"""
ONE_ESTIMATE = '[[experiment]]\nmodel = "tiny"\nbatch_size = 2\nseq_len = 16\n'


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    """One `build --config small.toml` in a fresh project folder, shared by the tests below
    (which run in this order: reuse, then force)."""
    root = make_project(tmp_path_factory.mktemp("build") / "project")
    (root / "small.toml").write_text(SMALL_SUITE, encoding="utf-8")
    return root, run_cli(["build", "--config", "small.toml"], root)


def _progress_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if re.match(r"\[\d+/\d+\] ", line)]


def _result_files(root: Path) -> list[Path]:
    return sorted((root / "docs" / "data").glob("*/*.json"))


def test_build_end_to_end(built) -> None:
    root, proc = built
    assert proc.returncode == 0, proc.stderr
    assert len(list((root / "docs" / "data" / "estimate").glob("*.json"))) == 3
    cpu = list((root / "docs" / "data").glob("cpu-*/tiny-b2-s16-fp32-adamw-cpu.json"))
    assert len(cpu) == 1
    assert (root / "site" / "index.html").is_file()

    # The page shows the fp32 estimate's peak (estimate for the cpu, beside the real cpu run)
    # in MiB, on the row of that configuration.
    estimate = json.loads((root / "docs" / "data" / "estimate" /
                           "tiny-b2-s16-fp32-adamw-estimate-as-cpu.json").read_text())
    peak_mib = f"{estimate['peak_bytes'] / 2**20:,.1f}"
    page = (root / "docs" / "en" / "methodology.md").read_text(encoding="utf-8")
    label = "| tiny b2 s16 FP32 (measured on the CPU)"
    rows = [line for line in page.splitlines() if line.startswith(label)]
    assert len(rows) == 1, page
    cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert cells[4] == peak_mib, rows[0]
    html = (root / "site" / "en" / "methodology" / "index.html").read_text(encoding="utf-8")
    assert "tiny b2 s16 FP32 (measured on the CPU)" in html


def test_build_progress_is_one_line_per_experiment(built) -> None:
    root, proc = built
    assert "\r" not in proc.stderr and "\x1b" not in proc.stderr
    progress = _progress_lines(proc.stderr)
    assert len(progress) == 4, proc.stderr
    for number, line in enumerate(progress, start=1):
        assert line.startswith(f"[{number}/4] measured in "), line
    assert "4 jobs: 4 measured" in proc.stderr


def test_second_build_reuses_everything(built) -> None:
    root, _ = built
    files = _result_files(root)
    assert len(files) == 4
    for path in files:
        os.utime(path, (PAST, PAST))
    before = tree_state(root / "docs" / "data")
    proc = run_cli(["build", "--config", "small.toml"], root)
    assert proc.returncode == 0, proc.stderr
    progress = _progress_lines(proc.stderr)
    assert len(progress) == 4, proc.stderr
    assert all(line.split("] ", 1)[1].startswith("reused:") for line in progress), proc.stderr
    assert "4 jobs: 4 reused" in proc.stderr
    assert tree_state(root / "docs" / "data") == before  # not rewritten, nothing added


def test_force_measures_again(built) -> None:
    root, _ = built
    for path in _result_files(root):
        os.utime(path, (PAST, PAST))
    (root / "one.toml").write_text(ONE_ESTIMATE, encoding="utf-8")
    proc = run_cli(["build", "--config", "one.toml", "--force"], root)
    assert proc.returncode == 0, proc.stderr
    progress = _progress_lines(proc.stderr)
    assert len(progress) == 1 and progress[0].startswith("[1/1] measured in "), proc.stderr
    forced = root / "docs" / "data" / "estimate" / "tiny-b2-s16-fp32-adamw-estimate.json"
    for path in _result_files(root):
        rewritten = path.stat().st_mtime_ns != PAST * 10**9
        assert rewritten == (path == forced), path
