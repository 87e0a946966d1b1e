"""Bad results given to `render` (and to `measure`, which reads stored results to reuse them),
run in this process: a results file that is not a result of this schema, a study of an
unknown schema, a results folder that is missing or empty. Each is refused on one line that
names the file (conftest.assert_refused), before any page is written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest
from conftest import assert_refused
from made_results import hand_made_result, write_old


def bad_file(root: Path, name: str, content: str | bytes, machine: str = "estimate") -> str:
    write_old(root / "results" / machine / name, content)
    return name


def test_the_seeded_results_and_hand_made_ones_load(seeded: Path) -> None:
    """The control of the tests below: their files are refused for their defect, not
    because any result (or the hand-made kind) would be."""
    from generator import results

    for result, machine in ((hand_made_result(batch_size=4), "estimate"),
                            (hand_made_result(backend="cpu", device="cpu"), "cpu-test")):
        bad_file(seeded, f"{result['key']}.json", json.dumps(result), machine=machine)
    assert len(results.load_all(seeded / "results")) == 3


def test_unknown_schema(cli, seeded: Path) -> None:
    name = bad_file(seeded, "future.json", json.dumps({"schema_version": 99}))
    assert_refused(cli, seeded, ["render"], name, "schema", "99")


def test_truncated_json(cli, seeded: Path) -> None:
    name = bad_file(seeded, "cut.json", json.dumps(hand_made_result(), indent=1)[:120])
    assert_refused(cli, seeded, ["render"], name, "not valid JSON")


@pytest.mark.parametrize(("content", "needle"), [
    (b"\x89PNG\r\n\x1a\n\x00\x00", "UTF-8"),
    (b"peak_bytes = 12\n", "not valid JSON"),
    (b"", "not valid JSON"),
    (b"[1, 2]", "JSON object"),
], ids=["binary", "toml-not-json", "empty", "a-list"])
def test_a_file_that_is_not_a_json_object(cli, seeded: Path, content: bytes, needle: str) -> None:
    name = bad_file(seeded, "bad.json", content)
    assert_refused(cli, seeded, ["render"], name, needle)


def _drop(field: str) -> Callable[[dict[str, Any]], None]:
    return lambda data: data.pop(field)


def _set(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda data: data.update({field: value})


@pytest.mark.parametrize(("change", "needles"), [
    (_drop("peak_bytes"), ("peak_bytes",)),
    (_set("peak_bytes", "lots"), ("peak_bytes",)),
    (_set("environment", None), ("environment",)),
    (_set("live_at_peak_bytes", {"parameters": 1}), ("live_at_peak_bytes",)),
    (lambda d: d["timeline"].pop("end_tick"), ("end_tick",)),
    (lambda d: d["timeline"]["bytes"]["activations"].pop(), ("timeline.bytes",)),
    (_set("phases", [{"name": "forward"}]), ("phases",)),
    (_set("step_seconds", -1), ("step_seconds",)),
    (_set("trainable_parameter_count", "most"), ("trainable_parameter_count",)),
    (_set("attention", 2), ("attention",)),
    (lambda d: d["experiment"].update(precision="fp8"), ("fp8",)),
    (_set("key", "../../docs/evil"), ("not a plain name",)),
], ids=["missing", "a-string", "environment", "categories", "end_tick", "short-series",
        "phases", "negative-seconds", "trainable", "attention", "experiment", "key"])
def test_a_field_missing_or_of_the_wrong_shape(cli, seeded: Path, change, needles) -> None:
    """Every defect of a file is a ResultsError naming it (results.load), not a crash of the
    renderer further on."""
    data = hand_made_result(backend="cpu", device="cpu")
    change(data)
    name = bad_file(seeded, "typed.json", json.dumps(data), machine="cpu-test")
    assert_refused(cli, seeded, ["render"], name, *needles)


def test_a_study_of_an_unknown_schema(cli, seeded: Path) -> None:
    write_old(seeded / "results" / "studies" / "cpu-test" / "future.json", '{"schema_version": 7}')
    assert_refused(cli, seeded, ["render"], "future.json", "schema_version 7")


def test_a_study_without_its_fields(cli, seeded: Path) -> None:
    write_old(seeded / "results" / "studies" / "cpu-test" / "bare.json", '{"schema_version": 1}')
    assert_refused(cli, seeded, ["render"], "bare.json", "missing field")


def test_no_results_folder(cli, project: Path) -> None:
    """A typo in --results must not render an empty site over the pages there."""
    write_old(project / "docs" / "en" / "index.md", "# pages of earlier results\n")
    assert_refused(cli, project, ["render", "--results", "resluts"], "resluts")


def test_a_results_folder_with_no_result(cli, project: Path) -> None:
    (project / "results" / "estimate").mkdir(parents=True)
    write_old(project / "results" / "estimate" / "notes.txt", "not a result\n")
    write_old(project / "docs" / "en" / "index.md", "# pages of earlier results\n")
    assert_refused(cli, project, ["render"], "results", "no result")


def test_measure_refuses_a_stored_result_it_would_reuse(cli, seeded: Path) -> None:
    """Reusing a stored result reads `environment` as a mapping: a file where it is not one is
    reported as a bad file, not a crash (and nothing is measured)."""
    from generator.experiment import Experiment
    from generator.jobs.runner import job_path

    (seeded / "one.toml").write_text(
        '[[experiment]]\nmodel = "tiny"\nbatch_size = 2\nseq_len = 16\n', encoding="utf-8")
    path = job_path(seeded / "results", Experiment(model="tiny", batch_size=2, seq_len=16))
    data = hand_made_result()
    data["environment"] = None
    write_old(path, json.dumps(data))
    assert_refused(cli, seeded, ["measure", "--config", "one.toml"], path.name)
