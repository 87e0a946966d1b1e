"""Run a suite's jobs in fresh subprocesses, reusing results already stored.

Real measurements (cpu, cuda) get a process each, one at a time: one run's allocator state or
out-of-memory error must not touch the next, and its step time must not share the machine.
Estimates share worker processes, since fake tensors allocate nothing and a fresh Python with
PyTorch costs seconds; they are dealt out to as many workers as the machine has cores (up to
ESTIMATE_WORKERS), which run at once: each keeps one core busy.

That is the local executor, the default. run_all decides once what to measure (reusing what
is stored, skipping what this machine cannot run) and hands the rest to an executor: a
callable taking [(job, where its result goes)] and the progress line, returning the
outcomes in that order, having stored each result with `store` as it came
(dask_executor.py runs the estimates on a Dask cluster instead).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Union

from generator import results
from generator.errors import ConfigError, ResultsError, from_payload
from generator.experiment import Experiment
from generator.jobs.process import die_with_parent, failure, worker_command
from generator.jobs.progress import Progress
from generator.measure.backends import backend_available
from generator.measure.environment import machine_id
from generator.measure.models import experiment_unavailable
from generator.measure.studies import Study

Job = Union[Experiment, Study]
#: Most worker processes measuring estimates at once (fewer on a machine with fewer cores).
ESTIMATE_WORKERS = 4


@dataclass
class Outcome:
    """What happened to one job: measured, reused, skipped or failed."""

    experiment: Job
    status: str
    message: str = ""
    result: dict[str, Any] | None = None
    seconds: float = 0.0


#: What measures a suite's jobs: [(job, result path)] and the progress line in, outcomes out.
Executor = Callable[[list[tuple[Job, Path]], Progress], list[Outcome]]


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
        _refuse_another(path, stored, job)
        same = stored["experiment"] == job.to_dict() and \
            stored.get("method_version") == METHOD_VERSION
    return stored if same and stored["environment"].get("torch") == torch.__version__ else None


def _refuse_another(path: Path, stored: dict[str, Any], job: Experiment) -> None:
    """Every field of an experiment is in its key: a stored result of the same key but of
    another experiment is one whose key folded alike (Experiment.key), which measuring would
    overwrite. Refused before anything runs, naming both; a study's file is its name, and
    a study of that name with other params is measured again in its place."""
    if stored["experiment"] != job.to_dict():
        other = Experiment.from_dict(stored["experiment"]).label
        raise ConfigError(f"{path} holds the result of {other!r}, not of {job.label!r}, "
                          "whose key is the same; move that file away to measure this one")


def _not_another(path: Path, job: Job) -> None:
    """--force measures again whatever is stored, except over another experiment's result."""
    if isinstance(job, Study) or not path.exists():
        return None
    try:
        stored = results.load(path)
    except ResultsError:  # a broken file: --force writes it again
        return None
    _refuse_another(path, stored, job)
    return None


def run_all(jobs: list[Job], results_dir: Path, *, force: bool = False,
            progress: Progress | None = None, executor: Executor | None = None
            ) -> list[Outcome]:
    """Measure what is missing; a crash of one job does not stop the others. Stored and
    skipped jobs are reported first, then the executor measures the rest (by default
    `measure_locally`). Outcomes come back in the order of `jobs`."""
    results.ensure_writable(results_dir)
    results.remove_stale_temps(results_dir)
    progress = progress or Progress(total=len(jobs))
    outcomes: dict[int, Outcome] = {}
    todo: list[tuple[int, Job, Path]] = []
    for index, job in enumerate(jobs):
        reason = backend_available(job.backend) or (
            experiment_unavailable(job) if isinstance(job, Experiment) else None)
        path = None if reason else job_path(results_dir, job)
        stored = None if reason else _not_another(path, job) if force else reusable(path, job)
        if reason or stored:
            outcomes[index] = Outcome(job, "skipped", reason) if reason else \
                Outcome(job, "reused", result=stored)
            progress.finish(progress.start(job.label), outcomes[index])
        else:
            todo.append((index, job, path))
    measured = (executor or measure_locally)([(job, path) for _, job, path in todo], progress)
    for (index, _, _), outcome in zip(todo, measured):
        outcomes[index] = outcome
    return [outcomes[i] for i in range(len(jobs))]


