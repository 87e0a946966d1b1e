"""The accuracy page's held-out points over several GPUs (pages/accuracy/multi_gpu.py): each
row comes from reference_data/multi_gpu_held_out.json and the published row it names in
multi_gpu_measurements.json, never from the templates; each was estimated once at a
recorded commit; every other published row is listed with why it is not estimated; both
languages print them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import LANGS
from page_checks import page_markdown, prose

from generator.results import reference_runs
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
                          reference_runs.MULTI_GPU}
