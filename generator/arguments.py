"""The public API's arguments, checked as the command line checks its flags: a keyword a
function does not take, or an argument missing or given twice, is a ConfigError that names it
and what the function takes. Python's own TypeError would say less, and is no GeneratorError:
a caller who catches the API's mistakes would miss it.

    @checked(options=("precision", "optimizer", …))
    def estimate(model, *, batch_size, seq_len, gpu=None, **options): …
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeVar

from generator.errors import ConfigError

Function = TypeVar("Function", bound=Callable[..., Any])


def checked(*, options: Collection[str] = (), hints: Mapping[str, str] | None = None
            ) -> Callable[[Function], Function]:
    """A decorator: the function's arguments checked before it runs. `options`: the names
    its `**options` may hold, where it has them; `hints`: a sentence for a name a caller may
    reach for in the wrong place (backend=, which each function sets itself)."""

    def decorate(function: Function) -> Function:
        signature = inspect.signature(function)
        takes_options = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
        allowed = set(options) if takes_options else set()
        named = [p.name for p in signature.parameters.values()
                 if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "self"]
        extra = sorted(allowed - set(named))
        takes = ", ".join(named) + (f", and the step's options: {', '.join(extra)}"
                                    if extra else "")
        name = f"{function.__name__}()"

        @functools.wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            unknown = sorted(set(kwargs) - set(named) - allowed)
            if unknown:
                hint = "".join(f" ({hints[u]})" for u in unknown if hints and u in hints)
                raise ConfigError(f"unknown argument(s) {', '.join(unknown)} to {name}{hint}; "
                                  f"it takes {takes}")
            try:
                signature.bind(*args, **kwargs)
            except TypeError as error:
                raise ConfigError(f"{name}: {error}; it takes {_form(signature)}") from None
            return function(*args, **kwargs)

        return call  # type: ignore[return-value]

    return decorate


def _form(signature: inspect.Signature) -> str:
    """`(model, *, batch_size, seq_len, gpu=None, **options)`: the signature as a caller
    writes it (no annotations, no self)."""
    empty = inspect.Parameter.empty
    parameters = [p.replace(annotation=empty) for p in signature.parameters.values()
                  if p.name != "self"]
    return str(signature.replace(parameters=parameters, return_annotation=empty))
