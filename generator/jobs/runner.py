"""Run a suite's jobs in fresh subprocesses, reusing results already stored.

Real measurements (cpu, cuda) get a process each: one run's allocator state or out-of-memory
error must not touch the next. Consecutive estimates share one process, since fake tensors
allocate nothing and a fresh Python with PyTorch costs seconds.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from generator import results
from generator.errors import from_payload
from generator.experiment import Experiment
from generator.jobs.progress import Progress
from generator.measure.backends import backend_available
from generator.measure.environment import machine_id
from generator.measure.models import experiment_unavailable
from generator.measure.studies import Study

Job = Union[Experiment, Study]


@dataclass
class Outcome:
    """What happened to one job: measured, reused, skipped or failed."""

    experiment: Job
    status: str
    message: str = ""
    result: dict[str, Any] | None = None
    seconds: float = 0.0


def job_path(results_dir: Path, job: Job) -> Path:
    if isinstance(job, Study):
        return results.study_path(results_dir, machine_id(job.backend), job.key)
    return results.result_path(results_dir, machine_id(job.backend), job.key)


def reusable(path: Path, job: Job) -> dict[str, Any] | None:
    """The stored result of `job` if it was measured the same way, by the same method, with
    this PyTorch."""
    if not path.exists():
        return None
    import torch

    if isinstance(job, Study):
        from generator.measure.studies import module

        stored = results.load_study(path)
        same = stored["study"] == job.to_dict() and \
            stored["method_version"] == module(job.kind).VERSION
    else:
        from generator.measure.backends import METHOD_VERSION

        stored = results.load(path)
        same = stored["experiment"] == job.to_dict() and \
            stored.get("method_version") == METHOD_VERSION
    return stored if same and stored["environment"].get("torch") == torch.__version__ else None


def run_all(jobs: list[Job], results_dir: Path, *, force: bool = False,
            progress: Progress | None = None) -> list[Outcome]:
    """Measure what is missing; a crash of one job does not stop the others. Stored and
    skipped jobs are reported first, then the estimates (in one process), then real runs.
    Outcomes come back in the order of `jobs`."""
    results.ensure_writable(results_dir)
    results.remove_stale_temps(results_dir)
    progress = progress or Progress(total=len(jobs))
    outcomes: dict[int, Outcome] = {}
    todo: list[tuple[int, Job, Path]] = []
    for index, job in enumerate(jobs):
        reason = backend_available(job.backend) or (
            experiment_unavailable(job) if isinstance(job, Experiment) else None)
        path = None if reason else job_path(results_dir, job)
        stored = None if reason or force else reusable(path, job)
        if reason or stored:
            progress.start(job.label)
            outcomes[index] = Outcome(job, "skipped", reason) if reason else \
                Outcome(job, "reused", result=stored)
            progress.finish(outcomes[index])
        else:
            todo.append((index, job, path))
    estimates = [item for item in todo if _shareable(item[1])]
    groups = [estimates] + [[item] for item in todo if not _shareable(item[1])]
    for group in groups:
        for (index, _, _), outcome in zip(group, _measure([(j, p) for _, j, p in group],
                                                          progress)):
            outcomes[index] = outcome
    return [outcomes[i] for i in range(len(jobs))]


def _shareable(job: Job) -> bool:
    return isinstance(job, Experiment) and job.backend == "estimate"


def _measure(group: list[tuple[Job, Path]], progress: Progress) -> list[Outcome]:
    """Run a group of jobs in one worker process, reporting each as it finishes."""
    if not group:
        return []
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="generator-") as scratch:
        source, out_dir = Path(scratch) / "jobs.json", Path(scratch) / "out"
        out_dir.mkdir()
        source.write_text(json.dumps([_payload(job) for job, _ in group]), encoding="utf-8")
        log = open(Path(scratch) / "worker.log", "w+", encoding="utf-8")
        process = subprocess.Popen(
            [sys.executable, "-m", "generator.jobs.worker", str(source), str(out_dir)],
            stdout=log, stderr=subprocess.STDOUT,
            preexec_fn=functools.partial(_die_with_parent, os.getpid()))
        try:
            for index, (job, path) in enumerate(group):
                progress.start(job.label)
                started = time.perf_counter()
                done = out_dir / f"{index}.json"
                while not done.exists() and process.poll() is None:
                    progress.tick(time.perf_counter() - started)
                    time.sleep(0.1)
                seconds = time.perf_counter() - started
                if not done.exists():
                    log.seek(0)
                    outcome = Outcome(job, "failed", _failure(process.returncode, log.read()),
                                      seconds=seconds)
                else:
                    outcome = _store(job, path, json.loads(done.read_text(encoding="utf-8")),
                                     seconds)
                progress.finish(outcome)
                outcomes.append(outcome)
            process.wait()
        except BaseException:  # Ctrl-C or an error here: leave no orphan and no file behind
            process.kill()
            process.wait()
            raise
        finally:
            log.close()
    return outcomes


def _payload(job: Job) -> dict[str, Any]:
    return {"study": job.to_dict()} if isinstance(job, Study) else {"experiment": job.to_dict()}


def _store(job: Job, path: Path, payload: dict[str, Any], seconds: float) -> Outcome:
    if "user_error" in payload:
        raise from_payload(payload["user_error"])
    if "result" not in payload:
        return Outcome(job, "failed", payload.get("failure", "no result"), seconds=seconds)
    result = payload["result"]
    results.save(path, result)
    (results.load_study if isinstance(job, Study) else results.load)(path)  # reads back
    return Outcome(job, "measured", result=result, seconds=seconds)


def _failure(returncode: int | None, output: str) -> str:
    if returncode is not None and returncode < 0:
        return f"worker killed by signal {-returncode} (out of memory?)"
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return lines[-1] if lines else f"worker exited with status {returncode}"


def _die_with_parent(parent: int) -> None:
    """Linux: the worker gets SIGKILL if the parent dies, so a killed build leaves no orphan.
    Runs in the child between fork and exec."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before prctl took effect: nobody to report to
        os._exit(1)
