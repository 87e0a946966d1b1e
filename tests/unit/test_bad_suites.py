"""Bad experiments.toml files given to `measure --config` and `build --config`, run in this
process: every mistake is found while reading the suite, before anything is measured, and
reported on one line (conftest.assert_refused) with the file's name. All the problems of a
suite come out at once, each with the number of its experiment.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import assert_refused

#: One experiment table per mistake (the fields given besides model, batch_size, seq_len),
#: and what its part of the line must say.
BAD_TABLES = {
    'model = "nosuchmodel"': "unknown model 'nosuchmodel'",
    'precision = "fp8"': "unknown precision 'fp8'",
    'optimizer = "lion"': "unknown optimizer 'lion'",
    "batch_size = 0": "batch_size must be a positive integer, got 0",
    "batch_size = -3": "batch_size must be a positive integer, got -3",
    "batch_size = 1.5": "batch_size must be a positive integer, got 1.5",
    'batch_size = "two"': "batch_size must be a positive integer, got 'two'",
    "seq_len = 0": "seq_len must be a positive integer, got 0",
    "seq_len = 2.5": "seq_len must be a positive integer, got 2.5",
    "seq_len = 4096": "seq_len 4096 is longer than tiny allows (128 positions)",
    "batch_size = 9223372036854775807\nseq_len = 9223372036854775807":
        "seq_len 9223372036854775807 is longer than tiny allows",
    "batch_size = []": "batch_size = [] gives no experiment",
    'gpu_memory = "24XB"': "unknown memory unit 'XB' in '24XB'",
    'gpu_memory = "-1GiB"': "cannot read memory size '-1GiB'",
    "learning_rate = 0.1": "unknown experiment field(s) learning_rate",
}


def table(fields: str = "") -> str:
    """One [[experiment]] of the tiny model, with `fields` ("name = value" lines) added or
    replacing its own."""
    found = {"model": '"tiny"', "batch_size": "2", "seq_len": "16"}
    for line in fields.splitlines():
        name, value = line.split(" = ", 1)
        found[name] = value
    return "[[experiment]]\n" + "".join(f"{k} = {v}\n" for k, v in found.items())


def suite(root: Path, text: str | bytes, name: str = "suite.toml") -> str:
    path = root / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return name


def test_every_mistake_of_a_suite_on_one_line(cli, seeded: Path) -> None:
    name = suite(seeded, "\n".join(table(t) for t in BAD_TABLES))
    line = assert_refused(cli, seeded, ["measure", "--config", name], name, *BAD_TABLES.values())
    for number in range(1, len(BAD_TABLES) + 1):
        assert f"experiment {number}:" in line, number


def test_every_problem_of_one_experiment_in_the_line(cli, seeded: Path) -> None:
    name = suite(seeded, table("batch_size = 0\nprecision = \"fp8\""))
    assert_refused(cli, seeded, ["measure", "--config", name], name, "batch_size", "fp8")


@pytest.mark.parametrize("command", ["measure", "build"])
def test_malformed_toml_names_line_and_column(cli, seeded: Path, command: str) -> None:
    name = suite(seeded, '[[experiment]]\nmodel = "tiny"\nbatch_size = = 2\nseq_len = 8\n')
    assert_refused(cli, seeded, [command, "--config", name], name, "line 3, column 14")


def test_missing_config_file(cli, seeded: Path) -> None:
    assert_refused(cli, seeded, ["measure", "--config", "nowhere.toml"], "nowhere.toml")


def test_toml_that_is_not_utf8(cli, seeded: Path) -> None:
    name = suite(seeded, '[[experiment]]\nmodel = "tïny"\n'.encode("latin-1"))
    assert_refused(cli, seeded, ["measure", "--config", name], name, "UTF-8")


def test_single_bracket_table(cli, seeded: Path) -> None:
    name = suite(seeded, table().replace("[[experiment]]", "[experiment]"))
    assert_refused(cli, seeded, ["measure", "--config", name], name, "[[experiment]]")


def test_unknown_table(cli, seeded: Path) -> None:
    name = suite(seeded, table() + "[[experiments]]\nmodel = \"tiny\"\n")
    assert_refused(cli, seeded, ["measure", "--config", name], name, "experiments")


def test_a_suite_without_jobs(cli, seeded: Path) -> None:
    name = suite(seeded, "# nothing to measure\n")
    assert_refused(cli, seeded, ["measure", "--config", name], name, "[[experiment]]")


def test_unimportable_model_module(cli, seeded: Path) -> None:
    name = suite(seeded, table('model = "no_such_pkg.mod:build"'))
    assert_refused(cli, seeded, ["measure", "--config", name], name, "no_such_pkg")


def test_a_factory_that_is_not_callable_is_found_while_reading(cli, seeded: Path,
                                                              user_package) -> None:
    """Importing the user's module is part of reading the suite: no worker is started."""
    user_package(seeded)
    name = suite(seeded, table('model = "userpkg.mod:not_callable"'))
    assert_refused(cli, seeded, ["measure", "--config", name], name, "not callable")


