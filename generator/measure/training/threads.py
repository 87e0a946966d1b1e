"""Run a CPU study on one thread, and give the process its threads back afterwards."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """One intra-op thread while the block runs. On a shared two-core machine a second
    OpenMP thread mostly spins at barriers: BERT-base's backward took six times as long on
    two threads as on one while other processes ran. One thread also sums every reduction
    in the same order on every machine, which keeps repeated runs identical."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
