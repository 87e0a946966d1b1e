"""Measuring one training step, and the other measurements (studies).

    experiment ─► backends.measure ─► models (the workload) ─► training.step (the step)
                                    └► tracking (labels every storage, sums bytes)
    study ─────► studies.<kind>.run

`backends/` holds the three ways to run a step (estimate with fake tensors, cpu, cuda),
`emulation/` what the estimate models of a device, `environment.py` where a result was
measured. Everything below this package may import PyTorch; nothing downstream of the results
does. This module itself imports nothing heavy: the API imports it inside a user's process.

Whatever a measurement changes in the process it restores (the garbage collector, torch's
dispatch tables and fake-tensor rules, autocast, default dtype, threads, loggers, sys.path);
only the command line and the worker, whose processes are this tool's own, keep the imports'
objects frozen out of the garbage collector's way (`own_process`).
"""

import contextlib
import gc
import logging
import os
from collections.abc import Iterator

#: Set in a process of this tool's own (the command line, the worker): see imports_frozen.
_OWN_PROCESS = False


def own_process() -> None:
    """Say that this process is this tool's own: `python -m generator` and the worker say so
    as they start (imports_frozen)."""
    global _OWN_PROCESS
    _OWN_PROCESS = True


def preload() -> None:
    """Import PyTorch, and the part of it that fake tensors load at their first use
    (torch._dynamo, a second), as imports_frozen does: before a command measures."""
    with imports_frozen():
        import torch  # noqa: F401
        import torch._dynamo  # noqa: F401


@contextlib.contextmanager
def imports_frozen() -> Iterator[None]:
    """Import long-lived modules with the garbage collector paused; in a process of this
    tool's own, then freeze what exists.

    Why: importing PyTorch creates hundreds of thousands of objects that live as long as the
    process; each batch of them triggers a collection that walks all the earlier ones again
    (about 0.4 s of `import torch` on a 2-core machine). None of it is garbage, so the
    collector waits, and `gc.freeze` then keeps its later collections off these objects. In
    a caller's process (the API) the collector is left as it was found: paused only meanwhile."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if _OWN_PROCESS:
            gc.freeze()
        if enabled:
            gc.enable()


@contextlib.contextmanager
def quiet(logger: logging.Logger, level: int = logging.CRITICAL) -> Iterator[None]:
    """Only records of `level` and above from `logger` meanwhile: a library's retries and
    tracebacks are no news to a user who gets the outcome as one line."""
    before = logger.level
    logger.setLevel(level)
    try:
        yield
    finally:
        logger.setLevel(before)


def quiet_bitsandbytes() -> contextlib.AbstractContextManager:
    """Import bitsandbytes (or PEFT, which imports it where it is installed) inside this: its
    CPU backend logs a warning about an optional 4-bit kernel package on import, noise on
    every run."""
    return quiet(logging.getLogger("bitsandbytes.backends.cpu.ops"), logging.ERROR)


#: Kineto's log levels run VERBOSE=0 … USDT=5; above them it writes nothing.
_KINETO_SILENT = "6"


@contextlib.contextmanager
def quiet_profiler() -> Iterator[None]:
    """Run torch.profiler inside this: Kineto, its C++ half, prints `profiler_start` and
    `profiler_stop` lines to standard output at its lowest log level unless KINETO_LOG_LEVEL
    says otherwise, read as it starts; in a caller's process those would land amid their own
    output. A level the caller set is left alone, and the variable is restored."""
    if "KINETO_LOG_LEVEL" in os.environ:
        yield
        return
    os.environ["KINETO_LOG_LEVEL"] = _KINETO_SILENT
    try:
        yield
    finally:
        os.environ.pop("KINETO_LOG_LEVEL", None)
