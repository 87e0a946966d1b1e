"""Run a list of experiments, each in a fresh subprocess, reusing results already stored."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import results
from .backends import backend_available
from .config import Experiment
from .environment import machine_id
from .errors import GeneratorError, ModelError
from .progress import Progress


@dataclass
class Outcome:
    """What happened to one experiment: measured, reused, skipped or failed."""

    experiment: Experiment
    status: str
    message: str = ""
    result: dict[str, Any] | None = None
    seconds: float = 0.0


def reusable(path: Path, exp: Experiment) -> dict[str, Any] | None:
    """The stored result of `exp` if it was measured the same way, by the same method, with
    this PyTorch."""
    if not path.exists():
        return None
    import torch

    from .backends import METHOD_VERSION

    stored = results.load(path)
    same = (stored["experiment"] == exp.to_dict()
            and stored.get("method_version") == METHOD_VERSION
            and stored["environment"].get("torch") == torch.__version__)
    return stored if same else None


def run_all(experiments: list[Experiment], results_dir: Path, *, force: bool = False,
            progress: Progress | None = None) -> list[Outcome]:
    """Measure what is missing; a crash of one experiment does not stop the others."""
    results.ensure_writable(results_dir)
    progress = progress or Progress(total=len(experiments))
    outcomes = []
    for exp in experiments:
        progress.start(exp.label)
        reason = backend_available(exp.backend)
        if reason:
            outcome = Outcome(exp, "skipped", reason)
        else:
            path = results.result_path(results_dir, machine_id(exp.backend), exp.key)
            stored = None if force else reusable(path, exp)
            outcome = Outcome(exp, "reused", result=stored) if stored else _measure(exp, path, progress)
        progress.finish(outcome)
        outcomes.append(outcome)
    return outcomes


def _measure(exp: Experiment, path: Path, progress: Progress) -> Outcome:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="generator-") as scratch:
        source, target = Path(scratch) / "experiment.json", Path(scratch) / "result.json"
        source.write_text(json.dumps(exp.to_dict()), encoding="utf-8")
        process = subprocess.Popen(
            [sys.executable, "-m", "generator.worker", str(source), str(target)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            preexec_fn=_die_with_parent)
        try:
            while process.poll() is None:
                progress.tick(time.perf_counter() - started)
                time.sleep(0.2)
        except BaseException:  # Ctrl-C or an error here: leave no orphan and no file behind
            process.kill()
            process.wait()
            raise
        output = process.stdout.read() if process.stdout else ""
        payload = json.loads(target.read_text(encoding="utf-8")) if target.exists() else {}
        seconds = time.perf_counter() - started
        if process.returncode == 2 and "user_error" in payload:
            raise ModelError(payload["user_error"]) if "model" in payload["user_error"] \
                else GeneratorError(payload["user_error"])
        if process.returncode != 0 or "result" not in payload:
            return Outcome(exp, "failed", _failure(process.returncode, output), seconds=seconds)
        result = payload["result"]
        results.save(path, result)
        results.load(path)  # what we wrote must read back
        return Outcome(exp, "measured", result=result, seconds=seconds)


def _failure(returncode: int, output: str) -> str:
    if returncode < 0:
        return f"worker killed by signal {-returncode} (out of memory?)"
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return lines[-1] if lines else f"worker exited with status {returncode}"


def _die_with_parent() -> None:
    """Linux: the worker gets SIGKILL if the parent dies, so a killed build leaves no orphan."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
