"""The levers page: savings and costs computed from results, ranked by the data, printed on
the page, and checkpointing checked on a real (fake-tensor) step."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from generator.site import render

from generator import results
from generator.measure.backends import measure
from generator.experiment import Experiment
from generator.site.pages.article.context import ARTICLE
from generator.site.pages.levers.charts import bars
from generator.site.pages.levers.tables import nowrap, saving_cell
from generator.site.pages import levers
from generator.jobs.suite import DEFAULT_SUITE, load_suite
from generator.units import gib, mib

FIXTURES = Path(__file__).parent / "fixtures" / "levers"
EST = FIXTURES / "estimate"
CPU = FIXTURES / "cpu-amd-epyc"
BASE = "bert-base-b32-s128-fp32-adamw-estimate"


def _load(folder: Path, key: str) -> dict[str, Any]:
    return results.load(folder / f"{key}.json")


def _context(root: Path = FIXTURES) -> dict[str, Any]:
    ctx = levers.context(results.load_all(root), [])
    assert ctx is not None
    return ctx


def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _optimizer_max(result: dict[str, Any], category: str) -> int:
    """The category's largest value from the optimizer phase's start to the step's end."""
    start = next(p["tick"] for p in result["phases"] if p["name"] == "optimizer")
    timeline = result["timeline"]
    return max(v for t, v in zip(timeline["tick"], timeline["bytes"][category]) if t >= start)


def test_savings_are_computed_from_the_pair_of_results() -> None:
    ctx = _context()
    base = _load(EST, BASE)
    assert ctx["baseline"]["key"] == BASE and ctx["baseline_peak"] == base["peak_bytes"]
    rows = ctx["by_id"]
    ckpt = _load(EST, f"{BASE}-ckpt")
    row = rows["checkpointing"]
    assert row["saving_bytes"] == base["peak_bytes"] - ckpt["peak_bytes"]
    assert row["saving"] == pytest.approx(1 - ckpt["peak_bytes"] / base["peak_bytes"])
    assert (row["category_before"], row["category_after"]) == (
        base["live_at_peak_bytes"]["activations"], ckpt["live_at_peak_bytes"]["activations"])
    sgd = _load(EST, "bert-base-b32-s128-fp32-sgd-estimate")
    assert rows["sgd"]["category_after"] == sgd["live_at_peak_bytes"]["optimizer_state"]
    # set_to_none is PyTorch's default: measured as the baseline against set_to_none=False.
    zeros = _load(EST, f"{BASE}-grad-zeros")
    row = rows["set-to-none"]
    assert row["in_baseline"] and row["other"]["key"] == zeros["key"]
    assert row["saving_bytes"] == zeros["peak_bytes"] - base["peak_bytes"] > 0
    assert row["category_before"] == zeros["live_at_peak_bytes"]["gradients"] > 0
    assert row["category_after"] == base["live_at_peak_bytes"]["gradients"] == 0
    # The optimizer's kernels act on the temporaries of the optimizer step, not at the peak.
    for lever, key in (("fused", f"{BASE}-fused"), ("for-loop", f"{BASE}-for-loop")):
        row = rows[lever]
        assert row["category_before"] == _optimizer_max(base, "temporaries")
        assert row["category_after"] == _optimizer_max(_load(EST, key), "temporaries")
    assert rows["fused"]["category_after"] < rows["for-loop"]["category_after"] < \
        rows["fused"]["category_before"]


def test_combinations_are_set_beside_their_best_part() -> None:
    ctx = _context()
    combo = ctx["by_id"]["amp-bf16+sdpa+checkpointing"]
    parts = [ctx["by_id"][i] for i in ("amp-bf16", "sdpa", "checkpointing")]
    assert combo["best_part"] is min(parts, key=lambda row: row["peak"])
    assert combo["below_best_part"] == combo["best_part"]["peak"] - combo["peak"]


