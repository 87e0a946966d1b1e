"""The levers page from fixture results (tests/fixtures/levers): savings and costs computed
from pairs of results, ranked by the data, printed on the page in both languages, and its
chart. Checkpointing itself on a step: test_estimate.py; the suite: test_suites.py."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES as ALL_FIXTURES
from conftest import LANGS
from page_checks import SVG, check_svg, page_markdown

from generator import results
from generator.site import lever_results
from generator.site.pages import levers
from generator.site.pages.levers.charts import bars
from generator.site.pages.levers.tables import nowrap, saving_cell
from generator.units import gib, mib

FIXTURES = ALL_FIXTURES / "levers"
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
    """The category's largest value during the optimizer step, as the tracker measured it
    over the phase's whole interval (timeline.summarise)."""
    return result["phase_max_bytes"]["optimizer"][category]


def test_savings_are_computed_from_the_pair_of_results() -> None:
    ctx = _context()
    base = _load(EST, BASE)
    assert ctx["baseline"]["key"] == BASE and ctx["baseline_peak"] == base["peak_bytes"]
    rows = ctx["by_id"]
    ckpt = _load(EST, f"{BASE}-ckpt")
    row = rows["checkpointing"]
    assert row["saving_bytes"] == base["peak_bytes"] - ckpt["peak_bytes"]
    assert row["saving"] == pytest.approx(1 - ckpt["peak_bytes"] / base["peak_bytes"])
    assert row["acts"][0] == ("activations", base["live_at_peak_bytes"]["activations"],
                              ckpt["live_at_peak_bytes"]["activations"])
    sgd = _load(EST, "bert-base-b32-s128-fp32-sgd-estimate")
    assert ("optimizer_state", base["live_at_peak_bytes"]["optimizer_state"],
            sgd["live_at_peak_bytes"]["optimizer_state"]) in rows["sgd"]["acts"]
    # set_to_none is PyTorch's default: measured as the baseline against set_to_none=False.
    zeros = _load(EST, f"{BASE}-grad-zeros")
    row = rows["set-to-none"]
    assert row["in_baseline"] and row["other"]["key"] == zeros["key"]
    assert row["saving_bytes"] == zeros["peak_bytes"] - base["peak_bytes"] > 0
    assert ("gradients", zeros["live_at_peak_bytes"]["gradients"], 0) in row["acts"]
    assert base["live_at_peak_bytes"]["gradients"] == 0 < zeros["live_at_peak_bytes"]["gradients"]
    # The optimizer's kernels act on the temporaries of the optimizer step, not at the peak.
    temporaries = {}
    for lever, key in (("fused", f"{BASE}-fused"), ("for-loop", f"{BASE}-for-loop")):
        acts = {cat: (before, after) for cat, before, after in rows[lever]["acts"]}
        temporaries[lever] = acts["temporaries"]
        assert acts["temporaries"] == (_optimizer_max(base, "temporaries"),
                                       _optimizer_max(_load(EST, key), "temporaries"))
    assert temporaries["fused"][1] < temporaries["for-loop"][1] < temporaries["fused"][0]


def test_combinations_are_set_beside_their_best_part() -> None:
    ctx = _context()
    combo = ctx["by_id"]["amp-bf16+sdpa+checkpointing"]
    parts = [ctx["by_id"][i] for i in ("amp-bf16", "sdpa", "checkpointing")]
    assert combo["best_part"] is min(parts, key=lambda row: row["reserved"])
    together = combo["together"]
    assert together["sum"] == sum(part["saving_bytes"] for part in parts)
    assert together["beyond_best"] == combo["saving_bytes"] - max(
        part["saving_bytes"] for part in parts)


def test_savings_are_stated_on_the_reserved_peak_beside_the_tensors() -> None:
    ctx = _context()
    base, ckpt = _load(EST, BASE), _load(EST, f"{BASE}-ckpt")
    row = ctx["by_id"]["checkpointing"]
    before, after = (r["allocator"]["peak_reserved_bytes"] for r in (base, ckpt))
    assert (row["ref_reserved"], row["reserved"]) == (before, after)
    assert row["reserved_saving_bytes"] == before - after
    assert row["reserved_saving"] == pytest.approx(1 - after / before)
    assert ctx["by_reserved"] and ctx["baseline_reserved"] == before
    # the fixture's example: AMP saves less of the reserved peak than of the tensors'
    amp = ctx["by_id"]["amp-bf16"]
    assert amp["reserved_saving"] < amp["saving"]


