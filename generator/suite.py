"""Read experiments.toml into a list of validated experiments."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

from .config import Experiment
from .errors import ConfigError, GeneratorError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DEFAULT_SUITE = Path(__file__).with_name("experiments.toml")


def load_suite(path: Path | None = None) -> list[Experiment]:
    """All experiments of a suite file; every problem in it is reported at once."""
    path = Path(path) if path is not None else DEFAULT_SUITE
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: malformed TOML: {error}") from None
    tables = data.get("experiment")
    if not isinstance(tables, list) or not tables:
        raise ConfigError(f"{path}: no [[experiment]] tables")
    experiments, problems = [], []
    for number, table in enumerate(tables, start=1):
        for combination in _expand(table):
            try:
                experiments.append(Experiment.from_dict(combination))
                check_model(experiments[-1])
            except (GeneratorError, TypeError) as error:
                problems.append(f"experiment {number}: {error}")
    if problems:
        raise ConfigError(f"{path}: " + "; ".join(dict.fromkeys(problems)))
    return list(dict.fromkeys(experiments))


def _expand(table: dict[str, Any]) -> list[dict[str, Any]]:
    """{'precision': ['fp32', 'amp-bf16'], ...} → one dict per value (per combination)."""
    names = list(table)
    values = [v if isinstance(v, list) else [v] for v in table.values()]
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


def check_model(exp: Experiment) -> None:
    """The model exists (a user factory imports) and accepts the sequence length."""
    from .models import resolve_model

    spec = resolve_model(exp.model)
    if exp.attention != "eager" and spec.architecture is None:
        raise ConfigError(f"model {exp.model!r} has no attention option; attention = "
                          f"{exp.attention!r} works with the built-in transformers")
    if spec.max_seq_len is not None and exp.seq_len > spec.max_seq_len:
        raise ConfigError(f"seq_len {exp.seq_len} is longer than {exp.model} allows "
                          f"({spec.max_seq_len} positions)")