def test_ranking_follows_the_data(tmp_path: Path) -> None:
    ranked = _context()["ranked"]
    savings = [row["saving_bytes"] for row in ranked]
    assert savings == sorted(savings, reverse=True)
    assert [row["rank"] for row in ranked] == list(range(1, len(ranked) + 1))
    assert ranked[0]["id"] == "checkpointing"
    # Make fused attention save the most: it must rise to the top.
    changed = tmp_path / "results"
    shutil.copytree(FIXTURES, changed)
    ckpt_peak = _load(EST, f"{BASE}-ckpt")["peak_bytes"]
    _edit(changed / "estimate" / f"{BASE}-sdpa.json",
          lambda d: d.update(peak_bytes=ckpt_peak - 2**20))
    assert [row["id"] for row in _context(changed)["ranked"][:2]] == ["sdpa", "checkpointing"]


def test_costs_come_from_real_pairs_and_prefer_a_gpu(tmp_path: Path) -> None:
    rows = _context()["by_id"]
    base = _load(CPU, "bert-base-b1-s128-fp32-adamw-cpu-foreach")
    ckpt = _load(CPU, "bert-base-b1-s128-fp32-adamw-cpu-ckpt-foreach")
    cost = rows["checkpointing"]["cost"]
    assert cost["backend"] == "cpu" and cost["batch_size"] == 1
    assert cost["ratio"] == pytest.approx(ckpt["step_seconds"] / base["step_seconds"])
    fp32, bf16 = (_load(CPU, f"bert-base-b4-s128-{p}-adamw-cpu") for p in ("fp32", "amp-bf16"))
    assert rows["amp-bf16"]["cost"]["ratio"] == pytest.approx(
        bf16["step_seconds"] / fp32["step_seconds"])
    assert rows["sdpa"]["cost"] is None and rows["sgd"]["cost"] is None  # no real pair
    # A CUDA pair of the example itself wins over the CPU, for the cost and for the saving.
    changed = tmp_path / "results"
    shutil.copytree(FIXTURES, changed)
    gpu = changed / "h100"
    gpu.mkdir()
    for key, seconds in ((BASE, 0.2), (f"{BASE}-ckpt", 0.26)):
        cuda_key = key.replace("estimate", "cuda")
        data = json.loads((EST / f"{key}.json").read_text())
        data["experiment"].update(backend="cuda", device="cuda")
        data.update(key=cuda_key, backend="cuda", step_seconds=seconds)
        (gpu / f"{cuda_key}.json").write_text(json.dumps(data))
    row = _context(changed)["by_id"]["checkpointing"]
    assert row["backend"] == "cuda" and row["machine"] == "h100"
    assert row["cost"]["backend"] == "cuda" and row["cost"]["ratio"] == pytest.approx(1.3)


def test_results_without_levers_give_no_page_data() -> None:
    assert levers.context([], []) is None
    plain = [_load(EST, BASE), _load(CPU, "bert-base-b1-s128-fp32-adamw-cpu-foreach")]
    assert levers.context(plain, []) is None


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs")
    render.render(FIXTURES, out)
    return out


def test_page_prints_the_ranking_in_both_languages(docs: Path) -> None:
    ctx = _context()
    for lang in render.LANGS:
        page = (docs / lang / "levers.md").read_text()
        assert "{{" not in page and "{%" not in page
        for row in ctx["ranked"]:
            assert saving_cell(row) in page, row["id"]
            assert nowrap(f"{mib(row['category_before'])} → {mib(row['category_after'])}") in page
        order = [page.index(f"| {row['rank']} | ") for row in ctx["ranked"]]
        assert order == sorted(order)
        assert page.count('<svg') == 1 and (docs / lang / "figures" / "levers-peaks.svg").exists()


