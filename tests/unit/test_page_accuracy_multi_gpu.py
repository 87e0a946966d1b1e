"""The accuracy page's held-out points over several GPUs (pages/accuracy/multi_gpu.py): each
row comes from reference_data/multi_gpu_held_out.json and the published row it names in
multi_gpu_measurements.json, never from the templates; each was estimated once at a
recorded commit; torchtitan's own run of the same rows (held_out_torchtitan.json) beside them,
"not yet run" where a point has not run; every other published row is listed with why it is
not estimated; both languages print them."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
from conftest import LANGS
from page_checks import page_markdown, prose

from generator.results import held_out_torchtitan, reference_runs
from generator.site.escaping import markdown as escape
from generator.site.pages import accuracy
from generator.site.pages.accuracy import multi_gpu
from generator.units import gib, pct


def page_context() -> dict:
    from test_page_accuracy import _estimate_of

    run = next(r for r in reference_runs.runs() if not r.skipped)
    return accuracy.context([_estimate_of(run, 1.0, 1.0)], [])


def section(ctx: dict, lang: str) -> str:
    text = prose(page_markdown(accuracy, ctx, lang))
    return text[text.index("{ #held-out-multi-gpu }"):text.index("{ #modelled }")]


def raw_points() -> list[dict]:
    data = json.loads((reference_runs.DATA / reference_runs.MULTI_GPU_HELD_OUT).read_text("utf-8"))
    return data["points"]


def test_each_point_was_estimated_once_at_a_recorded_commit_by_its_command() -> None:
    published = {row["id"]: row for row in json.loads(
        (reference_runs.DATA / reference_runs.MULTI_GPU).read_text("utf-8"))}
    points = reference_runs.multi_gpu_held_out()
    assert [p.id for p in points] == [raw["id"] for raw in raw_points()]
    for point, raw in zip(points, raw_points()):
        row = published[raw["row"]]
        assert f"| {row['value_as_published']} |" in row["quote"]  # the figure as quoted
        assert point.published_gib == row["value_as_published"]
        assert len(point.commit) == 40 and raw["estimate"]["key"].endswith(
            f"-{point.gpus}gpus-fsdp2-mp-bf16-fp32")
        words = point.command.split()
        assert words[:4] == ["python", "-m", "generator", "estimate"]
        assert words[words.index("--gpus") + 1] == str(row["num_gpus"])
        assert "--checkpoint-policy" in words and "sac-op" in raw["estimate"]["key"]


def test_the_rows_are_the_data_files_figures() -> None:
    ctx = page_context()["multi_gpu"]
    assert len(ctx["rows"]) == len(raw_points())
    for row, raw in zip(ctx["rows"], raw_points()):
        reserved = raw["estimate"]["peak_reserved_bytes"]
        assert row["estimated"] == reserved and row["commit"] == raw["estimate"]["commit"]
        assert row["ratio"] == pytest.approx(reserved / (raw["published_gib"] * 2**30))


def test_a_changed_data_file_changes_the_page(tmp_path: Path, monkeypatch) -> None:
    """The page's figures follow the file: halve an estimate and the page says so."""
    data = tmp_path / "reference_data"
    shutil.copytree(reference_runs.DATA, data)
    held = json.loads((data / reference_runs.MULTI_GPU_HELD_OUT).read_text("utf-8"))
    held["points"][0]["estimate"]["peak_reserved_bytes"] = 2 * 2**30 * 82
    (data / reference_runs.MULTI_GPU_HELD_OUT).write_text(json.dumps(held), "utf-8")
    monkeypatch.setattr(reference_runs, "DATA", data)
    ctx = page_context()
    first = ctx["multi_gpu"]["rows"][0]
    assert first["ratio"] == pytest.approx(164 / 82.4)
    text = section(ctx, "en")
    assert f"{first['ratio']:.3f}" in text and "164.00" in text
    assert f"exceeds the published figure by {pct(164 / 82.4 - 1, 1)}" in text


@pytest.mark.parametrize("lang", LANGS)
def test_the_page_prints_each_point_and_each_row_not_estimated(lang: str) -> None:
    ctx = page_context()
    text = section(ctx, lang)
    for row in ctx["multi_gpu"]["rows"]:
        point = row["point"]
        assert f"{point.published_gib:.1f}" in text and gib(row["estimated"]) in text
        assert f"{row['ratio']:.3f}" in text and row["commit"][:10] in text
    assert ctx["multi_gpu"]["said"][lang] in text
    assert ("measured on a GPU: H100 96GB HBM2e" if lang == "en" else "GPU 实测：H100 96GB HBM2e") \
        in text
    assert ("Estimated for H100 80GB HBM3" if lang == "en" else "模拟 H100 80GB HBM3") in text
    for other in ctx["multi_gpu"]["others"]:
        assert escape(other["what"][lang]) in text  # as the page escapes it
    assert "reshard_after_forward=False" in text and "clip_grad_norm_" in text


def test_every_published_row_is_a_point_or_said_why_not() -> None:
    rows = json.loads((reference_runs.DATA / reference_runs.MULTI_GPU).read_text("utf-8"))
    others = reference_runs.multi_gpu_not_estimated()
    ctx = page_context()["multi_gpu"]
    assert ctx["others_count"] + len(ctx["rows"]) == len(rows)
    assert all(g.why.en and g.why.zh and g.what.zh for g in others)


