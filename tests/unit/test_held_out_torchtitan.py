"""torchtitan's own trainer on the two plain-FSDP multi-GPU held-out points
(generator/validate/held_out_torchtitan.py, read by generator/results/held_out_torchtitan.py;
held_out_torchtitan.json): each point's command as
built and as recorded, its published figure, the once-only recording, and the shipped
tokenizer and data set. Nothing is run: a tiny torchtitan job is the slow test's
(tests/slow/test_run_torchtitan.py)."""

from __future__ import annotations

import copy
import json
import shlex
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from generator import validate
from generator.cli.main import _checks
from generator.results import held_out_torchtitan as recorded
from generator.results import reference_runs
from generator.validate import held_out_scripts
from generator.validate import held_out_torchtitan as t
from generator.validate.as_written import torchtitan_train

DATA = recorded.load()
POINTS = t.points()


def test_the_two_plain_fsdp_points_each_have_one_command_run_once_at_a_commit() -> None:
    published = {p.id: p for p in reference_runs.multi_gpu_held_out()}
    assert [(p.id, p.gpus) for p in POINTS] == [
        ("torchtitan-202412-t1-8b-fsdp8", 8), ("torchtitan-202412-t3-8b-fsdp128", 128)]
    for point in POINTS:
        assert point.command == recorded.command_line(point)  # recorded as built
        # committed with "estimate": null before it ran; once run, its commit and report
        assert point.estimate is None or (len(point.estimate["commit"]) == 40
                                          and point.estimate["report"]["gpus"] == point.gpus)
        assert point.published_bytes == published[point.id].published_bytes
        words = shlex.split(point.command)
        assert words[words.index("--gpus") + 1] == str(point.gpus)
        assert words[words.index("--json") + 1] == t.report_name(point)
        assert not any(word.startswith("/") for word in words)  # no path of this machine


def test_the_published_setting_is_in_the_options() -> None:
    args = list(DATA["args"])
    options = dict(zip(args[::2], args[1::2]))
    assert options["--training.local_batch_size"] == "2"
    assert options["--training.seq_len"] == "8192"
    assert (options["--activation_checkpoint.mode"],
            options["--activation_checkpoint.selective_ac_option"]) == ("selective", "op")
    assert not any("compile" in a or "float8" in a or "converters" in a for a in args)
    assert DATA["report"] == "reserved_bytes"


def test_a_point_whose_gpus_differ_from_its_published_row_is_refused() -> None:
    data = copy.deepcopy(DATA)
    data["points"][0]["gpus"] = 16
    with pytest.raises(ValueError, match="16 GPUs, its published row 8"):
        t.points(data)


def _estimate(point_id: str) -> dict:
    return {"ran_at": "now", "report": {"reserved_bytes": 2**30, "allocated_bytes": 2**29}}


def test_each_point_is_estimated_once_and_a_failed_run_records_nothing(
        tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / t.TORCHTITAN
    pending = copy.deepcopy(DATA)  # as committed before any point ran
    for raw in pending["points"]:
        raw["estimate"] = None
    path.write_text(json.dumps(pending), encoding="utf-8")
    ran: list[str] = []

    def run(point, folder, **_):
        ran.append(point.id)
        if point.id == POINTS[-1].id:
            raise RuntimeError(f"{point.id}: exit status 1: boom")
        return _estimate(point.id)

    monkeypatch.setattr(t, "run", run)
    monkeypatch.setattr(t.held_out_scripts, "clean_commit", lambda root: "c0ffee")
    with pytest.raises(RuntimeError, match=r"(?s)1 torchtitan point.*boom"):
        t.estimate_pending(tmp_path / "work", path, say=lambda text: None)
    found = {p.id: p.estimate for p in t.points(recorded.load(path))}
    assert found[POINTS[0].id]["commit"] == "c0ffee" and found[POINTS[1].id] is None
    ran.clear()
    monkeypatch.setattr(t, "run", lambda point, folder, **_: (ran.append(point.id),
                                                              _estimate(point.id))[1])
    rows = t.estimate_pending(tmp_path / "again", path, say=lambda text: None)
    assert ran == [POINTS[1].id]  # the one estimated already never ran again
    assert [r["id"] for r in rows] == [p.id for p in POINTS]
    assert rows[0]["ratio"] == 2**30 / POINTS[0].published_bytes
    with pytest.raises(ValueError, match="estimated already, at c0ffee: never again"):
        held_out_scripts.recorded(recorded.load(path), POINTS[0].id, {"commit": "later"})


def test_torchtitan_runs_only_when_named() -> None:
    assert "torchtitan" in validate.CHECKS and "torchtitan" not in validate.DEFAULT_CHECKS
    assert _checks("torchtitan") == ("torchtitan",)


def test_the_shipped_tokenizer_and_data_set_are_there() -> None:
    options = dict(zip(torchtitan_train.ASSET_OPTIONS[::2],
                       torchtitan_train.ASSET_OPTIONS[1::2]))
    tokenizer = Path(options["--model.hf_assets_path"])
    config = json.loads((tokenizer / "tokenizer_config.json").read_text(encoding="utf-8"))
    vocab = Tokenizer.from_file(str(tokenizer / "tokenizer.json"))
    assert vocab.token_to_id(config["bos_token"]) is not None
    assert vocab.token_to_id(config["eos_token"]) is not None
    assert vocab.get_vocab_size() < 128256  # every id within Llama 3.1's vocabulary
    documents = (Path(options["--training.dataset_path"]) / "c4.json").read_text(
        encoding="utf-8").splitlines()
    assert documents and all(json.loads(line)["text"] for line in documents)
    assert options["--training.dataset"] == "c4_test"
