"""What a suite file's tables mean, without the model zoo: where the built-in suite lives and
how one [[experiment]] table expands into its experiments. Outside jobs/ and importing no
PyTorch, so the site (the calculator's grid) reads suite files by the same rule as the
runner (jobs/suite.py)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from generator.errors import ConfigError
from generator.experiment import list_fields

#: The built-in suite: every file of this folder, in name order.
DEFAULT_SUITE = Path(__file__).parent / "suites"


def expand(table: Any) -> list[dict[str, Any]]:
    """{'precision': ['fp32', 'amp-bf16'], ...} → one dict per value (per combination)."""
    if not isinstance(table, dict):
        raise ConfigError("each [[experiment]] must be a table")
    # An empty list would expand to no experiment at all: a silent no-op, surely a slip.
    empty = [name for name, value in table.items() if value == []]
    if empty:
        raise ConfigError(f"{', '.join(empty)} = [] gives no experiment; give at least one value")
    names = list(table)
    values = [_choices(name, v) for name, v in table.items()]
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


def _choices(name: str, value: Any) -> list[Any]:
    """The values a field takes, one experiment each. A field whose value is itself a list
    of names (checkpoint_classes, lora_targets) takes a list of names as one value; a list
    of such lists expands."""
    if not isinstance(value, list):
        return [value]
    if name in list_fields() and all(isinstance(v, str) for v in value):
        return [value]
    return value
