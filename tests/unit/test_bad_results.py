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
    write_old(root / "docs" / "data" / machine / name, content)
    return name


def test_the_seeded_results_and_hand_made_ones_load(seeded: Path) -> None:
    """The control of the tests below: their files are refused for their defect, not
    because any result (or the hand-made kind) would be."""
    from generator import results

    for result, machine in ((hand_made_result(batch_size=4), "estimate"),
                            (hand_made_result(backend="cpu", device="cpu"), "cpu-test")):
        bad_file(seeded, f"{result['key']}.json", json.dumps(result), machine=machine)
    assert len(results.load_all(seeded / "docs" / "data")) == 3


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
    (lambda d: d["timeline"]["bytes"]["activations"].__setitem__(1, True), ("timeline.bytes",)),
    (lambda d: d["timeline"]["bytes"]["activations"].__setitem__(1, -1), ("timeline.bytes",)),
    (lambda d: d["timeline"]["tick"].__setitem__(1, 2**63), ("tick counts",)),
    (_set("phases", [{"name": "forward"}]), ("phases",)),
    (_set("step_seconds", -1), ("step_seconds",)),
    (_set("trainable_parameter_count", "most"), ("trainable_parameter_count",)),
    (_set("attention", 2), ("attention",)),
    (lambda d: d["experiment"].update(precision="fp8"), ("fp8",)),
    (_set("key", "../../docs/evil"), ("not a plain name",)),
], ids=["missing", "a-string", "environment", "categories", "end_tick", "short-series",
        "series-bool", "series-negative", "tick-too-large",
        "phases", "negative-seconds", "trainable", "attention", "experiment", "key"])
def test_a_field_missing_or_of_the_wrong_shape(cli, seeded: Path, change, needles) -> None:
    """Every defect of a file is a ResultsError naming it (results.load), not a crash of the
    renderer further on."""
    data = hand_made_result(backend="cpu", device="cpu")
    change(data)
    name = bad_file(seeded, "typed.json", json.dumps(data), machine="cpu-test")
    assert_refused(cli, seeded, ["render"], name, *needles)


def test_a_study_of_an_unknown_schema(cli, seeded: Path) -> None:
    write_old(seeded / "docs" / "data" / "studies" / "cpu-test" / "future.json", '{"schema_version": 7}')
    assert_refused(cli, seeded, ["render"], "future.json", "schema_version 7")


def test_a_study_without_its_fields(cli, seeded: Path) -> None:
    write_old(seeded / "docs" / "data" / "studies" / "cpu-test" / "bare.json", '{"schema_version": 1}')
    assert_refused(cli, seeded, ["render"], "bare.json", "missing field")


def test_no_results_folder(cli, project: Path) -> None:
    """A typo in --results must not render an empty site over the pages there."""
    write_old(project / "docs" / "en" / "index.md", "# pages of earlier results\n")
    assert_refused(cli, project, ["render", "--results", "resluts"], "resluts")


def test_a_results_folder_with_no_result(cli, project: Path) -> None:
    (project / "docs" / "data" / "estimate").mkdir(parents=True)
    write_old(project / "docs" / "data" / "estimate" / "notes.txt", "not a result\n")
    write_old(project / "docs" / "en" / "index.md", "# pages of earlier results\n")
    assert_refused(cli, project, ["render"], "results", "no result")


def test_measure_refuses_a_stored_result_it_would_reuse(cli, seeded: Path) -> None:
    """Reusing a stored result reads `environment` as a mapping: a file where it is not one is
    reported as a bad file, not a crash (and nothing is measured)."""
    from generator.experiment import Experiment
    from generator.jobs.runner import job_path

    (seeded / "one.toml").write_text(
        '[[experiment]]\nmodel = "tiny"\nbatch_size = 2\nseq_len = 16\n', encoding="utf-8")
    path = job_path(seeded / "docs" / "data", Experiment(model="tiny", batch_size=2, seq_len=16))
    data = hand_made_result()
    data["environment"] = None
    write_old(path, json.dumps(data))
    assert_refused(cli, seeded, ["measure", "--config", "one.toml"], path.name)


