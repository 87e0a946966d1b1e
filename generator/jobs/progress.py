"""Progress while measuring: a live line on a terminal, one line per experiment elsewhere."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from generator.units import format_bytes

if TYPE_CHECKING:
    from generator.jobs.runner import Outcome


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total, self.index = total, 0
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.label = ""

    def start(self, label: str) -> None:
        self.index += 1
        self.label = label
        if self.live:
            self._write(f"\r\033[K[{self.index}/{self.total}] {label} …")

    def tick(self, elapsed: float) -> None:
        if self.live:
            self._write(f"\r\033[K[{self.index}/{self.total}] {self.label} … {elapsed:.0f} s")

    def finish(self, outcome: "Outcome") -> None:
        detail = outcome.message
        if outcome.result is not None:
            if outcome.result.get("error"):
                detail = f"does not fit: {outcome.result['error']}"
            elif "peak_bytes" in outcome.result:
                detail = f"peak {format_bytes(outcome.result['peak_bytes'])}"
            else:
                detail = "done"
        timing = f" in {outcome.seconds:.1f} s" if outcome.status == "measured" else ""
        line = f"[{self.index}/{self.total}] {outcome.status}{timing}: {self.label}: {detail}"
        self._write(("\r\033[K" if self.live else "") + line + "\n")

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()
