"""What the simulation does not run as the GPU would: refused by name, or run another way
with a note in the report.

Refused (UnmodelledError: one line, exit status 2), because no figure would be right:
- an op FakeTensorMode has no kernel for (a custom op from `torch.ops.<namespace>` with no
  fake or meta kernel, as a custom CUDA extension's are; UnsupportedOperatorException), or
  one whose output's shape or value depends on the tensor's values (boolean-mask indexing,
  `torch.nonzero`: DynamicOutputShapeException, DataDependentOutputException), where the
  simulation does not have them (it has the script's data; `torch.unique` of values it does
  not have runs on their placeholders, placement.py).
  placement.py's DeviceStorages, which sees every op, turns FakeTensorMode's exception into
  this one line, naming the op and the script's line that called it.
- a custom CUDA extension compiled with `torch.utils.cpp_extension`, and a Triton kernel
  launched where Triton is installed: refused where they are called (device.py).

Run another way: `torch.compile` (and `Module.compile`) returns what it was given, so the
script's step runs eagerly; a compiled step keeps a different set of tensors (its fused
kernels save fewer activations, CUDA graphs keep a memory pool of their own), which later
work will model. The report lists where the script asked for it, with the note
`compiled_eagerly` (results/notes.py).
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import torch
from torch._subclasses.fake_tensor import (DataDependentOutputException,
                                           DynamicOutputShapeException,
                                           UnsupportedOperatorException)

from generator.errors import UnmodelledError
from generator.simulate.values import place

#: FakeTensorMode's exceptions for an op it cannot run without the tensors' values.
OPS_REFUSED = (UnsupportedOperatorException, DynamicOutputShapeException,
               DataDependentOutputException)
#: Why each is refused, in the one line.
_WHY = {UnsupportedOperatorException: "an op with no fake kernel (a custom op, as a custom "
                                      "CUDA extension's are)",
        DynamicOutputShapeException: "an op whose output's shape depends on the tensor's "
                                     "values (boolean-mask indexing, nonzero)",
        DataDependentOutputException: "an op whose output depends on the tensor's values"}
def refused(func: Any, error: Exception) -> UnmodelledError:
    """The one line for an op the simulation cannot run: the op, why, and where the script
    called it (its innermost frame outside PyTorch and this tool)."""
    file, line = place(sys._getframe(1))
    why = next((words for kind, words in _WHY.items() if isinstance(error, kind)),
               "an op the simulation cannot run")
    return UnmodelledError(f"{file}:{line} calls {func}, {why}: the simulated GPU cannot "
                           "run it")


class Compiled:
    """`torch.compile` made eager for the run (see the module), and where it was asked for."""

    def __init__(self) -> None:
        self._places: Counter[tuple[str, int]] = Counter()
        self._lock = threading.Lock()

    @property
    def places(self) -> list[tuple[str, int, int]]:
        """(file, line, how often) of each call, in the order first called."""
        with self._lock:
            return [(file, line, count) for (file, line), count in self._places.items()]

    def compile(self, model: Any = None, **_options: Any) -> Any:
        """torch.compile's signature; returns what it was given (a decorator without it)."""
        with self._lock:
            self._places[place(sys._getframe(1))] += 1
        if model is None:
            return lambda fn: fn
        return model

    @contextlib.contextmanager
    def eager(self) -> Iterator["Compiled"]:
        original = torch.compile
        torch.compile = self.compile
        try:
            yield self
        finally:
            torch.compile = original