def measure_locally(todo: list[tuple[Job, Path]], progress: Progress) -> list[Outcome]:
    """The local executor: the estimates in parallel worker processes, then the real runs
    one at a time, a process each. Outcomes in the order of `todo`."""
    numbered = list(enumerate(todo))
    estimates = [item for item in numbered if shareable(item[1][0])]
    workers = max(1, min(ESTIMATE_WORKERS, cores(), len(estimates)))
    rounds = [[estimates[i::workers] for i in range(workers)]]  # dealt out: each gets big and small
    rounds += [[[item]] for item in numbered if not shareable(item[1][0])]
    outcomes: dict[int, Outcome] = {}
    for groups in rounds:
        measured = _measure_at_once([[pair for _, pair in g] for g in groups], progress)
        for group, group_outcomes in zip(groups, measured):
            for (index, _), outcome in zip(group, group_outcomes):
                outcomes[index] = outcome
    return [outcomes[i] for i in range(len(todo))]


def cores() -> int:
    """The cores this process may run on (its affinity, where the OS has one, which a
    container or `taskset` narrows; os.cpu_count() counts the whole machine)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def shareable(job: Job) -> bool:
    """An estimate: it allocates nothing, so it may share a process and the machine."""
    return isinstance(job, Experiment) and job.backend == "estimate"


def _measure_at_once(groups: list[list[tuple[Job, Path]]], progress: Progress
                     ) -> list[list[Outcome]]:
    """Run each group of jobs in a worker process of its own, the workers at the same time,
    reporting each job as it finishes; the outcomes, group by group in job order."""
    with contextlib.ExitStack() as stack:
        workers = [stack.enter_context(_Worker(group, progress)) for group in groups if group]
        while not all(worker.finished for worker in workers):
            for worker in workers:
                worker.poll()
            progress.tick()
            time.sleep(0.1)
        return [worker.outcomes for worker in workers]


class _Worker:
    """One worker process measuring a group of jobs in order, each written to its own file
    (worker.py); `poll` stores what is done and moves on to the next job."""

    def __init__(self, group: list[tuple[Job, Path]], progress: Progress) -> None:
        self.group, self.progress = group, progress
        self.outcomes: list[Outcome] = []

    @property
    def finished(self) -> bool:
        return len(self.outcomes) == len(self.group)

    def __enter__(self) -> _Worker:
        self._scratch = tempfile.TemporaryDirectory(prefix="generator-")
        scratch = Path(self._scratch.name)
        source, self._out = scratch / "jobs.json", scratch / "out"
        self._out.mkdir()
        source.write_text(json.dumps([payload(job) for job, _ in self.group]),
                          encoding="utf-8")
        self._log = open(scratch / "worker.log", "w+", encoding="utf-8")
        try:
            self._process = subprocess.Popen(
                worker_command(source, self._out), stdout=self._log, stderr=subprocess.STDOUT,
                preexec_fn=functools.partial(die_with_parent, os.getpid()))
        except BaseException:  # no process: __exit__ will not run, so clean up here
            self._log.close()
            self._scratch.cleanup()
            raise
        self._begin()
        return self

    def _begin(self) -> None:
        if not self.finished:
            self._token = self.progress.start(self.group[len(self.outcomes)][0].label)
            self._started = time.perf_counter()

    def poll(self) -> None:
        """Store every job the worker has finished, or fail the rest once it has ended."""
        while not self.finished:
            job, path = self.group[len(self.outcomes)]
            done = self._out / f"{len(self.outcomes)}.json"
            # Asked before looking for the file: a worker that writes its last file and exits
            # in between is not taken for one that died.
            ended = self._process.poll() is not None
            seconds = time.perf_counter() - self._started
            if done.exists():
                outcome = store(job, path, json.loads(done.read_text(encoding="utf-8")),
                                 seconds)
            elif ended:
                self._log.seek(0)
                outcome = Outcome(job, "failed",
                                  failure(self._process.returncode, self._log.read()),
                                  seconds=seconds)
            else:
                return
            self.progress.finish(self._token, outcome)
            self.outcomes.append(outcome)
            self._begin()

    def __exit__(self, kind, *_) -> None:
        try:
            if kind is not None:  # Ctrl-C or an error here: leave no orphan and no file behind
                self._process.kill()
            self._process.wait()
        finally:
            self._log.close()
            self._scratch.cleanup()


def payload(job: Job) -> dict[str, Any]:
    """`job` as a worker reads it (worker.run_job)."""
    return {"study": job.to_dict()} if isinstance(job, Study) else {"experiment": job.to_dict()}


def store(job: Job, path: Path, answer: dict[str, Any], seconds: float) -> Outcome:
    """A worker's answer for `job` (worker.run_job's dict) as an outcome, its result written
    to `path` (atomically) and read back; a user's mistake is raised here."""
    if "user_error" in answer:
        raise from_payload(answer["user_error"])
    if "result" not in answer:
        return Outcome(job, "failed", answer.get("failure", "no result"), seconds=seconds)
    result = answer["result"]
    results.save(path, result)
    (results.load_study if isinstance(job, Study) else results.load)(path)  # reads back
    return Outcome(job, "measured", result=result, seconds=seconds)