def test_bad_studies_are_reported_with_the_experiments(cli, seeded: Path) -> None:
    name = suite(seeded, table("batch_size = 0") +
                 '[[study]]\nkind = "no_such_kind"\nname = "s"\n')
    line = assert_refused(cli, seeded, ["measure", "--config", name], name, "experiment 1:",
                          "study 1:", "no_such_kind")
    assert "batch_size" in line


def test_a_backend_the_suite_does_not_use(cli, seeded: Path) -> None:
    name = suite(seeded, table())
    assert_refused(cli, seeded, ["measure", "--config", name, "--backend", "cuda"], name,
                   "no jobs on backend 'cuda'")


def test_an_unknown_backend_to_measure_on(cli, seeded: Path) -> None:
    name = suite(seeded, table())
    assert_refused(cli, seeded, ["measure", "--config", name, "--backend", "gpu"],
                   "invalid choice: 'gpu'")


@pytest.mark.parametrize("fields, needle", [
    ('dataset = "mem-run-estimator-H100"\nmodels = ["gemma_2b"]', "[[reference]] takes"),
    ('backend = "cuda"', "[[reference]] takes"),
    ('dataset = "mem-run-estimator-H100"\nbackend = "tpu"', "unknown backend 'tpu'"),
])
def test_bad_reference_tables(cli, seeded: Path, fields: str, needle: str) -> None:
    name = suite(seeded, "[[reference]]\n" + fields + "\n")
    assert_refused(cli, seeded, ["measure", "--config", name], name, needle)


def test_a_suite_that_would_run_for_days_is_refused_with_its_count(cli, seeded: Path) -> None:
    """Lists that multiply past MOST_EXPERIMENTS are refused with their count before a single
    combination is made (2,560,000 took a minute to load, with nothing said): in one table,
    and over the tables of one file."""
    from generator.experiment.suite import MOST_EXPERIMENTS, count

    values = "[" + ", ".join(str(n) for n in range(1, 41)) + "]"
    wide = table(f"batch_size = {values}\nseq_len = {values}\n"
                 f'precision = ["fp32", "amp-bf16", "amp-fp16", "fp16", "bf16"]\n'
                 f'optimizer = ["adamw", "adamw-fused", "sgd", "sgd-momentum"]\n'
                 f"micro_batches = {values}")
    name = suite(seeded, wide)
    assert_refused(cli, seeded, ["measure", "--config", name], name,
                   "its tables expand to 1,280,000 experiments, more than the 10,000")
    many = "".join(table(f"batch_size = {values}\nseq_len = {values}") for _ in range(7))
    assert count({"batch_size": list(range(40)), "seq_len": list(range(40))}) * 7 \
        > MOST_EXPERIMENTS
    name = suite(seeded, many, "many.toml")
    assert_refused(cli, seeded, ["measure", "--config", name], name,
                   "its tables expand to 11,200 experiments")


def test_one_table_past_the_bound_is_refused_wherever_it_is_expanded() -> None:
    from generator.errors import ConfigError
    from generator.experiment.suite import count, expand

    table = {"model": "tiny", "sizes": [[b, 16] for b in range(1, 201)],
             "precision": ["fp32", "amp-bf16"], "gpus": list(range(1, 31)),
             "optimizer": "adamw"}
    assert count(table) == 12_000
    with pytest.raises(ConfigError, match="its lists expand to 12,000 experiments, more than "
                                          "the 10,000 a suite may hold .*about 17 hours"):
        expand(table)
    assert count({"model": "tiny", "checkpoint_classes": ["A", "B"], "batch_size": [1, 2]}) == 2


GRID = '[[grid]]\nmodel = "tiny"\nsizes = [[2, 16]]\n'


@pytest.mark.parametrize("text, needles", [
    (GRID + 'settings = [{ precision = "fp32" }, { precison = "fp32" }]\n',
     ["grid 1, setting 2: unknown field(s) precison"]),
    (GRID.replace("[[2, 16]]", '"short"') + "settings = [{}]\n",
     ["grid 1, setting 1: unknown size set sizes = 'short'"]),
    (GRID + 'settings = [{ precision = "fp8" }]\n',
     ["grid 1, setting 1: unknown precision 'fp8'"]),
    (GRID.replace("[[grid]]", "[grid]") + "settings = [{}]\n", ["[[grid]]"]),
    # counted, not built: a million experiments of the tiny model would take minutes
    ('[[grid]]\nmodel = "tiny"\nseq_len = 16\nsettings = [{ batch_size = [%s] }]\n'
     'precision = ["fp32", "amp-fp16", "amp-bf16"]\n' % ", ".join(map(str, range(1, 40_001))),
     ["grid 1 expands to 120,000 experiments, more than the 10,000"]),
], ids=["misspelt-field", "unknown-size-set", "unknown-precision", "table-not-array",
        "too-many"])
