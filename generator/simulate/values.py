"""What only a real tensor can tell: its values, read as stated placeholders.

A simulated tensor has a shape and no values, so `.item()`, `bool(t)`, `.tolist()`,
`.numpy()` and printing cannot be answered. Stopping the script there would stop most
training loops (they log the loss, check it for NaN, and GradScaler reads whether the
gradients overflowed), so each read gets a stated placeholder instead (KINDS: 0 for a
number, False for a truth value, "<simulated>" for printing; a NaN/inf check finds none, so
GradScaler's step goes on). The script goes on; the report lists each place in the user's code
that read one, so that a branch taken on a placeholder is no surprise.

Two levels see the reads. `Values`, a TorchFunctionMode, sees the script's own calls
(`t.item()`, `bool(t)`, `print(t)`, `torch.isnan(t).any()`) and says which kind each is;
below it, FakeTensorMode refuses the scalar read itself (DataDependentOutputException), and
placement.py's DeviceStorages answers it with `Placeholders.item`, which counts the read as
the kind `Values` said (an "item" where nothing above said: a read from inside an op).
A tensor FakeTensorMode knows the values of (a small constant) answers with its own.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any, Callable

import torch
from torch._subclasses.fake_tensor import FakeTensor
from torch.overrides import TorchFunctionMode
from torch.utils.weak import WeakIdKeyDictionary

from generator.results.notes import CATALOGUE

#: What printing a simulated tensor shows in place of its values.
SHOWN = "<simulated>"
#: Frames in these files and folders are not the user's: the place of a read is the first
#: frame outside them (PyTorch's, runpy's, the simulation's and the engine's it runs on).
_NOT_THE_USERS = (os.path.dirname(torch.__file__) + os.sep, runpy.__file__,
                  os.path.dirname(__file__) + os.sep,
                  os.path.join(os.path.dirname(os.path.dirname(__file__)), "measure") + os.sep)
#: GradScaler's step reads whether the gradients overflowed (`found_inf_per_device` …
#: `.item()`, torch/amp/grad_scaler.py `_maybe_opt_step`; FSDP's ShardedGradScaler inherits it).
_GRAD_SCALER = os.path.join(os.path.dirname(torch.__file__), "amp", "grad_scaler.py")

#: Each kind of read (results/notes.py says each, and its placeholder, as the note
#: `placeholder_<kind>`; the report and the page print those words).
KINDS = tuple(name.removeprefix("placeholder_") for name in CATALOGUE
              if name.startswith("placeholder_"))


@dataclass(frozen=True)
class Read:
    """One place in the user's code that read a value, and how often it did."""

    file: str
    line: int
    what: str
    """Its kind, one of KINDS."""
    count: int

    def __str__(self) -> str:
        times = f" ({self.count} times)" if self.count > 1 else ""
        return f"{self.file}:{self.line}: {self.what}{times}"


def place(frame: FrameType | None) -> tuple[str, int]:
    """The user's file and line at `frame` or the first frame out from it that is theirs."""
    while frame is not None and frame.f_code.co_filename.startswith(_NOT_THE_USERS):
        frame = frame.f_back
    return ("<unknown>", 0) if frame is None else (frame.f_code.co_filename, frame.f_lineno)


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
        self._local = threading.local()  # the kind of the read in progress

    def read(self, what: str) -> None:
        """Note a read of `what` at the user's innermost frame (GradScaler's reads, made
        inside its step, are its found_inf check whatever their kind)."""
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith(_NOT_THE_USERS):
            if frame.f_code.co_filename == _GRAD_SCALER:
                what = "found_inf"
            frame = frame.f_back
        with self._lock:
            self._reads[(*place(frame), what)] += 1

    @contextlib.contextmanager
    def reading(self, what: str) -> Iterator[None]:
        """A read of kind `what` in progress: the scalar read below it is counted as one."""
        before = getattr(self._local, "what", None)
        self._local.what = what
        try:
            yield
        finally:
            self._local.what = before

    def item(self, dtype: torch.dtype) -> Any:
        """The placeholder of a scalar read that FakeTensorMode refused (placement.py)."""
        self.read(getattr(self._local, "what", None) or "item")
        return placeholder(dtype)

    def shown(self, tensor: torch.Tensor) -> str:
        self.read("print")
        dtype = str(tensor.dtype).removeprefix("torch.")
        return f"tensor({SHOWN}, size={tuple(tensor.shape)}, dtype={dtype}, " \
               f"device='{tensor.device}')"

    @property
    def reads(self) -> list[Read]:
        """Every place, in the order first read."""
        with self._lock:
            return [Read(file, line, what, count)
                    for (file, line, what), count in self._reads.items()]


T = torch.Tensor
#: The script's reads of one value: their kind, and a known truth value as they give it.
_SCALAR_READS: dict[Callable, tuple[str, Callable[[bool], Any]]] = {
    T.item: ("item", bool), T.__float__: ("item", float), T.__int__: ("item", int),
    T.__index__: ("item", int), T.__complex__: ("item", complex), T.__bool__: ("bool", bool)}
#: The NaN/inf checks, and what they state: no NaN, no infinity (isnan: all False,
#: isfinite: all True).
_STATED: dict[Callable, bool] = {
    **dict.fromkeys((torch.isnan, T.isnan, torch.isinf, T.isinf, torch.isposinf, T.isposinf,
                     torch.isneginf, T.isneginf), False),
    **dict.fromkeys((torch.isfinite, T.isfinite), True)}