def test_page_numbers_change_with_the_results(tmp_path: Path) -> None:
    """Render from changed fixture data: the page must print the new numbers, not the old."""
    changed = tmp_path / "results"
    (changed / "estimate").mkdir(parents=True)
    for key in (BASE, f"{BASE}-ckpt"):
        shutil.copy(EST / f"{key}.json", changed / "estimate")
    old = _context(changed)["by_id"]["checkpointing"]
    extra = 3 * 2**30

    def grow(data: dict[str, Any]) -> None:
        data["peak_bytes"] += extra
        data["live_at_peak_bytes"]["activations"] += extra
        data["category_max_bytes"]["activations"] += extra
    _edit(changed / "estimate" / f"{BASE}.json", grow)
    render.render(changed, tmp_path / "docs")
    new = _context(changed)["by_id"]["checkpointing"]
    assert new["saving_bytes"] == old["saving_bytes"] + extra
    for lang in render.LANGS:
        page = (tmp_path / "docs" / lang / "levers.md").read_text()
        assert saving_cell(new) in page and saving_cell(old) not in page
        assert f"**{gib(new['ref_peak'])} GiB**" in page
        assert nowrap(f"{mib(new['category_before'])} → {mib(new['category_after'])}") in page


def test_page_without_lever_results_says_how_to_get_them(tmp_path: Path) -> None:
    changed = tmp_path / "results"
    (changed / "estimate").mkdir(parents=True)
    shutil.copy(EST / f"{BASE}.json", changed / "estimate")
    render.render(changed, tmp_path / "docs")
    for lang in render.LANGS:
        assert "python -m generator build" in (tmp_path / "docs" / lang / "levers.md").read_text()


def test_chart_has_one_bar_per_experiment_and_is_accessible() -> None:
    ctx = _context()
    shown = bars(ctx)
    assert len(shown) == 1 + len(ctx["ranked"]) + len(ctx["combos"])
    assert ("set-to-none-off", _load(EST, f"{BASE}-grad-zeros")) in shown
    for lang in render.LANGS:
        svg = levers.figures(ctx, lang)["levers-peaks"]
        assert svg == levers.figures(ctx, lang)["levers-peaks"]  # deterministic
        root = ET.fromstring(svg)
        assert root.get("role") == "img" and root.get("id") == f"chart-levers-peaks-{lang}"
        desc = root.find("{http://www.w3.org/2000/svg}desc").text
        assert f"{gib(ctx['baseline_peak'])} GiB" in desc
        assert all(i.startswith("chart-levers-peaks-") for i in
                   (e.get("id") for e in root.iter()) if i)


def test_suite_measures_each_lever_on_the_article_example() -> None:
    jobs = [j for j in load_suite() if isinstance(j, Experiment)]
    article = [j for j in jobs if j.backend == "estimate" and j.device == "cuda" and
               all(getattr(j, k) == ARTICLE[k] for k in ("model", "batch_size", "seq_len"))]
    found = [levers.options({"experiment": j.to_dict()}) for j in article]
    for lever in levers.LEVERS + levers.COMBOS:
        assert {**levers.BASELINE, **lever.use} in found, lever.id
        assert {**levers.BASELINE, **lever.use, **lever.reference} in found, lever.id
    # The baseline and AMP are article.toml's own experiments, so the suite measures them once.
    theirs = {j.key for j in load_suite(DEFAULT_SUITE / "article.toml") if j.batch_size == 32}
    assert theirs and theirs <= {j.key for j in load_suite(DEFAULT_SUITE / "levers.toml")}


def test_checkpointing_lowers_the_activation_peak_of_a_multi_layer_model() -> None:
    """BERT-base (12 blocks) on fake tensors: with checkpointing each block keeps only its
    input, so at most one block's activations exist at a time."""
    shape = dict(model="bert-base", batch_size=2, seq_len=64)
    base = measure(Experiment(**shape))
    ckpt = measure(Experiment(**shape, checkpointing=True))
    hidden = base["architecture"]["hidden"]
    blocks = {k: v for k, v in base["module_activation_bytes"].items() if k.startswith("layers.")}
    kept = {k: v for k, v in ckpt["module_activation_bytes"].items() if k.startswith("layers.")}
    assert len(blocks) == len(kept) == base["architecture"]["layers"] == 12
    block_input = shape["batch_size"] * shape["seq_len"] * hidden * 4  # fp32
    assert set(kept.values()) == {block_input}
    before = base["category_max_bytes"]["activations"]
    after = ckpt["category_max_bytes"]["activations"]
    assert after <= before - (len(blocks) - 1) * max(blocks.values()) + len(blocks) * block_input
