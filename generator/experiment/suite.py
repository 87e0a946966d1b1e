"""What a suite file's tables mean, without the model zoo: where the built-in suite lives and
how one [[experiment]] table expands into its experiments. Outside jobs/ and importing no
PyTorch, so the site (the calculator's grid) reads suite files by the same rule as the
runner (jobs/suite.py)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

from generator.errors import ConfigError
from generator.experiment import list_fields
from generator.units import duration

#: The built-in suite: every file of this folder, in name order.
DEFAULT_SUITE = Path(__file__).parent / "suites"
#: The most experiments one suite file may expand into. Each is a process of a few seconds
#: (an estimate) to minutes, so 10,000 already run for a day; a product past it is a slip
#: (ten lists of ten values), refused before it is expanded, with its count.
MOST_EXPERIMENTS = 10_000
#: About how long one experiment takes, to say what a refused suite would cost.
SECONDS_AN_EXPERIMENT = 5


def expand(table: Any) -> list[dict[str, Any]]:
    """{'precision': ['fp32', 'amp-bf16'], ...} → one dict per value (per combination).
    `sizes = [[batch, seq], ...]` gives batch_size and seq_len in pairs: the points of a
    grid over sizes, which a product of two lists would not give."""
    if not isinstance(table, dict):
        raise ConfigError("each [[experiment]] must be a table")
    # An empty list would expand to no experiment at all: a silent no-op, surely a slip.
    empty = [name for name, value in table.items() if value == []]
    if empty:
        raise ConfigError(f"{', '.join(empty)} = [] gives no experiment; give at least one value")
    if "sizes" in table:
        table = {("size" if k == "sizes" else k): (_sizes(v, table) if k == "sizes" else v)
                 for k, v in table.items()}  # in its place: the order of the product
    names = list(table)
    values = [_choices(name, v) for name, v in table.items()]
    refuse_too_many(math.prod(len(v) for v in values))
    found = [dict(zip(names, combo)) for combo in itertools.product(*values)]
    for fields in found:
        if "size" in fields:
            fields["batch_size"], fields["seq_len"] = fields.pop("size")
    return found


def count(table: Any) -> int:
    """How many experiments `table` expands into, without expanding it (0 for a table that
    expand refuses, which says why)."""
    if not isinstance(table, dict):
        return 0
    return math.prod(len(table[name]) if name == "sizes" and isinstance(table[name], list)
                     else len(_choices(name, value)) for name, value in table.items())


def refuse_too_many(experiments: int, what: str = "its lists expand") -> None:
    """A suite past MOST_EXPERIMENTS, refused with its count and what it would take."""
    if experiments > MOST_EXPERIMENTS:
        raise ConfigError(f"{what} to {experiments:,} experiments, more than the "
                          f"{MOST_EXPERIMENTS:,} a suite may hold (at a few seconds each, "
                          f"about {duration(experiments * SECONDS_AN_EXPERIMENT)}); "
                          f"give fewer values")


def _sizes(value: Any, table: dict[str, Any]) -> list[tuple[int, int]]:
    """The [batch, seq] pairs of `sizes`, which then replace batch_size and seq_len."""
    if "batch_size" in table or "seq_len" in table:
        raise ConfigError("sizes gives batch_size and seq_len in pairs: give one or the other")
    if not isinstance(value, list) or not all(
            isinstance(pair, list) and len(pair) == 2 for pair in value):
        raise ConfigError(f"sizes must be a list of [batch, seq] pairs, not {value!r}")
    return [(pair[0], pair[1]) for pair in value]


def _choices(name: str, value: Any) -> list[Any]:
    """The values a field takes, one experiment each. A field whose value is itself a list
    of names (checkpoint_classes, lora_targets) takes a list of names as one value; a list
    of such lists expands."""
    if not isinstance(value, list):
        return [value]
    if name in list_fields() and all(isinstance(v, str) for v in value):
        return [value]
    return value