#: A check's answer carried to its reduction: these carry or flip the answers they get.
_CHECKS: dict[Callable, Callable[[list[bool]], bool]] = {
    **dict.fromkeys((torch.any, T.any, torch.all, T.all, T.to, T.cpu, T.cuda, T.detach,
                     T.clone, T.reshape, T.view, T.flatten, T.squeeze, T.unsqueeze,
                     T.contiguous, T.bool), lambda known: known[0]),
    **dict.fromkeys((torch.logical_not, T.logical_not, T.__invert__, torch.bitwise_not,
                     T.bitwise_not), lambda known: not known[0]),
    **dict.fromkeys((torch.logical_or, T.logical_or, T.__or__, T.__ror__, torch.bitwise_or,
                     T.bitwise_or), any),
    **dict.fromkeys((torch.logical_and, T.logical_and, T.__and__, T.__rand__,
                     torch.bitwise_and, T.bitwise_and), all),
}


class Values(TorchFunctionMode):
    """The script's reads of values, answered as placeholders of their kind (see the
    module), and its NaN/inf checks, answered as finding none."""

    def __init__(self, placeholders: Placeholders,
                 known: Callable[[FakeTensor], bool] = lambda tensor: False) -> None:
        """known: whether a fake tensor's values are kept beside it (the script's data on
        the GPU, placement.py): those are read as they are."""
        super().__init__()
        self.placeholders = placeholders
        self._known = known
        self._checks: WeakIdKeyDictionary = WeakIdKeyDictionary()  # tensor → its answer
        self._tolist: Callable | None = None
        self._depth = 0

    # FakeTensor's own `tolist` (a Python method, which no mode sees) reads item after item:
    # while the mode is on, it is one read of its own kind.
    def __enter__(self) -> "Values":
        # entered again while it is on (a checkpointed block recomputed in backward, in the
        # forward pass's modes: recompute.py): tolist is already this run's
        self._depth += 1
        if self._depth == 1:
            self._tolist = original = FakeTensor.__dict__["tolist"]

            def tolist(tensor: FakeTensor) -> Any:
                if not self._simulated(tensor):
                    return original(tensor)
                self.placeholders.read("tolist")
                return _zeros_list(tensor.shape, placeholder(tensor.dtype))

            FakeTensor.tolist = tolist
        try:
            return super().__enter__()
        except BaseException:
            self._leave()
            raise

    def __exit__(self, *exc: Any) -> None:
        try:
            super().__exit__(*exc)
        finally:
            self._leave()

    def _leave(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            FakeTensor.tolist = self._tolist

    def _simulated(self, value: object) -> bool:
        """A fake tensor whose values neither FakeTensorMode (a small constant) nor the
        simulation (data moved to the GPU) knows."""
        return (isinstance(value, FakeTensor) and value.constant is None
                and not self._known(value))

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        first = args[0] if args else None
        # A read of a simulated tensor's value is answered here, by its kind; anything else
        # runs, and a NaN/inf check's answer is noted on the tensor it gives.
        if not self._simulated(first):
            pass
        elif func is T.__repr__:
            return self.placeholders.shown(first)
        elif func is T.__format__:
            if first.dim() == 0:  # f"{loss:.4f}": a real tensor formats its value
                with self.placeholders.reading("print"):
                    return format(first.detach().item(), *args[1:])
            return self.placeholders.shown(first)
        elif func in _SCALAR_READS:
            what, given = _SCALAR_READS[func]
            known = self._checks.get(first)
            if known is not None:
                self.placeholders.read("nan_check")
                return given(known)
            with self.placeholders.reading(what):
                return func(*args, **kwargs)
        elif func in (T.numpy, T.__array__):
            self.placeholders.read("numpy")
            return _zeros_array(first)
        if func in (torch.equal, T.equal) and any(map(self._simulated, args)):
            self.placeholders.read("bool")
            return False
        out = func(*args, **kwargs)
        if isinstance(out, FakeTensor) and out.dtype == torch.bool:
            if func in _STATED:
                self._checks[out] = _STATED[func]
            elif func in _CHECKS:
                known = [self._checks.get(t) for t in args if isinstance(t, torch.Tensor)]
                if known and None not in known:
                    self._checks[out] = _CHECKS[func](known)
        return out


def _zeros_list(shape: torch.Size, value: Any) -> Any:
    """`.tolist()` of a tensor of `shape` whose elements are all `value`."""
    if not shape:
        return value
    return [_zeros_list(shape[1:], value) for _ in range(shape[0])]


def _zeros_array(tensor: torch.Tensor) -> Any:
    """`.numpy()` of `tensor`, all zeros: NumPy's dtype of the same name (bfloat16, which
    NumPy lacks, raises a TypeError, as `.numpy()` does)."""
    import numpy  # torch's own dependency for .numpy(); not needed before a script asks

    name = str(tensor.dtype).removeprefix("torch.")
    try:
        dtype = numpy.dtype(name)
    except TypeError:
        raise TypeError(f"Got unsupported ScalarType {name}") from None
    return numpy.zeros(tuple(tensor.shape), dtype=dtype)
