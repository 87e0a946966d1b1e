"""Progress while measuring: a live line on a terminal, one line per experiment elsewhere.

Several jobs may run at once (estimates in parallel workers): the live line shows each, and
the lines they leave are numbered in the order they finish, so the count only goes up. One
long job that says nothing until it ends (a single estimate of a large model) shows the same
live line while it runs (`ticking`), erased when it ends.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, TextIO

from generator.units import format_bytes

if TYPE_CHECKING:
    from generator.jobs.runner import Outcome


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total, self.done = total, 0
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        #: The jobs running now: a token from start() -> (label, when it started).
        self.running: dict[int, tuple[str, float]] = {}
        self._tokens = itertools.count()

    def start(self, label: str) -> int:
        """A job begins; returns the token its finish() gives back."""
        token = next(self._tokens)
        self.running[token] = (label, time.perf_counter())
        self.tick()
        return token

    def tick(self) -> None:
        """Redraw the live line: each running job and how long it has run."""
        if self.live and self.running:
            now = time.perf_counter()
            jobs = " · ".join(f"{label} … {now - since:.0f} s"
                              for label, since in self.running.values())
            self._write(f"\r\033[K[{self.done + 1}/{self.total}] {jobs}")

    def finish(self, token: int, outcome: "Outcome") -> None:
        label, _ = self.running.pop(token)
        self.done += 1
        detail = outcome.message
        if outcome.result is not None:
            if outcome.result.get("error"):
                detail = f"does not fit: {outcome.result['error']}"
            elif "peak_bytes" in outcome.result:
                detail = f"peak {format_bytes(outcome.result['peak_bytes'])}"
            else:
                detail = "done"
        timing = f" in {outcome.seconds:.1f} s" if outcome.status == "measured" else ""
        line = f"[{self.done}/{self.total}] {outcome.status}{timing}: {label}: {detail}"
        self._write(("\r\033[K" if self.live else "") + line + "\n")
        self.tick()

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()


@contextlib.contextmanager
def ticking(label: str, stream: TextIO | None = None, *, every: float = 1.0) -> Iterator[None]:
    """While the block runs, on a terminal: `label … N s`, redrawn every `every` seconds from
    a thread of its own, and erased at the end, so the block's own output starts on a clean
    line. Off a terminal nothing (a log would keep every redraw)."""
    stream = stream or sys.stderr
    if not stream.isatty():
        yield
        return
    since, stop = time.perf_counter(), threading.Event()

    def draw() -> None:
        while True:
            stream.write(f"\r\033[K{label} … {time.perf_counter() - since:.0f} s")
            stream.flush()
            if stop.wait(every):
                return

    thread = threading.Thread(target=draw, name="ticking", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        stream.write("\r\033[K")
        stream.flush()
