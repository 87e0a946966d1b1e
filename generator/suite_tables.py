"""What a suite file's tables mean, without the model zoo: where the built-in suite lives and
how one [[experiment]] table expands into its experiments. Outside jobs/ and importing no
PyTorch, so the site (the calculator's grid) reads suite files by the same rule as the
runner (jobs/suite.py)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from generator.errors import ConfigError

#: The built-in suite: every file of this folder, in name order.
DEFAULT_SUITE = Path(__file__).parent / "jobs" / "suites"


def expand(table: Any) -> list[dict[str, Any]]:
    """{'precision': ['fp32', 'amp-bf16'], ...} → one dict per value (per combination)."""
    if not isinstance(table, dict):
        raise ConfigError("each [[experiment]] must be a table")
    # An empty list would expand to no experiment at all: a silent no-op, surely a slip.
    empty = [name for name, value in table.items() if value == []]
    if empty:
        raise ConfigError(f"{', '.join(empty)} = [] gives no experiment; give at least one value")
    names = list(table)
    values = [v if isinstance(v, list) else [v] for v in table.values()]
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]
