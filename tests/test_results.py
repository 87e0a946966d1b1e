"""The results store: round trip, atomic writes, refusals."""

import json

import pytest

from generator import results
from generator.experiment import Experiment
from generator.errors import ConfigError, ResultsError
from generator.jobs.worker import measure_to_result


@pytest.fixture(scope="module")
def result():
    return measure_to_result(Experiment(model="tiny", batch_size=2, seq_len=16, precision="amp-bf16"))


def test_round_trip(tmp_path, result):
    path = results.result_path(tmp_path, "estimate", result["key"])
    results.save(path, result)
    assert results.load(path) == json.loads(json.dumps(result))
    assert results.load_all(tmp_path) == [results.load(path)]
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left


def test_result_says_what_and_where(result):
    assert result["schema_version"] == results.SCHEMA_VERSION
    assert result["experiment"]["precision"] == "amp-bf16"
    assert result["environment"]["torch"]
    assert result["environment"]["machine_id"] == "estimate"
    assert any("CPU autocast stands in" in note for note in result["notes"])


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(schema_version=99), "unknown schema_version 99"),
    (lambda d: d.pop("peak_bytes"), "missing field(s) peak_bytes"),
    (lambda d: d["experiment"].update(precision="fp8"), "unknown precision 'fp8'"),
])
def test_refuses_bad_files(tmp_path, result, mutate, message):
    data = json.loads(json.dumps(result))
    mutate(data)
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        results.load(path)


def test_refuses_truncated_json(tmp_path, result):
    path = tmp_path / "x.json"
    path.write_text(json.dumps(result)[:100])
    with pytest.raises(ResultsError, match="not valid JSON"):
        results.load(path)


def test_a_failed_write_leaves_nothing(tmp_path, result):
    path = results.result_path(tmp_path, "estimate", "k")
    with pytest.raises(TypeError):
        results.save(path, {**result, "bad": object()})
    assert list(path.parent.iterdir()) == []


@pytest.mark.parametrize("part", ["..", ".hidden", "a/b", ""])
def test_paths_cannot_escape(tmp_path, part):
    with pytest.raises(ConfigError):
        results.result_path(tmp_path, part, "key")


def test_keys_are_file_names():
    exp = Experiment(model="../../etc/passwd:x", batch_size=1, seq_len=1)
    assert "/" not in exp.key and not exp.key.startswith(".")