def test_ranking_follows_the_reserved_peak(tmp_path: Path) -> None:
    ranked = _context()["shown"]
    savings = [row["reserved_saving_bytes"] for row in ranked]
    assert savings == sorted(savings, reverse=True)
    assert [row["rank"] for row in ranked] == list(range(1, len(ranked) + 1))
    assert ranked[0]["id"] == "checkpointing"
    # Make fused attention save the most reserved memory: it must rise to the top, whatever
    # its tensors' peak (still above checkpointing's). Its figures still add up, as load
    # checks: activations, peak and allocated peak lower by as much.
    changed = tmp_path / "results"
    shutil.copytree(FIXTURES, changed)
    ckpt = _load(EST, f"{BASE}-ckpt")

    def cheaper(data: dict[str, Any]) -> None:
        less = data["peak_bytes"] - (ckpt["peak_bytes"] + 2**20)
        for name in ("live_at_peak_bytes", "category_max_bytes"):
            data[name]["activations"] -= less
        data["peak_bytes"] -= less
        data["allocator"]["peak_allocated_bytes"] -= less
        data["allocator"]["peak_reserved_bytes"] = ckpt["allocator"]["peak_reserved_bytes"] - 2**20

    _edit(changed / "estimate" / f"{BASE}-sdpa.json", cheaper)
    assert [row["id"] for row in _context(changed)["shown"][:2]] == ["sdpa", "checkpointing"]


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
    changed = _with_a_cuda_pair(tmp_path)
    row = _context(changed)["by_id"]["checkpointing"]
    assert row["backend"] == "cuda" and row["machine"] == "h100"
    assert row["cost"]["backend"] == "cuda" and row["cost"]["ratio"] == pytest.approx(1.3)


def test_results_without_levers_give_no_page_data() -> None:
    assert levers.context([], []) is None
    plain = [_load(EST, BASE), _load(CPU, "bert-base-b1-s128-fp32-adamw-cpu-foreach")]
    assert levers.context(plain, []) is None


@pytest.mark.parametrize("lang", LANGS)
def test_page_prints_the_ranking(lang: str) -> None:
    ctx = _context()
    page = page_markdown(levers, ctx, lang)
    for row in ctx["shown"]:
        assert saving_cell(row, True, lang) in page, row["id"]
        for _, before, after in row["acts"]:
            assert nowrap(f"{mib(before)} → {mib(after)}") in page
    order = [page.index(f"| {row['rank']} | ") for row in ctx["shown"]]
    assert order == sorted(order)
    assert page.count("<figure class=\"chart\"") == 1 and "figures/levers-peaks.svg" in page


@pytest.mark.parametrize("lang", LANGS)
def test_page_numbers_change_with_the_results(lang: str) -> None:
    """The page from changed data must print the new numbers, not the old."""
    found = [_load(EST, key) for key in (BASE, f"{BASE}-ckpt")]
    old = levers.context(found, [])["by_id"]["checkpointing"]
    extra = 3 * 2**30
    changed = copy.deepcopy(found)
    for field in ("live_at_peak_bytes", "category_max_bytes"):
        changed[0][field]["activations"] += extra
    changed[0]["peak_bytes"] += extra
    ctx = levers.context(changed, [])
    new = ctx["by_id"]["checkpointing"]
    assert new["saving_bytes"] == old["saving_bytes"] + extra
    page = page_markdown(levers, ctx, lang)
    assert saving_cell(new, True, lang) in page and saving_cell(old, True, lang) not in page
    assert f"tensors' peak {gib(new['ref_peak'])} GiB" in page or \
        f"张量峰值 {gib(new['ref_peak'])} GiB" in page
    _, before, after = new["acts"][0]
    assert nowrap(f"{mib(before)} → {mib(after)}") in page


