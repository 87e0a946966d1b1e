"""Which results are the calculator's: the experiments of its suites (calculator.toml, the
article's two models; fine_tune.toml, the models people fine-tune).

Read with tomllib and experiment.suite alone, not with jobs.load (which imports the model zoo
and so PyTorch): rendering needs no PyTorch. Results of the grid that no other suite file asks
for belong to the calculator alone; the other pages do not see them (render.py), so that
72 fitting points do not become 72 report sections and a dozen new sweeps.
"""

from __future__ import annotations

import sys
from pathlib import Path

from generator.experiment import Experiment
from generator.experiment.suite import DEFAULT_SUITE, expand, file_tables

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SUITES = (DEFAULT_SUITE / "calculator.toml", DEFAULT_SUITE / "fine_tune.toml")


def suite_keys(path: Path) -> frozenset[str]:
    """The keys of every [[experiment]] and [[grid]] of one suite file (a list expands to each
    value)."""
    tables = file_tables(tomllib.loads(path.read_text(encoding="utf-8")))
    return frozenset(Experiment.from_dict(fields).key
                     for _, table in tables for fields in expand(table))


def grid_keys() -> frozenset[str]:
    return frozenset().union(*(suite_keys(path) for path in SUITES))


def calculator_only_keys() -> frozenset[str]:
    """Keys of the grid that no other built-in suite file measures too."""
    others = set()
    for path in sorted(DEFAULT_SUITE.glob("*.toml")):
        if path not in SUITES:
            others |= suite_keys(path)
    return grid_keys() - others