def _times(field: str, factor: int) -> Callable[[dict[str, Any]], None]:
    return lambda data: data.update({field: data[field] * factor})


def _category(field: str, category: str, value: int) -> Callable[[dict[str, Any]], None]:
    return lambda data: data[field].update({category: value})


def _allocator(**figures: Any) -> Callable[[dict[str, Any]], None]:
    """The hand-made estimate given an allocator's figures (a sound one, changed by
    `figures`)."""
    def change(data: dict[str, Any]) -> None:
        peak = data["peak_bytes"]
        sound = {"peak_allocated_bytes": peak, "peak_reserved_bytes": 2 * peak}
        data["allocator"] = {"source": "a test", "steps": 5, "workspace_bytes": 0, "segments": 1,
                             "out_of_memory": None, "context_bytes": [0, 0], **sound,
                             "other_workspaces": [{"workspace_bytes": 8, "segments": 1, **sound}],
                             **figures}
    return change


@pytest.mark.parametrize(("change", "needles"), [
    (_times("peak_bytes", 1000), ("add up to 6,291,456 bytes", "not to peak_bytes 6,291,456,000")),
    (_category("live_at_peak_bytes", "activations", 0), ("add up to 5,242,880",)),
    (lambda d: (d.update(peak_bytes=0), d.update(live_at_peak_bytes=dict.fromkeys(
        d["live_at_peak_bytes"], 0))), ("peak_bytes is 0",)),
    (_category("category_max_bytes", "gradients", 1), ("category_max_bytes.gradients",)),
    (_category("category_max_bytes", "gradients", 7 * 2**20), ("category_max_bytes.gradients",)),
    (_allocator(peak_allocated_bytes=2**20), ("allocator's allocated peak 1,048,576",
                                               "below the tensors' peak_bytes")),
    (_allocator(peak_reserved_bytes=2**20), ("allocator's reserved peak 1,048,576",)),
    (_allocator(other_workspaces=[{"workspace_bytes": 8, "segments": 1, "peak_allocated_bytes": 1,
                                   "peak_reserved_bytes": 1}]), ("allocated peak 1 ",)),
    (lambda d: d.update(ground_truth={"source": "a test", "peak_bytes": d["peak_bytes"],
                                      "max_reserved_bytes": 1}), ("ground_truth's reserved",)),
    (lambda d: d.update(ground_truth={"source": "a test", "peak_bytes": 1}),
     ("ground_truth's allocated peak 1 ",)),
], ids=["peak-x1000", "categories-short", "peak-0", "max-below-live", "max-above-peak",
        "allocated-below-peak", "reserved-below-allocated", "other-workspace",
        "truth-reserved", "truth-allocated"])
def test_figures_that_do_not_add_up(cli, seeded: Path, change, needles) -> None:
    """A result whose figures contradict each other would render pages that contradict
    themselves: refused, naming the file (invariants.py)."""
    data = hand_made_result(batch_size=4)
    change(data)
    name = bad_file(seeded, f"{data['key']}.json", json.dumps(data))
    assert_refused(cli, seeded, ["render"], name, *needles)


def test_a_simulation_that_ran_out_of_memory_may_stop_short_of_the_peak(seeded: Path) -> None:
    """Within a budget the simulated allocator stops where it ran out: its allocated peak
    may be below the tensors' (the step is recorded as out of memory, its figures kept)."""
    from generator import results
    from generator.errors import ResultsError

    data = hand_made_result(batch_size=4, error="out_of_memory")
    figures = hand_made_result(batch_size=4)
    data.update({k: v for k, v in figures.items() if k not in data})
    _allocator(peak_allocated_bytes=2**20, out_of_memory="at 1 MiB")(data)
    path = seeded / "docs" / "data" / "estimate" / f"{data['key']}.json"
    write_old(path, json.dumps(data))
    assert results.load(path)["allocator"]["out_of_memory"] == "at 1 MiB"
    data["peak_bytes"] *= 1000  # an out-of-memory result's figures are checked all the same
    write_old(path, json.dumps(data))
    with pytest.raises(ResultsError, match="add up to"):
        results.load(path)


