"""Measuring one training step, and the other measurements (studies).

    experiment ─► backends.measure ─► models (the workload) ─► step.Trainer (the step)
                                    └► tracker + timeline (labels every storage, sums bytes)
    study ─────► studies.<kind>.run

`backends/` holds the three ways to run a step (estimate with fake tensors, cpu, cuda),
`cuda_kernels.py` what the estimate models of CUDA, `environment.py` where a result was
measured. Everything here may import PyTorch, and importing this package imports it
(imports_frozen says why here); nothing downstream of the results does.
"""

import contextlib
import gc
import logging
from collections.abc import Iterator


@contextlib.contextmanager
def imports_frozen() -> Iterator[None]:
    """Import long-lived modules with the garbage collector paused, then freeze what exists.

    Why: importing PyTorch creates hundreds of thousands of objects that live as long as the
    process; each batch of them triggers a collection that walks all the earlier ones again
    (about 0.4 s of `import torch` on a 2-core machine). None of it is garbage, so the
    collector waits, and `gc.freeze` then keeps its later collections off these objects."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


@contextlib.contextmanager
def quiet(logger: logging.Logger) -> Iterator[None]:
    """Only critical records from `logger` meanwhile: a library's retries and tracebacks
    are no news to a user who gets the outcome as one line."""
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def quiet_bitsandbytes() -> None:
    """Call before importing bitsandbytes (or PEFT, which imports it where it is installed):
    its CPU backend logs a warning about an optional 4-bit kernel package on import, noise
    on every run."""
    logging.getLogger("bitsandbytes.backends.cpu.ops").setLevel(logging.ERROR)


with imports_frozen():
    import torch  # noqa: F401  (every module here imports it; the first import is here)
