"""User models given as `package.module:function`.

The factory takes no arguments and returns `(model, make_batch, loss_fn)` or a `Workload`.
Importing happens when the name is resolved, so a typo fails before any experiment starts;
calling the factory happens at build time, when the profiler has set the device / fake mode.
Every failure is a ModelError of one line, since it is the user's mistake, not a bug here.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Iterator
from typing import Any, Callable

from torch import Tensor, nn

from generator.errors import ModelError
from generator.measure.training.workload import Workload

#: How the form of a user model is described in messages.
FACTORY_FORM = "package.module:function"


def is_factory_name(name: str) -> bool:
    """Whether `name` is meant as a user factory (it has the `module:function` colon)."""
    return ":" in name


def _first_line(exc: BaseException) -> str:
    """`Type: first line of message`, or just `Type` when the message is empty; a
    SystemExit says what it would have done."""
    if isinstance(exc, SystemExit):
        return f"SystemExit: {ended(exc)}"
    lines = str(exc).strip().splitlines()
    kind = type(exc).__name__
    return f"{kind}: {lines[0]}" if lines else kind


def ended(exit: SystemExit) -> str:
    """What a user's `sys.exit(code)` would have done had it not been caught: it would end the
    caller's process (and `python -m generator`, silently, with its code as the status)."""
    code = "" if exit.code is None else repr(exit.code).splitlines()[0][:80]
    return f"sys.exit({code}) would end this process"


@contextlib.contextmanager
def _cwd_on_path() -> Iterator[None]:
    """A model named from a project folder is found there, as `python -c "import my_pkg"`
    would find it (`python -m generator` has the folder on sys.path already; a caller of the
    API may not). sys.path is as it was afterwards."""
    cwd = os.getcwd()
    missing = not any(entry in ("", ".", cwd) for entry in sys.path)
    if missing:
        sys.path.insert(0, cwd)
    try:
        yield
    finally:
        if missing and cwd in sys.path:
            sys.path.remove(cwd)


#: The factories the API was handed as Python callables, by the name their experiment
#: carries, while the call that handed them lasts (callable_model).
_CALLABLES: dict[str, Callable[[], Any]] = {}


@contextlib.contextmanager
def callable_model(factory: Callable[[], Any]) -> Iterator[str]:
    """A Python callable as a model name, `module:qualname` (what its experiment and result
    call it), which resolves to the callable meanwhile."""
    name = (f"{getattr(factory, '__module__', None) or 'python'}:"
            f"{getattr(factory, '__qualname__', type(factory).__name__)}")
    before = _CALLABLES.get(name)
    _CALLABLES[name] = factory
    try:
        yield name
    finally:
        if before is None:
            del _CALLABLES[name]
        else:
            _CALLABLES[name] = before


def import_factory(name: str) -> Callable[[], Any]:
    """Import the module of `name` and return its factory (a callable the API was handed,
    under that name, as it is); raise ModelError on any failure."""
    if name in _CALLABLES:
        return _CALLABLES[name]
    module_name, _, attr_path = name.partition(":")
    module_name, attr_path = module_name.strip(), attr_path.strip()
    if not module_name or not attr_path or ":" in attr_path:
        raise ModelError(f"invalid model factory {name!r}; expected the form {FACTORY_FORM}")

    try:
        with _cwd_on_path():
            target: Any = importlib.import_module(module_name)
    except (Exception, SystemExit) as exc:  # any failure of user code is the user's to fix
        raise ModelError(
            f"cannot import module {module_name!r} for model {name!r}: {_first_line(exc)}"
        ) from exc

    # A dotted path ("mod:Factory.create") reaches class or namespace attributes too.
    owner = f"module {module_name!r}"
    for part in attr_path.split("."):
        try:
            target = getattr(target, part)
        except AttributeError as exc:
            raise ModelError(
                f"model factory {name!r} not found: {owner} has no attribute {part!r}"
            ) from exc
        owner = repr(part)
    if not callable(target):
        raise ModelError(
            f"model factory {name!r} is not callable; it is {type(target).__name__}"
        )
    return target


def _describe(value: Any) -> str:
    """A short type description for a wrong return value, e.g. `int` or `(int, function)`."""
    if isinstance(value, tuple):
        return "(" + ", ".join(type(v).__name__ for v in value) + ")"
    return type(value).__name__


def _to_workload(name: str, result: Any) -> Workload:
    if isinstance(result, Workload):
        parts: tuple[Any, ...] = (result.model, result.make_batch, result.loss_fn)
    elif isinstance(result, (tuple, list)) and len(result) == 3:
        parts = tuple(result)
    else:
        parts = ()
    model, make_batch, loss_fn = parts if parts else (None, None, None)
    if not (isinstance(model, nn.Module) and callable(make_batch) and callable(loss_fn)):
        raise ModelError(
            f"model factory {name!r} must return (model, make_batch, loss_fn); "
            f"it returned {_describe(result)}"
        )
    return Workload(model=model, make_batch=_checked_batches(name, make_batch), loss_fn=loss_fn)


def _checked_batches(name: str, make_batch: Callable) -> Callable:
    """The user's batch maker, its result checked: `(inputs, target)`, where inputs is a
    tuple of the model's arguments, a dict of them, or one tensor (the model's one argument,
    so that `model(*inputs)` does not split it along its first dimension)."""

    def checked(batch_size: int, seq_len: int, device):
        batch = make_batch(batch_size, seq_len, device)
        if not (isinstance(batch, (tuple, list)) and len(batch) == 2):
            raise ModelError(f"model factory {name!r}: make_batch must return "
                             f"(inputs, target); it returned {_describe(batch)}")
        inputs, target = batch
        return ((inputs,) if isinstance(inputs, Tensor) else inputs), target

    return checked


def factory_build(name: str, factory: Callable[[], Any]) -> Callable[[], Workload]:
    """A build function that calls `factory` and checks what it returns."""

    def build() -> Workload:
        try:
            result = factory()
        except (Exception, SystemExit) as exc:  # the factory is user code: report it
            raise ModelError(f"model factory {name!r} raised {_first_line(exc)}") from exc
        return _to_workload(name, result)

    return build
