"""`measure --executor dask` on a two-worker LocalCluster of this machine (processes, one
thread each, localhost only, no dashboard): the same results as the local runner, byte for
byte apart from the time they were made, and a suite half stored is finished, not redone.

The mistakes found before measuring (options, an unreachable scheduler, no dask):
unit/test_dask_executor.py.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import file_digests, run_cli

distributed = pytest.importorskip("distributed",
                                  reason="dask's distributed scheduler is not installed")

#: Three tiny estimates, one of them in mixed precision.
SUITE = """\
[[experiment]]
model = "tiny"
batch_size = [2, 4]
seq_len = 16

[[experiment]]
model = "tiny"
batch_size = 2
seq_len = 16
precision = "amp-bf16"
"""
#: What two runs of the same suite differ in: when each result was made, how long it took.
TIMINGS = ("measured_at", "step_seconds")


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    from generator.jobs.dask_executor import LOCAL_HTTP

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None,
                                  scheduler_kwargs=LOCAL_HTTP) as cluster:
        yield cluster.scheduler_address


def _measure(root: Path, results: str, *executor: str) -> list[str]:
    """The progress lines of `measure` into `results`, the time each job took left out."""
    proc = run_cli(["measure", "--config", "suite.toml", "--results", results, *executor], root)
    assert proc.returncode == 0, proc.stderr
    return [re.sub(r" in [0-9.]+ s:", ":", line) for line in proc.stderr.splitlines()]


def _untimed(folder: Path) -> dict[str, dict]:
    found = {}
    for path in sorted(folder.rglob("*.json")):
        result = json.loads(path.read_text(encoding="utf-8"))
        found[path.relative_to(folder).as_posix()] = {
            key: value for key, value in result.items() if key not in TIMINGS}
    return found


@pytest.fixture(scope="module")
def runs(tmp_path_factory, scheduler: str) -> tuple[Path, list[str], list[str]]:
    """The suite measured by the local runner into results-local/, on the cluster into
    results-dask/; their progress lines."""
    root = tmp_path_factory.mktemp("dask")
    (root / "suite.toml").write_text(SUITE, encoding="utf-8")
    local = _measure(root, "results-local")
    on_dask = _measure(root, "results-dask", "--executor", "dask", "--scheduler", scheduler)
    return root, local, on_dask


def test_the_cluster_measures_what_the_local_runner_does(runs) -> None:
    root, local, on_dask = runs
    assert _untimed(root / "results-dask") == _untimed(root / "results-local")
    assert len(_untimed(root / "results-local")) == 3
    # The same lines, in the order the jobs finished (which neither runner fixes).
    numbered = re.compile(r"^\[\d+/3\] ")
    assert sorted(numbered.sub("", line) for line in on_dask[:-1]) == \
        sorted(numbered.sub("", line) for line in local[:-1])
    assert (local[-1], on_dask[-1]) == ("3 jobs: 3 measured; results in results-local/",
                                        "3 jobs: 3 measured; results in results-dask/")


def test_the_json_differs_only_in_its_timings(runs) -> None:
    """Byte for byte: the file of each result with its timings set alike is the same file."""
    root = runs[0]
    for path in sorted((root / "results-local").rglob("*.json")):
        other = root / "results-dask" / path.relative_to(root / "results-local")
        local, on_dask = (json.loads(p.read_text(encoding="utf-8")) for p in (path, other))
        on_dask.update({key: local[key] for key in TIMINGS})
        assert json.dumps(on_dask) == json.dumps(local)


def test_a_half_stored_suite_is_finished_not_redone(runs, scheduler: str) -> None:
    """Results stored before (by an interrupted run, or the local runner) are reused as the
    local runner reuses them: left as they are, byte for byte, and not measured again."""
    root = runs[0]
    shutil.copytree(root / "results-local", root / "results-resume")
    stored = sorted((root / "results-resume").rglob("*.json"))
    stored[0].unlink()
    before = file_digests(root / "results-resume")
    lines = _measure(root, "results-resume", "--executor", "dask", "--scheduler", scheduler)
    assert lines[-1] == "3 jobs: 2 reused, 1 measured; results in results-resume/"
    after = file_digests(root / "results-resume")
    assert {name: after[name] for name in before} == before
    assert _untimed(root / "results-resume") == _untimed(root / "results-local")
