"""Run a suite's estimates on a Dask cluster: `measure --executor dask [--scheduler ADDRESS]`.

The runner decides what to measure (reuse, skip) and hands the rest to this executor, which
sends each estimate to the cluster as the payload a worker reads; there a task runs it in a
fresh `python -m generator.jobs.worker` process, as the local runner does, and sends the
worker's answer back. Results are stored here, on the client, as they arrive
(runner.store), so the cluster never writes the results folder and an interrupt keeps
every result that came back.

Real runs (cpu, cuda) are measured on this machine after the estimates, one at a time, by the
local executor: their results' folder and the check that their backend exists are this
machine's, and a real run's figures must not share their machine with another job.

Without an address, a LocalCluster of this machine's cores is started for the run (worker
processes of one thread, listening on localhost, no dashboard) and closed after it.

Light on purpose (no PyTorch, no Dask until an executor is made): a Dask worker imports this
module to run `run_in_fresh_process`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.errors import ConfigError
from generator.jobs.process import die_with_parent, worker_command

if TYPE_CHECKING:
    from generator.jobs.progress import Progress
    from generator.jobs.runner import Job, Outcome

#: How long to try to reach a scheduler before saying it cannot be reached.
CONNECT_TIMEOUT_S = 10
INSTALL = "pip install 'dask[distributed]'"
#: The scheduler's HTTP server (health, metrics), which it starts even with no dashboard, on a
#: free port of localhost: on its default port 8787 a second cluster would warn.
LOCAL_HTTP = {"dashboard_address": "127.0.0.1:0"}


class DaskExecutor:
    """runner.Executor on a Dask cluster; connects on entering, lets go on leaving."""

    def __init__(self, scheduler: str | None = None) -> None:
        self.scheduler = scheduler

    def __enter__(self) -> DaskExecutor:
        distributed = _distributed()
        with contextlib.ExitStack() as stack:
            if self.scheduler is None:
                from generator.jobs.runner import cores

                with _interrupts_ignored():
                    cluster = stack.enter_context(distributed.LocalCluster(
                        n_workers=cores(), threads_per_worker=1, processes=True,
                        host="127.0.0.1", dashboard_address=None, scheduler_kwargs=LOCAL_HTTP,
                        silence_logs=logging.ERROR))
                self.client = stack.enter_context(distributed.Client(
                    cluster, set_as_default=False))
            else:
                self.client = stack.enter_context(connect(distributed, self.scheduler))
            self._leave = stack.pop_all()
        return self

    def __exit__(self, *_) -> None:
        self._leave.close()

    def __call__(self, todo: list[tuple[Job, Path]], progress: Progress) -> list[Outcome]:
        from generator.jobs.runner import measure_locally, shareable

        numbered = list(enumerate(todo))
        outcomes = self._on_cluster([item for item in numbered if shareable(item[1][0])],
                                    progress)
        real = [item for item in numbered if not shareable(item[1][0])]
        for (index, _), outcome in zip(real, measure_locally([p for _, p in real], progress)):
            outcomes[index] = outcome
        return [outcomes[i] for i in range(len(todo))]

    def _on_cluster(self, estimates: list[tuple[int, tuple[Job, Path]]], progress: Progress
                    ) -> dict[int, Outcome]:
        """Each estimate a task, no more in flight than the cluster has threads (so that the
        progress line's running jobs are running), each stored as it completes."""
        from generator.jobs.runner import payload

        waiting, running, outcomes = list(estimates), {}, {}
        try:
            while waiting or running:
                if waiting:  # the cluster's threads are counted again: workers come and go
                    room = max(0, max(1, sum(self.client.nthreads().values())) - len(running))
                    for index, (job, path) in waiting[:room]:
                        future = self.client.submit(run_in_fresh_process, payload(job),
                                                    pure=False)
                        running[future] = (index, job, path, progress.start(job.label),
                                           time.perf_counter())
                    waiting = waiting[room:]
                for future in [f for f in running if f.done()]:
                    index, job, path, token, started = running.pop(future)
                    outcomes[index] = _outcome(future, job, path, time.perf_counter() - started)
                    progress.finish(token, outcomes[index])
                progress.tick()
                time.sleep(0.1)
        finally:  # Ctrl-C or a user's mistake: what has not come back is not wanted
            if running:
                self.client.cancel(list(running))
        return outcomes


def connect(distributed: Any, address: str) -> Any:
    """A client of the scheduler at `address`, or one line saying it cannot be reached."""
    from distributed.comm import parse_address
    from distributed.comm.registry import get_backend

    try:
        # Refused before a Client exists: a Client that fails to start on an address of no
        # known scheme spends 20 s closing itself when it is collected.
        get_backend(parse_address(address)[0])
    except ValueError as error:
        raise ConfigError(f"--scheduler {address!r}: {_first_line(error)}") from None
    try:
        return distributed.Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as error:
        raise ConfigError(f"cannot reach the Dask scheduler at {address!r} (tried for "
                          f"{CONNECT_TIMEOUT_S} s): {_first_line(error)}") from None


@contextlib.contextmanager
def _interrupts_ignored() -> Iterator[None]:
    """The cluster's worker processes start ignoring Ctrl-C (a disposition they keep, and
    pass on to the jobs' processes): Ctrl-C at a terminal reaches the whole process group, and
    it is this process that stops the run, closing the cluster (whose jobs die with their
    Dask worker, process.die_with_parent) instead of each worker printing its traceback."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set a handler, and only it gets Ctrl-C
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ConfigError("--executor dask needs Dask's distributed scheduler, which is not "
                          f"installed: {INSTALL}") from None
    return distributed


def _outcome(future: Any, job: Job, path: Path, seconds: float) -> Outcome:
    from generator.jobs.process import failure
    from generator.jobs.runner import Outcome, store

    try:
        answer = future.result()
    except Exception as error:  # the task was lost (its Dask worker died too often)
        return Outcome(job, "failed", f"on the Dask cluster: {_first_line(error)}",
                       seconds=seconds)
    if "crashed" in answer:
        return Outcome(job, "failed", failure(**answer["crashed"]), seconds=seconds)
    _same_torch(answer)
    return store(job, path, answer, seconds)


def _same_torch(answer: dict[str, Any]) -> None:
    """A result is reused only with the PyTorch that made it (runner.reusable): one made by a
    cluster with another would be measured again on every run, so the run stops at the first."""
    import torch

    theirs = answer.get("result", {}).get("environment", {}).get("torch", torch.__version__)
    if theirs != torch.__version__:
        raise ConfigError(f"the Dask workers run torch {theirs}, this machine {torch.__version__}:"
                          " install the same on both, or their results would never be reused")


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def run_in_fresh_process(job: dict[str, Any]) -> dict[str, Any]:
    """The Dask task: one job (runner.payload) in a fresh worker process, as the local runner
    runs it; the worker's answer (worker.run_job), or {"crashed": …} when it gave none."""
    with tempfile.TemporaryDirectory(prefix="generator-") as scratch:
        source, out = Path(scratch) / "jobs.json", Path(scratch) / "out"
        out.mkdir()
        source.write_text(json.dumps([job]), encoding="utf-8")
        # The worker imports `generator` from where this task did, whatever the Dask
        # worker's folder and environment.
        paths = [str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")]
        process = subprocess.run(
            worker_command(source, out), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)},
            preexec_fn=functools.partial(die_with_parent, os.getpid()))
        done = out / "0.json"
        if done.exists():
            return json.loads(done.read_text(encoding="utf-8"))
        return {"crashed": {"returncode": process.returncode, "output": process.stdout[-4000:]}}