@pytest.mark.parametrize("lang", LANGS)
def test_page_without_lever_results_says_how_to_get_them(lang: str) -> None:
    ctx = levers.context([_load(EST, BASE)], [])
    assert ctx is None
    page = page_markdown(levers, ctx, lang)
    assert "python -m generator build" not in page  # no maintainer instructions
    assert {"zh": "还没有发布", "en": "published"}[lang] in page


def test_chart_has_one_bar_per_experiment_and_is_accessible() -> None:
    ctx = _context()
    shown = bars(ctx)
    assert len(shown) == 1 + len(ctx["shown"]) + len(ctx["other_training"]) + len(ctx["combos"])
    assert ("set-to-none-off", _load(EST, f"{BASE}-grad-zeros")) in shown
    for lang in LANGS:
        svg = levers.figures(ctx, lang)["levers-peaks"]
        assert svg == levers.figures(ctx, lang)["levers-peaks"]  # deterministic
        root = check_svg(svg, f"chart-levers-peaks-{lang}")
        assert f"{gib(ctx['baseline_peak'])} GiB" in root.find(f"{SVG}desc").text


def test_a_phase_maximum_counts_what_was_live_as_the_phase_began() -> None:
    """A fused optimizer step allocates nothing: its phase still holds the parameters,
    gradients and state it began with, so its maximum is never below what is alive
    throughout (the bug: 1.54 GiB reported for a step that holds 1.63 GiB)."""
    mib = 2**20
    result = {"phases": [{"name": "forward", "tick": 1}, {"name": "backward", "tick": 10},
                         {"name": "optimizer", "tick": 20}],
              "timeline": {"tick": [1, 5, 12, 18, 25], "end_tick": 30,
                           "bytes": {"parameters": [4 * mib] * 5,
                                     "gradients": [0, 0, 2 * mib, 4 * mib, 4 * mib],
                                     "temporaries": [0, 6 * mib, 0, 0, 0]}}}
    assert lever_results.phase_max(result, "optimizer") == 8 * mib   # carried in from tick 18
    assert lever_results.phase_max(result, "optimizer", "gradients") == 4 * mib
    assert lever_results.phase_max(result, "forward") == 10 * mib
    result["timeline"]["tick"][-1], result["phases"][-1]["tick"] = 29, 28  # nothing before 29
    assert lever_results.phase_max(result, "optimizer") == 8 * mib


@pytest.mark.parametrize("lang", LANGS)
def test_lora_section_reads_what_peft_trained_from_its_result(lang: str) -> None:
    ctx = _context()
    row = ctx["by_id"]["lora"]
    lora = _load(EST, f"{BASE}-lora-r16-lora-on-query_value")
    assert row["result"]["key"] == lora["key"] and row["ref"]["key"] == BASE
    assert ("optimizer_state", _load(EST, BASE)["live_at_peak_bytes"]["optimizer_state"],
            lora["live_at_peak_bytes"]["optimizer_state"]) in row["acts"]
    page = page_markdown(levers, ctx, lang)
    section = page[page.index("### LoRA"):]
    section = section[:section.index("\n###")]
    for count in (lora["trainable_parameter_count"], lora["parameter_count"]):
        assert f"{count:,}" in section
    for nbytes in (lora["live_at_peak_bytes"]["activations"],
                   lora["category_max_bytes"]["gradients"],
                   lora["live_at_peak_bytes"]["optimizer_state"]):
        assert mib(nbytes) in section
    assert row["saved"][lang] in section  # what LoRA saves


@pytest.mark.parametrize("lang", LANGS)
def test_without_a_lora_result_the_page_says_what_to_install(lang: str) -> None:
    found = [r for r in results.load_all(FIXTURES) if not r["experiment"]["lora_rank"]]
    page = page_markdown(levers, levers.context(found, []), lang)
    assert "### LoRA" in page and "pip install peft" in page


