"""The results store: a result's round trip through a file, atomic writes, the temporary
files a killed run leaves, and the names a result may carry (they become paths and ids)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, HOSTILE
from made_results import hand_made_result

from generator import results
from generator.errors import ConfigError, ResultsError
from generator.experiment import Experiment
from generator.measure.run import measure_to_result


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    """A result as the worker makes it: the tiny model's step, estimated."""
    return measure_to_result(Experiment(model="tiny", batch_size=2, seq_len=16,
                                        precision="amp-bf16"))


def test_round_trip(tmp_path: Path, result: dict[str, Any]) -> None:
    path = results.result_path(tmp_path, "estimate", result["key"])
    results.save(path, result)
    assert results.load(path) == json.loads(json.dumps(result))
    assert results.load_all(tmp_path) == [results.load(path)]
    assert results.load_all_with_paths(tmp_path) == [(path, results.load(path))]
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left


def test_result_says_what_and_where(result: dict[str, Any]) -> None:
    assert result["schema_version"] == results.SCHEMA_VERSION
    assert result["key"] == Experiment(**result["experiment"]).key
    assert result["experiment"]["precision"] == "amp-bf16"
    assert result["environment"]["torch"]
    assert result["environment"]["machine_id"] == "estimate"
    assert {"id": "cuda_autocast", "values": {"torch": "2.13"}} in result["notes"]
    assert any(note["id"] == "allocator_replay_assumed" for note in result["notes"])


def test_a_hand_made_result_reads_like_a_measured_one(tmp_path: Path) -> None:
    """Fields a file leaves out are filled in: the experiment's defaults, the environment's
    and the optional figures'; the machine is the folder's name, whatever the file says."""
    data = hand_made_result()
    data["experiment"] = {"model": "tiny", "batch_size": 2, "seq_len": 16}
    data["environment"]["machine_id"] = "somewhere-else"
    path = tmp_path / "my-laptop" / f"{data['key']}.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data), encoding="utf-8")
    loaded = results.load(path)
    assert loaded["experiment"] == Experiment(model="tiny", batch_size=2, seq_len=16).to_dict()
    assert loaded["environment"]["machine_id"] == "my-laptop"
    assert loaded["environment"]["device_name"] is None and loaded["notes"] == []


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(schema_version=99), "unknown schema_version 99"),
    (lambda d: d.pop("peak_bytes"), "missing field(s) peak_bytes"),
    (lambda d: d["experiment"].update(precision="fp8"), "unknown precision 'fp8'"),
])
def test_refuses_bad_files(tmp_path: Path, result: dict[str, Any], mutate, message: str) -> None:
    data = json.loads(json.dumps(result))
    mutate(data)
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        results.load(path)
    assert str(path) in str(info.value)


def test_refuses_truncated_json(tmp_path: Path, result: dict[str, Any]) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps(result)[:100])
    with pytest.raises(ResultsError, match="not valid JSON"):
        results.load(path)


def test_a_failed_write_leaves_nothing(tmp_path: Path, result: dict[str, Any]) -> None:
    path = results.result_path(tmp_path, "estimate", "k")
    with pytest.raises(TypeError):
        results.save(path, {**result, "bad": object()})
    # neither the file nor a temporary one (the folder may not even have been made)
    assert not path.parent.exists() or list(path.parent.iterdir()) == []


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_results_and_pages_are_written_as_the_umask_says(tmp_path: Path, umask: int) -> None:
    """Files others read: the mode any new file of the process gets (0o666 less the umask),
    not the 0o600 of tempfile.mkstemp; the umask put back as it was."""
    import os
    import stat

    from generator.files import write_atomic

    before = os.umask(umask)
    try:
        path = write_atomic(tmp_path / "page.md", "# a page\n", what="pages")
        again = write_atomic(tmp_path / "page.md", "# another\n", what="pages", durable=True)
    finally:
        os.umask(before)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    assert stat.S_IMODE(again.stat().st_mode) == 0o666 & ~umask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.md"]


def test_a_run_clears_temporary_files_a_killed_save_left(tmp_path: Path) -> None:
    """SIGKILL between results.save's write and its rename leaves `.<key>.<random>.tmp`;
    the next run removes it (and nothing else)."""
    from generator.jobs.runner import run_all

    stale = tmp_path / "estimate" / ".tiny-b2-s16-fp32-adamw-estimate.k3j1.tmp"
    stale.parent.mkdir()
    stale.write_text('{"schema_version": 1, "ke', encoding="utf-8")
    kept = tmp_path / "estimate" / "notes.txt"
    kept.write_text("mine\n", encoding="utf-8")
    assert run_all([], tmp_path) == []
    assert not stale.exists() and kept.exists()
    assert results.remove_stale_temps(tmp_path) == []


# --------------------------------------------------------------------------- names and paths


@pytest.mark.parametrize("name", ["..", "../up", "/abs", "a/b", ".hidden", "", "a\\b", "key\n",
                                  "k\x1b[2J", "naïve"])
def test_results_paths_refuse_unsafe_names(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError):
        results.result_path(tmp_path, name, "key")
    with pytest.raises(ConfigError):
        results.result_path(tmp_path, "estimate", name)
    with pytest.raises(ConfigError):
        results.study_path(tmp_path, "estimate", name)


@pytest.mark.parametrize("model", ["../../etc/passwd", "/etc/passwd", "..", "../x:y",
                                   "a/../../b:build", "C:\\Windows\\x", "~/.ssh/id:k",
                                   HOSTILE, ". ."])
def test_a_results_path_stays_in_the_results_folder(tmp_path: Path, model: str) -> None:
    from generator.jobs.runner import job_path

    results_dir = tmp_path / "results"
    for backend in ("estimate", "cpu"):
        exp = Experiment(model=model, batch_size=1, seq_len=8, backend=backend)
        path = job_path(results_dir, exp)
        assert path.resolve().parent.parent == results_dir.resolve(), path
        assert path.name == f"{exp.key}.json" and not path.name.startswith("."), path
        assert "/" not in exp.key and "\\" not in exp.key


@pytest.mark.parametrize("key", ["../../docs/evil", 'x" onload="alert(1)'])
def test_a_hand_made_result_cannot_name_files_or_ids(tmp_path: Path, key: str) -> None:
    """The key of a stored result names figure files and SVG ids: a file that carries a
    path or markup there is refused."""
    data = hand_made_result()
    path = tmp_path / "estimate" / f"{data['key']}.json"
    path.parent.mkdir()
    path.write_text(json.dumps({**data, "key": key}), encoding="utf-8")
    with pytest.raises(ResultsError, match="not a plain name"):
        results.load(path)
    path.write_text(json.dumps(data), encoding="utf-8")
    assert results.load(path)["key"] == data["key"]


def test_a_study_round_trip_and_its_refusals(tmp_path: Path) -> None:
    source = FIXTURES / "results" / "studies" / "estimate" / "torch-facts.json"
    path = results.study_path(tmp_path, "estimate", "torch-facts")
    results.save(path, json.loads(source.read_text(encoding="utf-8")))
    [study] = results.load_studies(tmp_path)
    assert study["study"]["kind"] == "torch_facts"
    assert study["environment"]["machine_id"] == "estimate"
    data = json.loads(source.read_text(encoding="utf-8"))
    data["study"]["name"] = "../evil"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ResultsError, match="not a plain name"):
        results.load_studies(tmp_path)
