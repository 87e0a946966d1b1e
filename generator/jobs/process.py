"""A worker process as its parent starts it and reads its end: `python -m
generator.jobs.worker IN OUT_DIR` (worker.py), tied to the parent's life.

Both the local runner (runner.py) and a Dask task (dask_executor.py) start workers this way.
Light on purpose (no PyTorch): a Dask worker imports it to run its task.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def worker_command(source: Path, out_dir: Path) -> list[str]:
    """The command of a worker measuring the jobs in `source` into `out_dir`."""
    return [sys.executable, "-m", "generator.jobs.worker", str(source), str(out_dir)]


def failure(returncode: int | None, output: str) -> str:
    """Why a worker process ended without an answer, in one line."""
    if returncode is not None and returncode < 0:
        return f"worker killed by signal {-returncode} (out of memory?)"
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return lines[-1] if lines else f"worker exited with status {returncode}"


def die_with_parent(parent: int) -> None:
    """Linux: the worker gets SIGKILL if the parent dies, so a killed build leaves no orphan.
    Runs in the child between fork and exec (preexec_fn)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before prctl took effect: nobody to report to
        os._exit(1)
