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
