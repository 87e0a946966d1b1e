"""What only a real tensor can tell: its values, read as stated placeholders.

A simulated tensor has a shape and no values, so `.item()`, `float(t)`, `bool(t)`,
`.tolist()` and printing cannot be answered. Stopping the script there would stop most
training loops (they log the loss), so each read gets a placeholder instead: 0 for a number,
False for a truth value (`.tolist()` reads each element as an item: a list of zeros),
"<simulated>" for printing. The script goes on; the report lists each place in the user's
code that read one, so that a branch taken on a placeholder is no surprise.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

import torch

#: What printing a simulated tensor shows in place of its values.
SHOWN = "<simulated>"
#: Frames in these files and folders are not the user's: the place of a read is the first
#: frame outside them (PyTorch's, runpy's, the simulation's and the engine's it runs on).
_NOT_THE_USERS = (os.path.dirname(torch.__file__) + os.sep, runpy.__file__,
                  os.path.dirname(__file__) + os.sep,
                  os.path.join(os.path.dirname(os.path.dirname(__file__)), "measure") + os.sep)


@dataclass(frozen=True)
class Read:
    """One place in the user's code that read a value, and how often it did."""

    file: str
    line: int
    what: str
    """item (also each element `.tolist()` reads), print, or elapsed_time (a CUDA event's
    timing: 0.0 ms)."""
    count: int

    def __str__(self) -> str:
        times = f" ({self.count} times)" if self.count > 1 else ""
        return f"{self.file}:{self.line}: {self.what}{times}"


def placeholder(dtype: torch.dtype) -> bool | int | float | complex:
    """The stated value of an element of `dtype`."""
    if dtype == torch.bool:
        return False
    if dtype.is_complex:
        return 0j
    return 0.0 if dtype.is_floating_point else 0


class Placeholders:
    """Counts the reads, by place (thread-safe: backward runs on autograd's thread)."""

    def __init__(self) -> None:
        self._reads: Counter[tuple[str, int, str]] = Counter()
        self._lock = threading.Lock()

    def read(self, what: str) -> None:
        """Note a read of `what` at the user's innermost frame."""
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith(_NOT_THE_USERS):
            frame = frame.f_back
        place = ("<unknown>", 0) if frame is None else (frame.f_code.co_filename,
                                                        frame.f_lineno)
        with self._lock:
            self._reads[(*place, what)] += 1

    def item(self, dtype: torch.dtype) -> Any:
        self.read("item")
        return placeholder(dtype)

    def shown(self, tensor: torch.Tensor, device: str) -> str:
        self.read("print")
        dtype = str(tensor.dtype).removeprefix("torch.")
        return f"tensor({SHOWN}, size={tuple(tensor.shape)}, dtype={dtype}, device='{device}')"

    @property
    def reads(self) -> list[Read]:
        """Every place, in the order first read."""
        with self._lock:
            return [Read(file, line, what, count)
                    for (file, line, what), count in self._reads.items()]