def test_the_sentence_says_each_direction_it_finds() -> None:
    points = reference_runs.multi_gpu_held_out()
    rows = [{"point": points[0], "ratio": 0.9}, {"point": points[1], "ratio": 0.95}]
    assert multi_gpu.said(rows).en == ("On 8 GPUs the estimate falls short of the published "
                                       "figure by 10.0 %, on 128 GPUs by 5.0 %.")
    rows[1]["ratio"] = 1.05
    assert "on 128 GPUs the estimate exceeds the published figure by 5.0 %" in \
        multi_gpu.said(rows).en
    assert "高 5.0 %" in multi_gpu.said(rows).zh


def test_the_pages_data_files_name_both_files() -> None:
    ctx = page_context()
    files = accuracy.data_files(ctx)
    assert set(files) >= {reference_runs.MULTI_GPU_HELD_OUT,
                          reference_runs.MULTI_GPU, held_out_torchtitan.TORCHTITAN}
    listed = {entry["json_path"] for entry in ctx["multi_gpu_data"]}
    assert f"../data/{held_out_torchtitan.TORCHTITAN}" in listed  # the page's list of files


@pytest.mark.parametrize("lang", LANGS)
def test_torchtitans_own_run_is_printed_beside_the_published_figures(lang: str) -> None:
    ctx = page_context()
    trainer = ctx["multi_gpu"]["trainer"]
    text = section(ctx, lang)
    recorded = held_out_torchtitan.points()
    assert [r["point"].id for r in trainer["rows"]] == [p.id for p in recorded]
    for row, point in zip(trainer["rows"], recorded):
        report = point.estimate["report"]
        assert row["estimated"] == report["reserved_bytes"] and row["steps"] == report["steps"]
        assert gib(row["estimated"]) in text and f"{row['ratio']:.3f}" in text
        assert point.estimate["commit"][:10] in text
    assert trainer["said"][lang] in text
    assert ("not yet run" if lang == "en" else "尚未运行") not in text
    assert ("simulated H100 with 96 GiB" if lang == "en" else "模拟 96 GiB 的 H100") in text
    steps = "its 3 steps" if lang == "en" else "跑的 3 步"
    assert trainer["steps"] == [3] and steps in text  # the figure's steps, from the data


def test_the_prose_names_the_versions_that_ran() -> None:
    """The page says torchtitan 0.2.2 on PyTorch 2.13.0: so does every recorded run."""
    for point in held_out_torchtitan.points():
        if point.estimate is not None:
            assert point.estimate["torchtitan"] == "0.2.2"
            assert point.estimate["torch"].split("+")[0] == "2.13.0"


def _not_yet_run(monkeypatch, which: slice) -> None:
    data = copy.deepcopy(held_out_torchtitan.load())
    for raw in data["points"][which]:
        raw["estimate"] = None
    monkeypatch.setattr(held_out_torchtitan, "load", lambda *_: data)


@pytest.mark.parametrize("lang", LANGS)
def test_a_point_not_yet_run_says_so(lang: str, monkeypatch) -> None:
    _not_yet_run(monkeypatch, slice(1, None))
    ctx = page_context()
    rows = ctx["multi_gpu"]["trainer"]["rows"]
    assert rows[1]["estimated"] is None and rows[0]["estimated"] is not None
    text = section(ctx, lang)
    assert ("not yet run" if lang == "en" else "尚未运行") in text
    said = ctx["multi_gpu"]["trainer"]["said"]
    assert ("; on 128 GPUs torchtitan's trainer has not yet run." in said.en
            and "128 块 GPU 的这一行 torchtitan 还没有运行" in said.zh)
    assert "lies between" not in said.en  # said of every row, or not at all
    _not_yet_run(monkeypatch, slice(None))
    ctx = page_context()
    assert ctx["multi_gpu"]["trainer"]["steps"] == []
    text = section(ctx, lang)
    assert text.count("| not yet run |" if lang == "en" else "| 尚未运行 |") == 2  # each row
    assert ctx["multi_gpu"]["trainer"]["said"][lang] in text


def _row(gpus: int, ratio: float | None, step_ratio: float) -> dict:
    return {"gpus": gpus, "ratio": ratio, "step_ratio": step_ratio}


def test_the_trainers_sentence_says_each_direction_and_which_run_is_nearer() -> None:
    said = multi_gpu.trainer_said([_row(8, 1.04, 0.93), _row(128, 1.11, 0.977)])
    assert said.en == (
        "On 8 GPUs torchtitan's run is over the published figure by 4.0 %, nearer to it than "
        "the step estimate (short by 7.0 %); on 128 GPUs it is over by 11.0 %, farther from "
        "it than the step estimate (short by 2.3 %). The step estimate fell short of both "
        "published figures while torchtitan's run is over them: each published figure lies "
        "between the two.")
    assert "步骤估算低于两个公开数字，torchtitan 的运行则高于它们" in said.zh
    # both short: no bracketing said; a run as near as the estimate, and one that matches
    said = multi_gpu.trainer_said([_row(8, 0.95, 0.95), _row(128, 1.0, 0.9)])
    assert said.en == (
        "On 8 GPUs torchtitan's run is short of the published figure by 5.0 %, as near to it "
        "as the step estimate (short by 5.0 %); on 128 GPUs torchtitan's run matches the "
        "published figure, nearer to it than the step estimate (short by 10.0 %).")
    assert "之间" not in said.zh and "一样接近" in said.zh
    # the reverse bracketing
    said = multi_gpu.trainer_said([_row(8, 0.9, 1.1)])
    assert said.en.endswith("The step estimate is over the published figure while "
                            "torchtitan's run falls short of it: each published figure lies "
                            "between the two.")
