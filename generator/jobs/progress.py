"""Progress while measuring: a live line on a terminal, one line per experiment elsewhere.

Several jobs may run at once (estimates in parallel workers): the live line shows each, and
the lines they leave are numbered in the order they finish, so the count only goes up.
"""

from __future__ import annotations

import itertools
import sys
import time
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
