"""Studies: measurements that are not one training step's memory (training curves, gradient
underflow, the formats' facts). Each kind is a module here with

    VERSION: int                         raise when the module's figures change
    BACKENDS: tuple[str, ...]            optional: the backends the kind can run on
    def problems(params) -> list[str]    what is wrong with the parameters (empty: fine)
    def run(params) -> dict              the measurement, as JSON-ready data

A study runs like an experiment: in a fresh subprocess, stored as one JSON file
(`results/studies/<machine-id>/<name>.json`), reused until its parameters, its module's
VERSION or PyTorch change.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass, field
from typing import Any

from generator.errors import ConfigError
from generator.experiment import BACKENDS

_NAME = re.compile(r"[a-z0-9][a-z0-9.-]*")  # fullmatch: "$" allows a trailing "\n"


def unknown_params(kind: str, params: dict[str, Any], allowed: Any) -> list[str]:
    """The one problem every kind checks first: parameters it does not know."""
    unknown = sorted(set(params) - set(allowed))
    if not unknown:
        return []
    return [f"unknown {kind} param(s) {', '.join(unknown)}; allowed: {', '.join(allowed)}"]


def kinds() -> list[str]:
    """The study kinds this version knows: the modules of this package."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def module(kind: str):
    if kind not in kinds():
        raise ConfigError(f"unknown study kind {kind!r}; choose one of: {', '.join(kinds())}")
    return importlib.import_module(f"{__name__}.{kind}")


@dataclass(frozen=True, kw_only=True)
class Study:
    """One study to run: which kind, under which name, on which backend, with what."""

    kind: str
    """A module of generator/measure/studies."""
    name: str
    """The result's file name: lower-case letters, digits, dots and dashes."""
    backend: str = "cpu"
    """Where it runs: cpu or cuda for real runs, estimate for fake-tensor ones."""
    params: dict[str, Any] = field(default_factory=dict)
    """The kind's own parameters (see its module)."""

    def __post_init__(self) -> None:
        problems = []
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            problems.append(f"study name must be lower-case letters, digits, '.' and '-', "
                            f"got {self.name!r}")
        if self.backend not in BACKENDS:
            problems.append(f"unknown backend {self.backend!r}; choose one of: "
                            f"{', '.join(BACKENDS)}")
        if not isinstance(self.params, dict):
            problems.append("study params must be a table")
        else:
            try:
                kind = module(self.kind)
                problems += kind.problems(self.params)
                supported = getattr(kind, "BACKENDS", None)  # a kind may run on some only
                if supported is not None and self.backend not in supported:
                    problems.append(f"study kind {self.kind!r} runs on "
                                    f"{', '.join(supported)}, not {self.backend!r}")
            except ConfigError as error:
                problems.append(str(error))
        if problems:
            raise ConfigError("; ".join(problems))

    def __hash__(self) -> int:  # params is a dict; the name identifies a study
        return hash((self.kind, self.name, self.backend))

    @property
    def key(self) -> str:
        return self.name

    @property
    def label(self) -> str:
        return f"study {self.kind} {self.name} on {self.backend}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "backend": self.backend,
                "params": self.params}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Study":
        allowed = {"kind", "name", "backend", "params"}
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise ConfigError(f"unknown study field(s) {', '.join(unknown)}; params of the "
                              f"kind go into a [study.params] table")
        missing = [k for k in ("kind", "name") if k not in data]
        if missing:
            raise ConfigError(f"study is missing {', '.join(missing)}")
        return cls(**data)