@pytest.mark.parametrize(("text", "needles"), [
    ('"peak_bytes": 1' + "0" * 400, ("peak_bytes", "below 2**63", "...")),
    ('"step_seconds": NaN', ("NaN is no measurement",)),
    ('"step_seconds": Infinity', ("Infinity is no measurement",)),
    ('"step_seconds": 1e400', ("step_seconds", "inf")),
    ('"parameter_count": 1' + "0" * 5000, ("not a result", "digits")),
    ('"notes": ' + "[" * 100_000 + "]" * 100_000, ("nested too deep",)),
    ('"phase_max_bytes": {"forward": {"total": -1}}', ("phase_max_bytes",)),
    ('"phase_max_bytes": {"forward": 3}', ("phase_max_bytes",)),
    ('"allocator": {"peak_allocated_bytes": "lots"}', ("allocator must hold",)),
    ('"allocator": {"peak_allocated_bytes": 1, "peak_reserved_bytes": 1, "workspace_bytes": 0, '
     '"other_workspaces": 3}', ("other_workspaces",)),
], ids=["peak-10**400", "nan", "infinity", "float-overflow", "5000-digits", "nested",
        "phase-negative", "phase-not-object", "allocator-string", "other-workspaces"])
def test_numbers_no_page_can_show(cli, seeded: Path, text: str, needles) -> None:
    """Numbers JSON can spell that no measurement gives, each one line (no OverflowError,
    ValueError or RecursionError from deep in a page)."""
    data = hand_made_result(batch_size=4)
    field = text.split('"')[1]
    data[field] = "PLACEHOLDER"
    content = json.dumps(data).replace(f'"{field}": "PLACEHOLDER"', text)
    name = bad_file(seeded, f"{data['key']}.json", content)
    assert_refused(cli, seeded, ["render"], name, *needles)


def test_a_result_under_another_results_name(cli, seeded: Path) -> None:
    """A file copied or renamed onto another result's name would stand for that experiment."""
    data = hand_made_result(batch_size=4)
    name = bad_file(seeded, "tiny-b8-s16-fp32-adamw-estimate.json", json.dumps(data))
    assert_refused(cli, seeded, ["render"], name, data["key"], "renamed or copied")


@pytest.mark.parametrize("kind", ["device", "fifo", "huge"])
def test_a_results_file_that_is_no_regular_file_or_too_big(cli, seeded: Path, kind: str,
                                                           monkeypatch) -> None:
    """Read whole only if it is a regular file of a sane size: /dev/zero would never end, a
    FIFO would block until someone writes to it."""
    import os

    from generator.results import store

    path = seeded / "docs" / "data" / "estimate" / "odd.json"
    if kind == "device":
        os.symlink("/dev/zero", path)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        monkeypatch.setattr(store, "MAX_RESULT_BYTES", 1000)
        write_old(path, json.dumps(hand_made_result(batch_size=4)))
    needle = "larger than 0 MiB" if kind == "huge" else "not a regular file"
    assert_refused(cli, seeded, ["render"], "odd.json", needle)


#: The committed study results, one of each kind, whose data the cases below spoil.
STUDIES = {"torch_facts": "estimate/torch-facts.json",
           "underflow": "cpu-amd-epyc/underflow-bert-base.json",
           "training_curves": "cpu-amd-epyc/training-curves-cpu.json"}


def _study(kind: str, change: Callable[[dict[str, Any]], Any]) -> tuple[str, str]:
    from conftest import REPO_ROOT

    path = REPO_ROOT / "docs" / "data" / "studies" / STUDIES[kind]
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data["data"])
    return path.name, json.dumps(data)


