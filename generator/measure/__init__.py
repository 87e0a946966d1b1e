"""Measuring one training step, and the other measurements (studies).

    experiment ─► backends.measure ─► models (the workload) ─► training.step (the step)
                                    └► tracking (labels every storage, sums bytes)
    study ─────► studies.<kind>.run

`backends/` holds the three ways to run a step (estimate with fake tensors, cpu, cuda),
`emulation/` what the estimate models of a device, `environment.py` where a result was
measured. Everything below this package may import PyTorch; nothing downstream of the results
does. This module itself imports nothing heavy: the API imports it inside a user's process.

Whatever a measurement changes in the process it restores (the garbage collector, torch's
dispatch tables and fake-tensor rules, autocast, default dtype, threads, loggers, sys.path,
os.environ and the warnings filters: `environment_kept`); only the command line and the
worker, whose processes are this tool's own, keep the imports' objects frozen out of the
garbage collector's way (`own_process`).
"""

import contextlib
import gc
import logging
import os
import sys
import warnings
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


@contextlib.contextmanager
def environment_kept() -> Iterator[None]:
    """os.environ and the warnings filters as they were, afterwards, whatever ran meanwhile:
    PyTorch's compiler, which fake tensors import at their first use, sets
    TORCHINDUCTOR_CACHE_DIR (torch/_inductor/runtime/cache_dir_utils.py), and importing
    torch, numpy or sympy adds warnings filters of their own; a caller asked for neither."""
    before = dict(os.environ)
    with warnings.catch_warnings():  # the filters list itself, put back on the way out
        try:
            yield
        finally:
            for name in set(os.environ) - set(before):
                del os.environ[name]
            for name, value in before.items():
                if os.environ.get(name) != value:
                    os.environ[name] = value


#: What `sys.modules` holds for a module that was never imported.
_NEVER = object()


@contextlib.contextmanager
def importing_bitsandbytes() -> Iterator[None]:
    """Import bitsandbytes (or PEFT, which imports it where it is installed) inside this.

    On a CPU with AVX512-BF16, bitsandbytes' CPU backend asks the `kernels` package, as it is
    imported, for a compiled 4-bit kernel from the Hugging Face Hub
    (`get_kernel("kernels-community/quantization-bitsandbytes")` in
    bitsandbytes/backends/cpu/ops.py): where `kernels` is installed and the machine online,
    that downloads native code and loads it. An estimate touches no network and loads no code
    it did not ship with, so meanwhile `kernels` cannot be imported (None in sys.modules is
    Python's mark for that) and bitsandbytes keeps its own library, as where `kernels` is not
    installed; a caller's own `kernels` module is back in place afterwards. The warning
    bitsandbytes logs about the missing kernel is noise on every run, and is quieted."""
    before = sys.modules.get("kernels", _NEVER)
    sys.modules["kernels"] = None  # type: ignore[assignment]
    try:
        with quiet(logging.getLogger("bitsandbytes.backends.cpu.ops"), logging.ERROR):
            yield
    finally:
        if before is _NEVER:
            sys.modules.pop("kernels", None)
        else:
            sys.modules["kernels"] = before  # type: ignore[assignment]


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
