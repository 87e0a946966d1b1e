"""The article's pages (home, explainer, claims, methodology) and the reports, from the
fixture results: the example picked, the claims checked against it (two need the torch_facts
study), the numbers printed and following the results, and the code the explainer shows."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from conftest import FIXTURES, LANGS, REPO_ROOT
from page_checks import page_markdown, site_inputs

from generator.site.derived import ARTICLE, torch_facts
from generator.site.pages import article, reports
from generator.site.pages.article.claims import FAILS, HOLDS, check_claims
from generator.units import gib, mib

PRECISIONS = ("fp32", "amp-fp16", "amp-bf16")
ARTICLE_PAGES = ("index.md", "explainer.md", "claims.md", "methodology.md")
FP32_KEY = "bert-base-b32-s128-fp32-adamw-estimate"


@pytest.fixture(scope="module")
def inputs() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return site_inputs(FIXTURES / "results")


@pytest.fixture(scope="module")
def ctx(inputs) -> dict[str, Any]:
    return article.context(*inputs)


def test_the_example_in_every_precision(ctx, inputs) -> None:
    found = ctx["article_results"]
    assert sorted(found) == sorted(PRECISIONS)
    for precision, result in found.items():
        assert all(result["experiment"][k] == v for k, v in ARTICLE.items())
        assert result["experiment"]["precision"] == precision
        assert result["backend"] == "estimate"  # the fixture's GPU stand-in beats the CPU runs
    fp32, fp16 = found["fp32"], found["amp-fp16"]
    head = ctx["headline"]
    assert head["fp32_peak"] == fp32["peak_bytes"]
    live = fp32["live_at_peak_bytes"]
    assert head["largest"] == max(live, key=live.get)
    assert head["savings"]["amp-fp16"]["saving"] == pytest.approx(
        1 - fp16["peak_bytes"] / fp32["peak_bytes"])
    assert ctx["result_count"] == len(inputs[0])


def test_two_claims_need_the_torch_facts_study(ctx, inputs) -> None:
    results, studies = inputs
    facts = torch_facts(studies)
    assert facts is not None
    claims = {c["id"]: c for c in ctx["claims"]}
    assert {"fp16_range", "cuda_amp_api"} <= set(claims)
    formats = facts["by_name"]
    # the fair measure of a range: decades spanned; the ratio of the largest values beside it
    values = claims["fp16_range"]["values"]
    assert values["ratio"] == formats["fp16"]["decades"] / formats["fp32"]["decades"]
    assert values["max_ratio"] == formats["fp16"]["max"] / formats["fp32"]["max"]
    assert claims["cuda_amp_api"]["verdict"] == ("outdated" if facts["cuda_amp_deprecated"]
                                                else "holds")
    assert claims["cuda_amp_api"]["values"]["torch"] == facts["torch"]
    without = {c["id"] for c in check_claims(ctx["article_results"], None)}
    assert without == set(claims) - {"fp16_range", "cuda_amp_api"}
    assert article.context(results, [])["ranges"] == []


def test_a_verdict_follows_the_measurement(ctx) -> None:
    """The article's 12 GB of activations: our fixture's are far fewer; measure 12 GB and the
    claim holds."""
    def verdict(found: dict[str, Any]) -> str:
        [claim] = [c for c in check_claims(found, None) if c["id"] == "activations_12gb"]
        return claim["verdict"]

    assert verdict(ctx["article_results"]) == FAILS
    changed = copy.deepcopy(ctx["article_results"])
    fp32 = changed["fp32"]
    extra = 12 * 10**9 - fp32["live_at_peak_bytes"]["activations"]
    fp32["live_at_peak_bytes"]["activations"] += extra
    fp32["peak_bytes"] += extra
    assert verdict(changed) == HOLDS


@pytest.mark.parametrize("lang", LANGS)
def test_every_article_page_renders(ctx, lang: str) -> None:
    for path in ARTICLE_PAGES:
        text = page_markdown(article, ctx, lang, path)
        assert text.startswith("#") or text.startswith("---"), path
    claims = page_markdown(article, ctx, lang, "claims.md")
    rows = [line for line in claims.splitlines() if line.startswith("| ") and line[2:3].isdigit()]
    assert len(rows) == len(ctx["claims"])


def test_the_report_prints_the_fixture_numbers(inputs) -> None:
    found = reports.context(*inputs)
    [fp32] = [r for r in found["bert-base"] if r["key"] == FP32_KEY]
    page = page_markdown(reports, found, "en", "reports/bert-base.md")
    for cat, nbytes in fp32["live_at_peak_bytes"].items():
        if nbytes:
            assert f"| {mib(nbytes)} |" in page, cat
    assert f"**{mib(fp32['peak_bytes'])}**" in page
    assert fp32["json_path"] in page
    index = page_markdown(reports, found, "en", "reports/index.md")
    assert "bert-base" in index


@pytest.mark.parametrize("lang", LANGS)
def test_numbers_follow_the_results(inputs, lang: str) -> None:
    """Add 3 GiB of activations to the example's FP32 result: every page that prints it
    changes accordingly (no typed numbers)."""
    results, studies = copy.deepcopy(inputs)
    [fp32] = [r for r in results if r["key"] == FP32_KEY]
    extra = 3 * 2**30
    fp32["live_at_peak_bytes"]["activations"] += extra
    fp32["category_max_bytes"]["activations"] += extra
    fp32["peak_bytes"] += extra
    ctx = article.context(results, studies)
    activations = mib(fp32["live_at_peak_bytes"]["activations"])
    assert f"**{gib(fp32['peak_bytes'])} GiB**" in page_markdown(article, ctx, lang, "index.md")
    assert activations in page_markdown(article, ctx, lang, "explainer.md")
    report = page_markdown(reports, reports.context(results, studies), lang, "reports/bert-base.md")
    assert f"| {activations} |" in report
    # the claims box: the gap the sum of maxima explains, and the activations' ratio
    claims = page_markdown(article, ctx, lang, "claims.md")
    habit = sum(fp32["category_max_bytes"].values()) - fp32["peak_bytes"]
    assert f"{gib(habit)} GiB" in claims and f"{gib(fp32['peak_bytes'])} GiB" in claims


@pytest.mark.parametrize("lang", LANGS)
def test_without_the_example_the_pages_say_how_to_measure_it(lang: str) -> None:
    results, studies = site_inputs(FIXTURES / "sweeps")
    ctx = article.context(results, studies)
    assert ctx["article_results"] == {} and ctx["headline"] is None
    for path in ("index.md", "explainer.md"):
        page = page_markdown(article, ctx, lang, path)
        prose = page.split("```")[::2]  # the home page's commands to reproduce it aside
        assert not any("generator build" in p for p in prose), path  # no maintainer instructions
        assert {"zh": "还没有发布", "en": "published"}[lang] in page, path


def test_the_snippet_uses_the_current_amp_api() -> None:
    code = (REPO_ROOT / "templates" / article.SNIPPET).read_text(encoding="utf-8")
    assert "torch.amp.autocast(" in code and "torch.amp.GradScaler(" in code
    assert "torch.cuda.amp" not in code
    assert article.context([], [])["snippet"]["en"] == code  # the explainer shows the file


@pytest.mark.parametrize("lang", LANGS)
def test_the_claims_page_gives_binary_units_with_decimal_beside(inputs, lang: str) -> None:
    """Units (issue 13, item 7): this site's figures in GiB/MiB; a decimal GB/MB only in
    parentheses right after one of ours (the article's own figures are quoted as written,
    in the second column)."""
    ctx = article.context(*copy.deepcopy(inputs))
    page = page_markdown(article, ctx, lang, "claims.md")
    rows = [line.split(" | ") for line in page.splitlines() if re.match(r"^\| \d+ \|", line)]
    assert rows
    decimal = re.compile(r"[\d.,]+ (?:GB|MB)")
    beside = re.compile(r"[\d.,]+ (?:GiB|MiB) ?[(（][\d.,]+ (?:GB|MB)[)）]")
    for cells in rows:
        ours = cells[2]
        assert len(decimal.findall(ours)) == len(beside.findall(ours)), ours


@pytest.mark.parametrize("lang", LANGS)
def test_real_runs_beside_their_estimates_on_the_cpu_and_on_a_gpu(lang: str) -> None:
    """The methodology page's checks: a CPU run under the CPU allocator, a GPU run of the
    built-in suite under its own heading, and a published H100 run's step measured on a GPU
    on neither (the accuracy page holds it)."""
    from made_results import hand_made_result

    from generator.results.reference_runs import runs

    def real(backend: str, batch: int, **fields) -> list[dict[str, Any]]:
        estimate = hand_made_result(batch_size=batch, device=backend, **fields)
        measured = hand_made_result(batch_size=batch, backend=backend, device=backend,
                                    **fields)
        measured["ground_truth"] = {"source": "test", "peak_bytes": 6 * 2**20,
                                    "max_reserved_bytes": 8 * 2**20, "context_bytes": 2**29,
                                    "allocator_overhead_bytes": 2 * 2**20}
        estimate["environment"]["machine_id"] = "estimate"
        measured["environment"].update(device_name="NVIDIA H200", machine_id=backend)
        return [estimate, measured]

    published = hand_made_result(batch_size=7, backend="cuda", device="cuda")
    published["key"] = runs()[0].key_on("cuda")
    published["ground_truth"] = {"source": "test", "peak_bytes": 2**20,
                                 "max_reserved_bytes": 2**21, "context_bytes": 2**29,
                                 "allocator_overhead_bytes": 2**20}
    published["environment"]["machine_id"] = "cuda"
    results = real("cpu", 3) + real("cuda", 5) + [published]
    ctx = article.context(results, [])
    # the explainer's list of what only a GPU shows leaves the published run's step out too
    assert [r["result"]["experiment"]["batch_size"] for r in ctx["cuda_overhead"]] == [5]
    page = page_markdown(article, ctx, lang, "methodology.md")
    gpu_word, cpu_word = {"en": ("measured on a GPU", "measured on the CPU"),
                          "zh": ("GPU 实测", "CPU 实测")}[lang]
    rows = [line for line in page.splitlines() if line.startswith("| tiny ") and " % |" in line]
    assert len(rows) == 2
    assert "b5" in rows[0] and gpu_word in rows[0] and "NVIDIA H200" in rows[0]
    assert "b3" in rows[1] and cpu_word in rows[1]
