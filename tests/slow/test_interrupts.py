"""Interrupted builds and resuming them.

A `build` stopped in the middle of measuring (Ctrl-C to its process group, SIGTERM, SIGKILL)
must leave no half-written result, no temporary file in docs/data/, and no worker process
behind; the next `build` reuses what was stored and measures only what is missing.

The experiment to interrupt is a user model whose factory announces itself (its process id
in the file `started`) and then sleeps while the file `slow.flag` exists, so the test knows
exactly when the build is in the middle of measuring and the kill costs no CPU. Every wait
is for something to happen (a file, a process's end), with a ceiling of minutes that only a
hung build reaches: how long a busy machine takes is never asserted.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import cli_env, run_cli, snapshot_code

#: Only a hung build waits this long for anything.
CEILING_S = 600

SLOW_MODULE = '''\
import os
import time
from pathlib import Path

import torch
from torch import nn


def build():
    Path("started").write_text(str(os.getpid()))
    while Path("slow.flag").exists():
        time.sleep(0.1)
    model = nn.Sequential(nn.Embedding(50, 8), nn.Linear(8, 50))

    def make_batch(batch_size, seq_len, device):
        ids = torch.randint(0, 50, (batch_size, seq_len), device=device)
        return (ids,), ids

    def loss_fn(output, target):
        return nn.functional.cross_entropy(output.reshape(-1, 50), target.reshape(-1))

    return model, make_batch, loss_fn
'''

# Measured in this order: the estimates (one worker), then the real runs one by one: tiny
# fp32 on the CPU, the slow model (interrupted), tiny amp-bf16 on the CPU.
SUITE = """\
[[experiment]]
model = "tiny"
batch_size = 2
seq_len = 16
precision = ["fp32", "amp-bf16"]

[[experiment]]
model = "tiny"
batch_size = 2
seq_len = 16
backend = "cpu"

[[experiment]]
model = "userpkg.mod:build"
batch_size = 2
seq_len = 4
backend = "cpu"

[[experiment]]
model = "tiny"
batch_size = 2
seq_len = 16
precision = "amp-bf16"
backend = "cpu"
"""
PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] (\w+)")


def _descendants(pid: int) -> set[int]:
    """Every live process below `pid` (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    """Running (a zombie whose parent has not reaped it yet counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _wait_for(condition: Callable[[], object], what: str) -> None:
    """Poll until `condition` holds; fail only past the ceiling (a hung build)."""
    deadline = time.monotonic() + CEILING_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"still waiting for {what} after {CEILING_S} s: the build hangs")
        time.sleep(0.1)


def _statuses(stderr: str) -> list[str]:
    """The status of each progress line, in order: measured, reused, skipped or failed."""
    return [m.group(3) for m in map(PROGRESS.match, stderr.splitlines()) if m]


def _check_results(root: Path) -> list[str]:
    """Every file under docs/data/ (the results folder) is a whole result that loads; returns
    their names."""
    from generator import results

    data = root / "docs" / "data"
    leftovers = sorted(data.rglob(".*.tmp"))  # what write_atomic writes before the rename
    assert not leftovers, f"left over: {leftovers}"
    files = sorted(p for p in data.glob("*/*.json") if p.parent.name != "studies")
    for path in files:
        results.load(path)
    return sorted(p.name for p in files)


def _interrupted_build(root: Path, how: str) -> tuple[str, list[str]]:
    """Start `build`, wait until the slow model is being measured, interrupt it `how`;
    return the build's stderr and the names of the results stored."""
    started = root / "started"
    started.unlink(missing_ok=True)
    (root / "slow.flag").touch()
    scratch = root / ".scratch"  # the runner's temporary folders (TMPDIR), watched here
    scratch.mkdir(exist_ok=True)
    with open(root / "build.log", "w+", encoding="utf-8") as log:
        build = subprocess.Popen(
            [sys.executable, "-m", "generator", "build", "--config", "suite.toml"], cwd=root,
            env={**cli_env(), "TMPDIR": str(scratch)}, stdout=log, stderr=log,
            stdin=subprocess.DEVNULL,
            start_new_session=True)  # its own process group, as a shell job would have
        try:
            _wait_for(lambda: started.exists() and started.read_text() or build.poll() is not None,
                      "the slow model to start")
            if build.poll() is not None:
                log.seek(0)
                pytest.fail(f"build ended before the slow model started:\n{log.read()}")
            below = _descendants(build.pid)
            assert int(started.read_text()) in below
            if how == "SIGINT":  # Ctrl-C: the terminal signals the whole foreground group
                os.killpg(build.pid, signal.SIGINT)
            else:
                os.kill(build.pid, getattr(signal, how))
            _wait_for(lambda: build.poll() is not None, f"the build to end after {how}")
            _wait_for(lambda: not any(map(_alive, below)), f"no worker left after {how}")
        finally:
            if build.poll() is None:
                build.kill()
                build.wait()
        log.seek(0)
        stderr = log.read()
    expected = -signal.SIGKILL if how == "SIGKILL" else 130
    assert build.returncode == expected, f"exit {build.returncode} after {how}:\n{stderr}"
    if how != "SIGKILL":  # a killed process cleans nothing; the others clean up after them
        assert not list(scratch.glob("generator-*")), list(scratch.iterdir())
    shutil.rmtree(scratch)
    return stderr, _check_results(root)


def test_interrupted_builds_leave_nothing_behind_and_resume(project: Path,
                                                            user_package) -> None:
    snapshot_code(project)
    user_package(project, SLOW_MODULE)
    (project / "suite.toml").write_text(SUITE, encoding="utf-8")

    stderr, stored = _interrupted_build(project, "SIGINT")
    assert _statuses(stderr) == ["measured"] * 3, stderr
    assert "interrupted" in stderr.splitlines()[-1], stderr
    assert len(stored) == 3, stored
    assert not any("userpkg" in name for name in stored)

    for how in ("SIGTERM", "SIGKILL"):  # stored results are reused; the slow model is not
        stderr, now = _interrupted_build(project, how)
        assert _statuses(stderr) == ["reused"] * 3, f"{how}:\n{stderr}"
        assert now == stored, how

    (project / "slow.flag").unlink()
    proc = run_cli(["build", "--config", "suite.toml"], project, timeout=CEILING_S)
    assert proc.returncode == 0, proc.stderr
    assert _statuses(proc.stderr) == ["reused"] * 3 + ["measured"] * 2, proc.stderr
    assert "5 jobs: 3 reused, 2 measured" in proc.stderr
    assert len(_check_results(project)) == 5
    assert (project / "site" / "index.html").is_file()
