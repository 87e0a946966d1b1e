"""The precision page from fixture studies measured on the CPU (tests/fixtures/precision,
with the torch_facts study): its data, charts and tables, and the page in both languages.
The studies' own logic: test_studies.py; their runs: slow/test_study_runs.py."""

from __future__ import annotations

import copy

import pytest
from conftest import FIXTURES as ALL_FIXTURES
from conftest import LANGS
from page_checks import check_svg, page_markdown, prose, site_inputs

from generator.site.derived import torch_facts
from generator.site.pages import precision
from generator.units import pct

FIXTURES = ALL_FIXTURES / "precision"


@pytest.fixture(scope="module")
def studies() -> list[dict]:
    return site_inputs(FIXTURES)[1]


def _context(studies: list[dict]) -> dict:
    return precision.context([], studies)


def test_context_reads_the_fixture_studies(studies) -> None:
    ctx = _context(studies)
    assert [v["name"] for v in ctx["curves"]] == ["training-curves-cpu", "training-curves-fp16"]
    u = ctx["underflow"]
    assert u["model"] == "bert-base" and u["scale_log2"] == 16
    assert u["limits"] == {"fp16_normal_log2": -14, "fp16_subnormal_log2": -24}
    p = u["parameters"]
    assert p["fp16"]["lost_fraction"] > p["fp16_scaled"]["lost_fraction"]
    assert ctx["range_claim"]["decade_ratio"] == pytest.approx(
        ctx["ranges"]["fp16"]["decades"] / ctx["ranges"]["fp32"]["decades"])
    fp16_run = next(r for r in ctx["curves"][1]["amp"] if r["precision"] == "amp-fp16")
    assert fp16_run["final_scale_text"] == "2¹⁶"
    facts = torch_facts(studies)
    assert ctx["ranges"] == facts["by_name"]
    assert ctx["scaler"]["init_scale"] == facts["grad_scaler"]["init_scale"] == 2.0 ** 16


@pytest.mark.parametrize("lang", LANGS)
def test_charts_are_well_formed_and_described(studies, lang) -> None:
    figures = precision.figures(_context(studies), lang)
    assert len(figures) == 3  # two training studies' curves and the underflow histogram
    for name, svg in figures.items():
        check_svg(svg, f"chart-{name}-{lang}")
    assert figures == precision.figures(_context(copy.deepcopy(studies)), lang)


@pytest.mark.parametrize("lang", LANGS)
def test_page_prints_the_fixture_numbers(studies, lang) -> None:
    ctx = _context(studies)
    page = page_markdown(precision, ctx, lang)
    p = ctx["underflow"]["parameters"]
    assert f"**{pct(p['fp16']['lost_fraction'])}**" in page
    assert f"{p['fp16_scaled']['lost']:,}" in page
    bf16 = ctx["curves"][0]["amp"][0]
    assert f"{bf16['eval_loss']:.4f}" in page and f"{bf16['eval_loss_difference']:+.4f}" in page
    assert "GradScaler" in page and "2¹⁶" in page
    assert page.count("<figure class=\"chart\"") == 3
    assert "1/16" in page and f"1/{1 / ctx['range_claim']['decade_ratio']:.1f}" in page


@pytest.mark.parametrize("lang", LANGS)
def test_page_with_the_formats_alone(studies, lang) -> None:
    """The torch_facts study without the others: the formats' table, no figure."""
    ctx = _context([s for s in studies if s["study"]["kind"] == "torch_facts"])
    assert ctx["curves"] == [] and ctx["underflow"] is None
    page = page_markdown(precision, ctx, lang)
    assert "<figure" not in page
    assert f"{ctx['ranges']['fp16']['smallest_normal']:.3g}" in page


@pytest.mark.parametrize("lang", LANGS)
def test_page_without_the_torch_facts_study_says_how_to_get_it(studies, lang) -> None:
    ctx = _context([s for s in studies if s["study"]["kind"] != "torch_facts"])
    assert ctx is None
    page = page_markdown(precision, ctx, lang)
    assert "torch_facts" in page and "python -m generator build" not in page
    assert {"zh": "没有发布", "en": "published"}[lang] in page


