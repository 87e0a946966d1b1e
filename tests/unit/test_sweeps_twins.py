"""AMP fp16 and AMP bf16 on the sweeps page (sweeps/twins.py, issue 34): printed once,
labelled for both, where every figure of theirs prints alike, and both where any differs;
first the decision on small synthetic figures, then the page on the tiny model's fixture
sweeps with an AMP fp16 twin of the AMP bf16 results."""

from __future__ import annotations

import copy

import pytest
from conftest import FIXTURES as ALL_FIXTURES
from conftest import LANGS
from page_checks import page_markdown, site_inputs

from generator.site.pages import sweeps
from generator.site.pages.sweeps import twins

MIB = 2 ** 20


def test_twins_are_the_same_only_where_every_printed_figure_is() -> None:
    sizes = {"amp-fp16": [100.0, 2000.0], "amp-bf16": [100.0, 2000.0 + 1536]}
    same = twins.twins({"fp32": ["9"], "amp-fp16": ["1.0", "2.0"], "amp-bf16": ["1.0", "2.0"]},
                       sizes)
    assert same == {"same": True, "kept": "amp-fp16", "left_out": "amp-bf16", "gap": 1536}
    differ = twins.twins({"amp-fp16": ["1.0", "2.0"], "amp-bf16": ["1.0", "2.1"]}, sizes)
    assert not differ["same"] and differ["gap"] == 1536
    # without the pair there is nothing to merge
    assert twins.twins({"fp32": ["9"], "amp-bf16": ["1.0"]}, {}) == {"same": False}


def test_shown_leaves_out_bf16_only_where_it_is_a_twin_and_labels_the_row_for_both() -> None:
    series = {"fp32": 1, "amp-fp16": 2, "amp-bf16": 3}
    same = {"same": True, "kept": "amp-fp16", "left_out": "amp-bf16", "gap": 0}
    assert list(twins.shown(series, same)) == ["fp32", "amp-fp16"]
    assert twins.label("amp-fp16", same).en == "AMP fp16 = AMP bf16"
    assert twins.label("amp-fp16", same, twins.AND).zh == "AMP fp16 和 AMP bf16"
    assert twins.label("fp32", same).en == "FP32"
    differ = {**same, "same": False}
    assert list(twins.shown(series, differ)) == ["fp32", "amp-fp16", "amp-bf16"]
    assert twins.label("amp-fp16", differ).en == "AMP fp16"
    assert list(twins.shown(series, {"same": False})) == list(series)


@pytest.fixture(scope="module")
def with_fp16() -> list[dict]:
    """The fixture sweeps with an AMP fp16 copy of every AMP bf16 result."""
    found = site_inputs(ALL_FIXTURES / "sweeps")[0]
    copies = copy.deepcopy([r for r in found if r["experiment"]["precision"] == "amp-bf16"])
    for r in copies:
        r["experiment"]["precision"] = "amp-fp16"
        r["key"] = r["key"].replace("amp-bf16", "amp-fp16")
        r["peak_bytes"] += 1536  # GradScaler's three small tensors: prints alike
    return found + copies


def _bf16_peaks_grow(found: list[dict], extra: int) -> list[dict]:
    changed = copy.deepcopy(found)
    for r in changed:
        if r["experiment"]["precision"] == "amp-bf16":
            r["peak_bytes"] += extra * r["experiment"]["batch_size"]
            r["live_at_peak_bytes"]["temporaries"] += extra * r["experiment"]["batch_size"]
    return changed


@pytest.mark.parametrize("lang", LANGS)
def test_page_prints_alike_twins_once_with_the_sentence_that_says_so(with_fp16, lang) -> None:
    ctx = sweeps.context(with_fp16, [])
    for group in ctx["batch"] + ctx["seq"]:
        assert group["twins"]["same"] and group["twins"]["gap"] == 1536
        assert list(group["shown"]) == ["fp32", "amp-fp16"]
    page = page_markdown(sweeps, ctx, lang)
    both = sweeps.sweep_tables.label("amp-fp16", ctx["batch"][0], lang)
    assert "AMP fp16 = AMP bf16" in page and both in page
    # no row nor column of its own: bf16's swatch only ever follows fp16's
    bf16 = sweeps.sweep_tables.swatch("amp-bf16", lang)
    assert page.count(bf16) == page.count(f"= {bf16}") > 0
    said = {"en": "at every batch size their peaks differ by at most 1.5 KiB",
            "zh": "每个 batch 大小下两者的峰值最多只差 1.5 KiB）"}[lang]
    assert said in page
    figures = sweeps.figures(ctx, lang)
    for svg in figures.values():
        desc = svg.split("<desc", 1)[1].split("</desc>", 1)[0]
        assert desc.count("AMP bf16") == 1 and "AMP fp16 = AMP bf16" in desc


@pytest.mark.parametrize("lang", LANGS)
def test_page_prints_both_where_a_figure_differs(with_fp16, lang) -> None:
    ctx = sweeps.context(_bf16_peaks_grow(with_fp16, 2 * MIB), [])
    batch = ctx["batch"][0]
    assert not batch["twins"]["same"] and list(batch["shown"]) == list(batch["series"])
    assert batch["twins"]["gap"] >= 2 * MIB
    page = page_markdown(sweeps, ctx, lang)
    # every bf16 point moved, in the sequence sweep (batch 8) too: nothing is merged
    assert not ctx["seq"][0]["twins"]["same"]
    assert "AMP fp16 = AMP bf16" not in page
    said = {"en": "do not print alike here", "zh": "印出来的数字不完全一样"}[lang]
    assert page.count(said) == 2
    bf16 = sweeps.sweep_tables.swatch("amp-bf16", lang)
    assert f"= {bf16}" not in page and page.count(bf16) > 4