def test_bad_grids(cli, seeded: Path, text: str, needles: list[str]) -> None:
    name = suite(seeded, text)
    assert_refused(cli, seeded, ["measure", "--config", name], name, *needles)


@pytest.mark.parametrize("text", [
    table("batch_size = " + "[" * 2000 + "2" + "]" * 2000),
    table("extra = " + "{a = " * 2000 + "1" + "}" * 2000),
], ids=["arrays", "inline-tables"])
def test_a_suite_nested_too_deep(cli, seeded: Path, text: str) -> None:
    """tomllib recurses once a level: 2,000 levels are a RecursionError, not a traceback."""
    name = suite(seeded, text)
    assert_refused(cli, seeded, ["measure", "--config", name], name, "nested too deep")


@pytest.mark.parametrize("kind", ["device", "fifo", "folder", "huge"])
def test_a_suite_that_is_no_regular_file_or_too_big(cli, seeded: Path, kind: str,
                                                    monkeypatch) -> None:
    """--config /dev/zero would never end (MemoryError); a FIFO would block until written to;
    a suite larger than MAX_SUITE_BYTES is no list of tables."""
    import os

    from generator.jobs import load

    config = {"device": "/dev/zero", "fifo": "pipe.toml", "folder": ".", "huge": "big.toml"}[kind]
    if kind == "fifo":
        os.mkfifo(seeded / config)
    elif kind == "huge":
        monkeypatch.setattr(load, "MAX_SUITE_BYTES", 2**20)
        suite(seeded, table() + "# padding\n" * 2**17, config)
    needle = "larger than 1 MiB" if kind == "huge" else "not a regular file"
    assert_refused(cli, seeded, ["measure", "--config", config], config, needle,
                   watch=(config,) if kind == "huge" else ())


STUDY = '[[study]]\nkind = "torch_facts"\nname = "facts"\nbackend = "estimate"\n'


UNDERFLOW = STUDY.replace("torch_facts", "underflow") + "[study.params]\nbatch_size = 2\n"


@pytest.mark.parametrize("first, second", [
    (STUDY, UNDERFLOW),
    (UNDERFLOW, UNDERFLOW.replace("batch_size = 2", "batch_size = 4")),
], ids=["another-kind", "other-params"])
def test_two_studies_of_one_name(cli, seeded: Path, first: str, second: str) -> None:
    """Both would write studies/estimate/facts.json, each run overwriting the other's while
    both are reported measured: refused before anything runs, naming both."""
    name = suite(seeded, first + second)
    line = assert_refused(cli, seeded, ["measure", "--config", name], name, "facts.json")
    assert line.count("study 'facts'") == 2, line


@pytest.mark.parametrize("name", ['"facts\\n"', '"Facts"', '"../facts"', '"facts\\u0000"'])
def test_a_study_name_that_is_no_plain_name(cli, seeded: Path, name: str) -> None:
    """`$` in a pattern matches before a trailing newline: "facts\\n" would write facts\\n.json."""
    text = STUDY.replace('"facts"', name)
    assert_refused(cli, seeded, ["measure", "--config", suite(seeded, text)], "study name")


@pytest.mark.parametrize("model", ['"tiny\\n"', '"tiny\\u001b[2J"', '"hf:gpt2\\r"'])
def test_a_model_name_with_a_control_character(cli, seeded: Path, model: str) -> None:
    name = suite(seeded, table(f"model = {model}"))
    assert_refused(cli, seeded, ["measure", "--config", name], name, "control character")


def test_a_stored_result_of_another_experiment_under_the_same_key(cli, seeded: Path) -> None:
    """Keys that fold alike (Experiment.key) would let one experiment overwrite another's
    result: the stored file names the experiment it holds, and measuring is refused."""
    import json

    from generator.experiment import Experiment
    from generator.jobs.runner import job_path
    from made_results import hand_made_result, write_old

    name = suite(seeded, table())
    mine = Experiment(model="tiny", batch_size=2, seq_len=16)
    stored = hand_made_result(batch_size=4)
    stored["key"] = mine.key  # as a key that folded alike would have it
    write_old(job_path(seeded / "docs" / "data", mine), json.dumps(stored))
    for force in ([], ["--force"]):
        assert_refused(cli, seeded, ["measure", "--config", name, *force], "holds the result of",
                       "'tiny batch 4 seq 16", "'tiny batch 2 seq 16", "move that file away")
