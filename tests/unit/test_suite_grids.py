"""[[grid]] tables (generator/experiment/suite.py): models × settings × sizes declared once.

The built-in suites written as grids expand to exactly the experiments they listed one table
at a time before: tests/fixtures/suite_keys/<suite>.txt holds the sorted keys of each suite's
old expansion, written once at the commit before the rewrite (69be945) by
    python -c "from generator.experiment.suite import suite_keys; ..."
(for each suite: the sorted keys of suite_keys(DEFAULT_SUITE / '<suite>.toml'), one a line).
A change to a suite that means to change its experiments updates its fixture with it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import ConfigError
from generator.experiment.suite import (DEFAULT_SUITE, MOST_EXPERIMENTS, count, expand,
                                        file_tables)
from generator.experiment.suite import suite_keys

FIXTURES = Path(__file__).parent.parent / "fixtures" / "suite_keys"


@pytest.mark.parametrize("name", ["fine_tune", "calculator", "scale", "levers"])
def test_a_suite_rewritten_as_grids_expands_to_the_same_experiments(name: str) -> None:
    pinned = (FIXTURES / f"{name}.txt").read_text(encoding="utf-8").split()
    assert sorted(suite_keys(DEFAULT_SUITE / f"{name}.toml")) == pinned


def _expanded(data: dict) -> list[tuple[str, dict]]:
    return [(name, fields) for name, table in file_tables(data) for fields in expand(table)]


def test_each_setting_over_the_grids_fields_and_named_sizes() -> None:
    data = {"sizes": {"short": [[1, 8], [4, 8]], "doubled": [[2, 8]]},
            "grid": [{"model": ["a", "b"], "sizes": "short", "precision": "fp32",
                      "settings": [{"checkpointing": [False, True]},
                                   {"micro_batches": 2, "sizes": "doubled"},
                                   {}]}]}
    found = _expanded(data)
    assert len(found) == 2 * (2 * 2 + 1 + 2)
    assert ("grid 1, setting 2", {"model": "a", "batch_size": 2, "seq_len": 8,
                                  "precision": "fp32", "micro_batches": 2}) in found
    assert ("grid 1, setting 3", {"model": "b", "batch_size": 4, "seq_len": 8,
                                  "precision": "fp32"}) in found
    assert sum(count(table) for _, table in file_tables(data)) == len(found)


def test_experiment_tables_come_first_and_may_name_a_size_set_too() -> None:
    data = {"sizes": {"s": [[1, 8]]},
            "grid": [{"model": "a", "sizes": "s", "settings": [{}]}],
            "experiment": [{"model": "b", "sizes": "s"}]}
    assert _expanded(data) == [("experiment 1", {"model": "b", "batch_size": 1, "seq_len": 8}),
                               ("grid 1, setting 1", {"model": "a", "batch_size": 1,
                                                      "seq_len": 8})]


@pytest.mark.parametrize("data, needle", [
    ({"grid": [{"model": "a", "setting": [{}]}]}, "grid 1: unknown field(s) setting"),
    ({"grid": [{"model": "a", "settings": [{}, {"precison": "fp32"}]}]},
     "grid 1, setting 2: unknown field(s) precison"),
    ({"grid": [{"model": "a", "settings": []}]}, "grid 1: settings = [] gives no experiment"),
    ({"grid": [{"model": [], "settings": [{}]}]}, "grid 1: model = [] gives no experiment"),
    ({"grid": [{"model": "a"}]}, "grid 1: settings must be a list of tables"),
    ({"grid": [{"model": "a", "settings": ["fp32"]}]}, "grid 1: settings must be a list"),
    ({"grid": [{"model": "a", "sizes": "long", "settings": [{}]}], "sizes": {"short": [[1, 8]]}},
     "grid 1, setting 1: unknown size set sizes = 'long'; [sizes] names short"),
    ({"experiment": [{"model": "a", "sizes": "long"}]},
     "experiment 1: unknown size set sizes = 'long'; [sizes] names none"),
    ({"sizes": [{"short": [[1, 8]]}]}, "write [sizes], not [[sizes]]"),
    ({"sizes": {"short": []}}, "[sizes] short = [] gives no experiment"),
    ({"sizes": {"short": [1, 8]}}, "[sizes] short: sizes must be a list of [batch, seq] pairs"),
    ({"grid": {"model": "a"}}, "grid must be [[grid]] tables"),
])
def test_a_bad_grid_is_refused_naming_the_table_and_field(data: dict, needle: str) -> None:
    with pytest.raises(ConfigError) as raised:
        file_tables(data)
    assert needle in str(raised.value) and "\n" not in str(raised.value)


def test_a_huge_grid_is_refused_by_its_count_before_anything_is_built() -> None:
    """1,000 models × 1,000 sizes: a million experiments, counted from the lists' lengths
    alone (file_tables builds none)."""
    data = {"grid": [{"model": [f"m{i}" for i in range(1000)], "precision": "fp32",
                      "settings": [{"sizes": [[b, 8] for b in range(1, 1001)]}]}]}
    assert MOST_EXPERIMENTS < 1_000_000
    with pytest.raises(ConfigError, match=r"grid 1 expands to 1,000,000 experiments, more "
                                          r"than the 10,000"):
        file_tables(data)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_methodology_pages_grid_example_is_the_count_it_says(lang: str) -> None:
    import tomllib

    template = Path(__file__).parent.parent.parent / "templates" / "article" / \
        f"methodology.{lang}.md.j2"
    text = template.read_text(encoding="utf-8")
    example = text.split("```toml\n[sizes]\n", 1)[1].split("```", 1)[0]
    tables = file_tables(tomllib.loads("[sizes]\n" + example))
    assert sum(len(expand(table)) for _, table in tables) == 12
    said = text.split("```toml\n[sizes]", 1)[0].rstrip().rsplit("\n", 1)[1]
    assert "= 12" in said
