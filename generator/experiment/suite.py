"""What a suite file's tables mean, without the model zoo: where the built-in suite lives and
how its tables expand into experiments. Outside jobs/ and importing no PyTorch, so the site
(the calculator's grid) reads suite files by the same rule as the runner (jobs/load.py).

An `[[experiment]]` table is one experiment, or one per value of each field given a list
(one per combination of several); `sizes = [[batch, seq], ...]` gives batch_size and seq_len
in pairs. A `[[grid]]` declares models × settings × sizes once:

    [sizes]                      # named size sets, defined once, used by name
    llm = [[1, 256], [1, 8192], [8, 8192]]
    llm_accumulated = [[2, 256], [2, 8192], [16, 8192]]

    [[grid]]
    model = ["hf:Qwen/Qwen2.5-0.5B", "hf:google/gemma-2b"]   # fields every setting shares
    sizes = "llm"
    backend = "estimate"
    settings = [
      { precision = "amp-bf16", checkpointing = [false, true] },
      { precision = "amp-bf16", micro_batches = 2, sizes = "llm_accumulated" },
    ]

Each setting, laid over the grid's own fields (a field the setting gives replaces the grid's),
is one [[experiment]] table and expands as one: the grid above is 2 models × (3 sizes × 2 +
3 sizes) = 18 experiments. `sizes = "name"` names a set of `[sizes]`, in an [[experiment]]
table too. The setting `"levers"` stands for the levers study: one setting per studied lever
of experiment/levers.py, as it changes the grid's own step. A grid that would expand to more than MOST_EXPERIMENTS is refused before any
experiment is built.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import sys
from pathlib import Path
from typing import Any

from generator.errors import ConfigError
from generator.experiment import Experiment, list_fields
from generator.experiment.levers import study_settings
from generator.units import duration

#: The built-in suite: every file of this folder, in name order.
DEFAULT_SUITE = Path(__file__).parent / "suites"
#: The most experiments one suite file may expand into. Each is a process of a few seconds
#: (an estimate) to minutes, so 10,000 already run for a day; a product past it is a slip
#: (ten lists of ten values), refused before it is expanded, with its count.
MOST_EXPERIMENTS = 10_000
#: About how long one experiment takes, to say what a refused suite would cost.
SECONDS_AN_EXPERIMENT = 5
#: A grid's setting that stands for one setting per lever of the levers study.
STUDY = "levers"


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


def suite_keys(path: Path) -> frozenset[str]:
    """The keys of every [[experiment]] and [[grid]] of one suite file (a list expands to each
    value), read with tomllib alone: no model is built, so no PyTorch is needed."""
    return _keys_of_text(path.read_text(encoding="utf-8"))


@functools.cache  # by the file's text: pages ask for the same suites' keys many times
def _keys_of_text(text: str) -> frozenset[str]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    tables = file_tables(tomllib.loads(text))
    return frozenset(Experiment.from_dict(fields).key
                     for _, table in tables for fields in expand(table))


def file_tables(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A parsed suite file's experiment tables, each with the name its messages give it: the
    [[experiment]] tables ("experiment 2"), then each [[grid]]'s settings laid over the grid's
    own fields ("grid 1, setting 3"), named size sets resolved. Each then expands as one."""
    size_sets = data.get("sizes", {})
    if not isinstance(size_sets, dict):
        raise ConfigError("[sizes] is one table of named size sets: write [sizes], "
                          "not [[sizes]]")
    for key in ("experiment", "grid"):
        if not isinstance(data.get(key, []), list):
            raise ConfigError(f"{key} must be [[{key}]] tables, not {data[key]!r}")
    for set_name, pairs in size_sets.items():
        try:
            _sizes(pairs, {})
        except ConfigError as error:
            raise ConfigError(f"[sizes] {set_name}: {error}") from None
        if pairs == []:
            raise ConfigError(f"[sizes] {set_name} = [] gives no experiment; give at least "
                              "one [batch, seq] pair")
    found = [(f"experiment {number}", _named_sizes(f"experiment {number}", table, size_sets))
             for number, table in enumerate(data.get("experiment", []), start=1)]
    for number, grid in enumerate(data.get("grid", []), start=1):
        found += _grid_tables(f"grid {number}", grid, size_sets)
    return found


def _grid_tables(name: str, grid: Any,
                 size_sets: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """One table per setting of a [[grid]], refused whole if it would expand past the cap."""
    if not isinstance(grid, dict):
        raise ConfigError(f"{name}: each [[grid]] must be a table")
    fields = {f.name for f in dataclasses.fields(Experiment)} | {"sizes"}
    shared = {key: value for key, value in grid.items() if key != "settings"}
    unknown = sorted(set(shared) - fields)
    if unknown:
        raise ConfigError(f"{name}: unknown field(s) {', '.join(unknown)}; a grid takes "
                          "settings, sizes and the fields of an [[experiment]]")
    empty = [key for key, value in shared.items() if value == []]
    if empty:
        raise ConfigError(f"{name}: {', '.join(empty)} = [] gives no experiment; "
                          "give at least one value")
    settings = grid.get("settings")
    if settings == []:
        raise ConfigError(f"{name}: settings = [] gives no experiment; give at least one")
    if not isinstance(settings, list) or not all(
            isinstance(one, dict) or one == STUDY for one in settings):
        raise ConfigError(f"{name}: settings must be a list of tables, "
                          "settings = [{ precision = \"amp-bf16\" }, …]")
    if STUDY in settings:
        settings = _with_study(name, settings, shared)
    tables = []
    for number, setting in enumerate(settings, start=1):
        where = f"{name}, setting {number}"
        unknown = sorted(set(setting) - fields)
        if unknown:
            raise ConfigError(f"{where}: unknown field(s) {', '.join(unknown)}; a setting "
                              "takes sizes and the fields of an [[experiment]]")
        tables.append((where, _named_sizes(where, {**shared, **setting}, size_sets)))
    # Counted before any experiment is built: a grid past the bound is surely a slip (a list
    # where one value was meant), and building it would take minutes before anything said so.
    refuse_too_many(sum(count(table) for _, table in tables), f"{name} expands")
    return tables


def _with_study(name: str, settings: list[Any], shared: dict[str, Any]) -> list[dict[str, Any]]:
    """`settings` with "levers" in its place replaced by the levers study's settings
    (experiment/levers.py), each as the studied lever sets it on the grid's own step."""
    try:
        step = Experiment.from_dict(expand(shared)[0])
    except (ConfigError, TypeError, ValueError) as error:
        raise ConfigError(f"{name}: the levers study needs a step to apply its levers to: "
                          f"{error}") from None
    found: list[dict[str, Any]] = []
    for one in settings:
        found += study_settings(step) if one == STUDY else [one]
    return found


def _named_sizes(name: str, table: Any, size_sets: dict[str, Any]) -> Any:
    """`sizes = "llm"`: the set of [sizes] so named, in its place."""
    if not isinstance(table, dict) or not isinstance(table.get("sizes"), str):
        return table
    if table["sizes"] not in size_sets:
        known = ", ".join(sorted(size_sets)) or "none: the file has no [sizes] table"
        raise ConfigError(f"{name}: unknown size set sizes = {table['sizes']!r}; "
                          f"[sizes] names {known}")
    return {**table, "sizes": size_sets[table["sizes"]]}