@pytest.mark.parametrize("lang", LANGS)
def test_lora_is_listed_apart_from_the_ranked_memory_settings(lang: str) -> None:
    """LoRA trains something else (the registry's kind "fine-tune"): no rank, its own table
    and sentence, and a bar marked as another kind of training."""
    ctx = _context()
    assert "lora" not in {row["id"] for row in ctx["shown"]}
    assert [row["id"] for row in ctx["other_training"]] == ["lora"]
    assert "rank" not in ctx["other_training"][0]
    assert all(row["id"] != "lora" for row in ctx["strongest"])
    page = page_markdown(levers, ctx, lang)
    ranking = page[page.index("| # |"):]
    ranking = ranking[:ranking.index("\n\n")]
    assert ctx["names"]["lora"][lang] not in ranking
    assert {"en": "A different kind of training, listed apart",
            "zh": "另一种训练单独列出"}[lang] in page
    svg = levers.figures(ctx, lang)["levers-peaks"]
    assert {"en": "(another kind of training)", "zh": "（另一种训练）"}[lang] in svg


@pytest.mark.parametrize("lang", LANGS)
def test_without_step_times_there_is_no_time_section_but_one_line(lang: str) -> None:
    ctx = _context()
    assert not ctx["costs"] and ctx["untimed"] is not None  # the fixtures' CPU runs: a median
    page = page_markdown(levers, ctx, lang)
    assert "{: #time }" not in page and "(#time)" not in page
    assert ctx["untimed"][lang] in page.split("\n")  # a line of its own


@pytest.mark.parametrize("lang", LANGS)
def test_the_intro_says_accumulation_owes_its_rank_to_its_count(lang: str) -> None:
    ctx = _context()
    page = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", page_markdown(levers, ctx, lang))  # links
    assert ctx["strongest_words"][lang] in page
    if any("micro_batches" in row["use"] for row in ctx["strongest"]):
        assert {"en": "this site chose", "zh": "本站选了"}[lang] in ctx["strongest_words"][lang]


def test_the_chinese_page_puts_no_space_between_chinese_characters() -> None:
    """Names joined into sentences (、/和, 换上…, 比单用…) without stray spaces; a space
    stays only between a character and Latin or a digit."""
    page = page_markdown(levers, _context(), "zh")
    page = "\n".join(line for line in page.splitlines() if not line.startswith(("|", "#")))
    prose = re.sub(r"<[^>]+>|\]\([^)]*\)", "", re.sub(r"`[^`]*`", "C", page))
    assert not re.findall(r"[\u4e00-\u9fff] [\u4e00-\u9fff]", prose)
    assert not re.findall(r"[、，。：；（）] | [、，。：；）]", prose)
    assert "实测" not in prose.replace("CPU 实测", "").replace("GPU 实测", "")


@pytest.mark.parametrize("lang", LANGS)
def test_step_times_that_mean_something_get_their_section(tmp_path: Path, lang: str) -> None:
    """A CUDA pair of the example that records each timed step: the section is there, linked
    from the ranking, and the CPU timings left out are said in a line under its table."""
    changed = _with_a_cuda_pair(tmp_path, spread=(0.99, 1.0, 1.0, 1.01, 1.0))
    ctx = _context(changed)
    assert [row["id"] for row in ctx["costs"]] == ["checkpointing"]
    page = page_markdown(levers, ctx, lang)
    assert "{: #time }" in page and "(#time)" in page
    assert ctx["untimed"] is not None and ctx["untimed"][lang] in page
    assert ctx["untimed"][lang].startswith({"en": "Left out:", "zh": "没有列出的："}[lang])


def _with_a_cuda_pair(tmp_path: Path, spread: tuple[float, ...] | None = None) -> Path:
    """The fixture results plus a CUDA run of the example with and without checkpointing
    (0.2 and 0.26 s a step; each timed step recorded where `spread` gives their factors)."""
    changed = tmp_path / "results"
    shutil.copytree(FIXTURES, changed)
    gpu = changed / "h100"
    gpu.mkdir()
    for key, seconds in ((BASE, 0.2), (f"{BASE}-ckpt", 0.26)):
        cuda_key = key.replace("estimate", "cuda")
        data = json.loads((EST / f"{key}.json").read_text())
        data["experiment"].update(backend="cuda", device="cuda")
        data.update(key=cuda_key, backend="cuda", step_seconds=seconds)
        if spread is not None:
            data["step_times"] = [seconds * f for f in spread]
        (gpu / f"{cuda_key}.json").write_text(json.dumps(data))
    return changed
