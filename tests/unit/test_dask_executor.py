"""`measure --executor dask [--scheduler ADDRESS]`: the options, and the mistakes found before
anything is measured, in this process. A cluster measuring a suite: slow/test_dask_measure.py.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest
from conftest import assert_refused

SUITE = '[[experiment]]\nmodel = "tiny"\nbatch_size = 2\nseq_len = 16\n'


@pytest.fixture
def suite(seeded: Path) -> Path:
    (seeded / "suite.toml").write_text(SUITE, encoding="utf-8")
    return seeded


@pytest.mark.parametrize("command", ["measure", "build"])
def test_the_executor_options(command: str) -> None:
    from generator.cli.main import _parser

    args = _parser().parse_args([command])
    assert (args.executor, args.scheduler) == ("local", None)
    args = _parser().parse_args([command, "--executor", "dask", "--scheduler", "tcp://h:8786"])
    assert (args.executor, args.scheduler) == ("dask", "tcp://h:8786")


def test_an_unknown_executor_is_named(cli, suite: Path) -> None:
    assert_refused(cli, suite, ["measure", "--config", "suite.toml", "--executor", "ray"],
                   "--executor", "ray", "dask")


def test_a_scheduler_needs_the_dask_executor(cli, suite: Path) -> None:
    assert_refused(cli, suite, ["measure", "--config", "suite.toml", "--scheduler",
                                "tcp://127.0.0.1:8786"], "--scheduler", "--executor dask")


def test_the_local_runner_is_the_default(cli, suite: Path, monkeypatch) -> None:
    from generator.jobs import runner

    handed = []
    monkeypatch.setattr(runner, "run_all", lambda jobs, *a, **k: handed.append(k) or [])
    assert cli(["measure", "--config", "suite.toml"], suite).returncode == 0
    assert handed == [{"force": False, "executor": None}]


def test_an_unreachable_scheduler_is_one_line(cli, suite: Path, monkeypatch) -> None:
    """A closed port on this machine, tried for a second: nothing measured, nothing written."""
    pytest.importorskip("distributed", reason="dask's distributed scheduler is not installed")
    from generator.jobs import dask_executor

    monkeypatch.setattr(dask_executor, "CONNECT_TIMEOUT_S", 1)
    with socket.socket() as sock:  # a port nobody listens on: bound, then let go
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    assert_refused(cli, suite, ["measure", "--config", "suite.toml", "--executor", "dask",
                                "--scheduler", address], "cannot reach", address, "1 s")


def test_without_dask_the_line_names_the_install(cli, suite: Path, monkeypatch) -> None:
    from generator.jobs import dask_executor

    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    assert_refused(cli, suite, ["measure", "--config", "suite.toml", "--executor", "dask"],
                   "--executor dask", dask_executor.INSTALL)


def test_an_address_of_no_known_scheme_is_named(cli, suite: Path) -> None:
    pytest.importorskip("distributed", reason="dask's distributed scheduler is not installed")
    assert_refused(cli, suite, ["measure", "--config", "suite.toml", "--executor", "dask",
                                "--scheduler", "nonsense://host:1"], "--scheduler",
                   "nonsense://host:1", "unknown address scheme")


def test_real_runs_stay_on_this_machine(monkeypatch, tmp_path: Path) -> None:
    """Estimates go to the cluster; cpu and cuda runs to the local runner, one at a time,
    after them (their folder and their figures are this machine's). Outcomes in job order."""
    from generator.experiment import Experiment
    from generator.jobs import dask_executor, runner

    jobs = [Experiment(model="tiny", batch_size=2, seq_len=16, backend=backend)
            for backend in ("cpu", "estimate", "cuda", "estimate")]
    todo = [(job, tmp_path / str(i)) for i, job in enumerate(jobs)]
    handed = {}

    def on_cluster(self, estimates, progress):
        handed["cluster"] = [job.backend for _, (job, _) in estimates]
        return {index: runner.Outcome(job, "measured") for index, (job, _) in estimates}

    def locally(pairs, progress):
        handed["local"] = [job.backend for job, _ in pairs]
        return [runner.Outcome(job, "measured") for job, _ in pairs]

    monkeypatch.setattr(dask_executor.DaskExecutor, "_on_cluster", on_cluster)
    monkeypatch.setattr(runner, "measure_locally", locally)
    outcomes = dask_executor.DaskExecutor()(todo, progress=None)
    assert handed == {"cluster": ["estimate", "estimate"], "local": ["cpu", "cuda"]}
    assert [outcome.experiment for outcome in outcomes] == jobs


class _Done:
    def __init__(self, answer: dict) -> None:
        self.answer = answer

    def result(self) -> dict:
        return self.answer


def test_a_cluster_with_another_torch_stops_the_run(tmp_path: Path) -> None:
    """Its results would never be reused (runner.reusable): nothing is stored."""
    from generator.errors import ConfigError
    from generator.experiment import Experiment
    from generator.jobs import dask_executor

    job = Experiment(model="tiny", batch_size=2, seq_len=16)
    answer = {"result": {"environment": {"torch": "1.0.0"}}}
    with pytest.raises(ConfigError, match="torch 1.0.0"):
        dask_executor._outcome(_Done(answer), job, tmp_path / "r.json", 0.0)
    assert not (tmp_path / "r.json").exists()


def test_a_worker_that_died_is_a_failed_job(tmp_path: Path) -> None:
    from generator.experiment import Experiment
    from generator.jobs import dask_executor

    job = Experiment(model="tiny", batch_size=2, seq_len=16)
    crashed = {"crashed": {"returncode": -9, "output": ""}}
    outcome = dask_executor._outcome(_Done(crashed), job, tmp_path / "r.json", 0.0)
    assert (outcome.status, outcome.message) == ("failed",
                                                 "worker killed by signal 9 (out of memory?)")