def test_numbers_follow_the_studies(studies) -> None:
    """Change the fixture studies: the pages must change with them."""
    changed = copy.deepcopy(studies)
    curves = next(s for s in changed if s["study"]["name"] == "training-curves-cpu")
    bf16 = curves["data"]["runs"][1]
    bf16["eval_loss"], bf16["eval_loss_difference"] = 0.4321, -0.1234
    grads = next(s for s in changed if s["study"]["kind"] == "underflow")
    total = next(g for g in grads["data"]["groups"] if g["name"] == "parameters")
    total["casts"]["fp16"]["subnormal_fraction"] = 0.5
    total["casts"]["fp16"]["zero_fraction"] = 0.25
    for lang in LANGS:
        before = prose(page_markdown(precision, _context(studies), lang))
        page = prose(page_markdown(precision, _context(changed), lang))
        assert "0.4321" in page and "-0.1234" in page and "0.4321" not in before
        assert "**75.0 %**" in page and "**75.0 %**" not in before


# Whether a precision's loss differs from fp32's beyond the seeds' noise (issue 34).
def _seeds(diffs: list[float], fp32: list[float]) -> list[dict]:
    rows = [{"precision": "fp32", "seed": i, "eval_loss": loss} for i, loss in enumerate(fp32)]
    return rows + [{"precision": "amp-bf16", "seed": i, "eval_loss": fp32[i] + d}
                   for i, d in enumerate(diffs)]


def test_seed_noise_says_one_pair_cannot_tell():
    from generator.site.pages.precision import seed_noise
    found = seed_noise(_seeds([-0.07], [0.58, 0.69]), "amp-bf16")
    assert found["verdict"] == "cannot_tell" and found["seeds"] == 1
    assert abs(found["fp32_gap"] - 0.11) < 1e-9


def test_seed_noise_within_and_beyond():
    from generator.site.pages.precision import seed_noise
    fp32 = [0.58, 0.69, 0.56, 0.47, 0.63]
    within = seed_noise(_seeds([-0.067, 0.004, -0.1, 0.051, 0.022], fp32), "amp-bf16")
    assert within["verdict"] == "within" and within["seeds"] == 5
    assert abs(within["mean"]) <= 2 * within["error"]
    beyond = seed_noise(_seeds([0.10, 0.11, 0.09, 0.12, 0.10], fp32), "amp-bf16")
    assert beyond["verdict"] == "beyond" and beyond["mean"] > 2 * beyond["error"]


def test_cast_words_show_a_small_share_and_say_the_same_where_two_print_alike():
    """The underflow chart's description (issue 34): a share of 0.0046 % is not printed as
    0.00 %, an exact zero is "none", and two shares that print alike read "the same"."""
    from generator.site.pages.precision.charts import cast_words
    differ = cast_words(0.0, 4.6e-5)
    assert differ.en == "none becomes 0 and 0.0046 % subnormal"
    assert differ.zh == "没有值变成 0，0.0046 % 成为次正规数"
    assert cast_words(4.2e-4, 0.3616).en == "0.042 % become 0 and 36.16 % subnormal"
    alike = cast_words(1.0e-4, 1.001e-4)
    assert alike.en == "0.010 % become 0 and the same share subnormal"
    assert alike.zh == "0.010 % 变成 0，成为次正规数的也是这么多"
    assert cast_words(0.0, 0.0).en == "none becomes 0 or subnormal"


@pytest.mark.parametrize("lang", LANGS)
def test_underflow_description_writes_the_scale_as_the_page_does(studies, lang) -> None:
    svg = precision.figures(_context(studies), lang)["precision-underflow"]
    desc = svg.split("<desc", 1)[1].split("</desc>", 1)[0]
    assert "2¹⁶" in desc and "2^" not in desc and "0.00 %" not in desc