@pytest.mark.parametrize(("kind", "change", "needles"), [
    ("torch_facts", lambda d: d.update(formats="fp16"), ("data.formats must be a list",)),
    ("torch_facts", lambda d: d["grad_scaler"].update(init_scale=0), ("init_scale", "above 0")),
    ("torch_facts", lambda d: d["formats"].pop(1), ("data.formats lacks fp16",)),
    ("torch_facts", lambda d: d["formats"][0].update(max=None), ("data.formats[0].max",)),
    ("underflow", lambda d: d.update(scale="big"), ("data.scale must be a number above 0",)),
    ("underflow", lambda d: d["groups"][0].update(casts=[]), ("data.groups[0].casts",)),
    ("underflow", lambda d: d["groups"][0].update(values=0), ("data.groups[0].values",)),
    ("training_curves", lambda d: d.update(runs=[]), ("data.runs must be a non-empty list",)),
    ("training_curves", lambda d: d["runs"][0].update(loss=[]), ("data.runs[0].loss",)),
    ("training_curves", lambda d: d["runs"][0].update(loss=d["runs"][0]["loss"][:-1]),
     ("one value per step",)),
    ("training_curves", lambda d: [r.update(precision="fp64") for r in d["runs"]],
     ("unknown precision 'fp64'",)),
    ("training_curves", lambda d: d.update(runs=[r for r in d["runs"] if r["reference"]]),
     ("no fp32 run",)),
    ("training_curves", lambda d: d.update(lr=10**400), ("data.lr must be a finite number",)),
], ids=["formats-string", "init-scale-0", "no-fp16", "max-null", "scale-string",
        "casts-list", "values-0", "no-runs", "empty-loss", "short-loss", "precision",
        "no-baseline", "lr-huge"])
def test_study_data_of_the_wrong_shape(cli, seeded: Path, kind: str, change, needles) -> None:
    """A study's data is read deep inside the precision and article pages: data they cannot
    read is refused on loading, naming the file (study_data.py), not a TypeError there."""
    name, content = _study(kind, change)
    write_old(seeded / "docs" / "data" / "studies" / "cpu-test" / name, content)
    assert_refused(cli, seeded, ["render"], name, *needles)


def test_the_committed_studies_of_every_kind_load(seeded: Path) -> None:
    """The control of the cases above: unspoilt, each loads."""
    from generator import results

    for kind in STUDIES:
        name, content = _study(kind, lambda d: None)
        write_old(seeded / "docs" / "data" / "studies" / "cpu-test" / name, content)
    assert {s["study"]["kind"] for s in results.load_studies(seeded / "docs" / "data")} == set(STUDIES)


def test_migrate_reads_every_file_before_it_writes_any(cli, seeded: Path) -> None:
    """`migrate` over a folder with one file that is no result: refused on one line naming
    it, and the old result beside it is not rewritten either (the folder as it was)."""
    old = hand_made_result(batch_size=4)
    old["schema_version"] = 1
    bad_file(seeded, f"{old['key']}.json", json.dumps(old))
    name = bad_file(seeded, "zzz-not-json.json", "{not json")
    assert_refused(cli, seeded, ["migrate"], name, "not valid JSON")


def test_migrate_refuses_a_schema_1_result_it_cannot_read_as_schema_2(cli, seeded: Path) -> None:
    """A note of schema 1 that needs a figure the file lacks: one line, not a KeyError."""
    old = hand_made_result(batch_size=4)
    old["schema_version"] = 1
    old["notes"] = ["model built on the GPU: building it freed 7 B (e.g. an output weight "
                    "that tying replaced), which the allocator keeps cached for the steps"]
    name = bad_file(seeded, f"{old['key']}.json", json.dumps(old))
    assert_refused(cli, seeded, ["migrate"], name, "cannot be read as schema 2")
    assert_refused(cli, seeded, ["render"], name, "cannot be read as schema 2")
