"""The command line as a user runs it, `python -m generator …` in a subprocess, where a
user's mistake only shows in the worker process that measures: it still ends as one line on
stderr and exit status 2 (the worker sends it back, errors.to_payload), not as a "failed"
outcome or a traceback. The mistakes found before measuring are tested in this process:
tests/unit/test_bad_*.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BAD_FACTORIES, assert_refused, cli_env, run_cli


def _suite(root: Path, model: str) -> None:
    (root / "user.toml").write_text(
        f'[[experiment]]\nmodel = "{model}"\nbatch_size = 2\nseq_len = 4\n', encoding="utf-8")


@pytest.mark.parametrize("factory", sorted(BAD_FACTORIES))
def test_bad_user_factory_in_the_worker(seeded: Path, user_package, factory: str) -> None:
    user_package(seeded)
    _suite(seeded, f"userpkg.mod:{factory}")
    assert_refused(run_cli, seeded, ["measure", "--config", "user.toml"], *BAD_FACTORIES[factory])


def test_bad_user_make_batch_in_the_worker(seeded: Path, user_package) -> None:
    user_package(seeded)
    _suite(seeded, "userpkg.mod:batch_raises")
    assert_refused(run_cli, seeded, ["measure", "--config", "user.toml"],
                   "userpkg.mod:batch_raises")


def test_python_m_generator_ends_a_mistake_with_one_line(seeded: Path) -> None:
    """__main__ turns main()'s status into the process's exit status."""
    assert_refused(run_cli, seeded, ["estimate", "nosuchmodel", "--batch-size", "1",
                                     "--seq-len", "8"], "nosuchmodel")


def test_output_into_a_closed_pipe_is_no_traceback(tmp_path: Path) -> None:
    """`python -m generator models | head -1` once head has gone: the pipe's reading end
    is closed before the command writes, so every write fails, whatever the timing."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "generator", "models"], cwd=tmp_path,
                              env=cli_env(), stdout=write_end, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, text=True, timeout=600)
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (141, "")
