"""The charts of one step (site/charts/step_charts.py) on the fixture results of the article's
example: well-formed, accessible, deterministic SVG with unique ids, in both languages, the
fixture's numbers printed. The fonts they are measured with: test_chart_fonts.py."""

from __future__ import annotations

import copy
import json
import re
from typing import Any, Callable

import matplotlib
import pytest
from conftest import FIXTURES, LANGS
from page_checks import SVG, check_svg, svg_ids, svg_texts

from generator.results.shapes import CATEGORIES
from generator.site.charts import canvas, step_charts
from generator.site.labels import CATEGORY_LABELS, PRECISION_LABELS
from generator.site.palette import CATEGORY_COLORS

ESTIMATE = "estimate/bert-base-b32-s128-{}-adamw-estimate.json"
CPU = "cpu-amd-epyc/bert-base-b4-s128-{}-adamw-cpu.json"
NAMES = ("bars", "timeline", "modules")
CJK = re.compile(r"[\u4e00-\u9fff]")


def load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / "results" / name).read_text(encoding="utf-8"))


def gib_by_hand(nbytes: int) -> str:
    return f"{nbytes / 2**30:.2f} GiB"


@pytest.fixture(scope="module")
def by_precision() -> dict[str, dict[str, Any]]:
    # Deliberately out of order: the chart must put fp32 first whatever the dict's order.
    return {p: load(ESTIMATE.format(p)) for p in ("amp-bf16", "fp32", "amp-fp16")}


def draw(name: str, by_precision: dict[str, dict[str, Any]], lang: str) -> str:
    if name == "bars":
        return step_charts.stacked_bars(by_precision, lang)
    chart = step_charts.timeline if name == "timeline" else step_charts.module_activations
    return chart(by_precision["fp32"], lang)


@pytest.fixture(scope="module")
def rendered(by_precision) -> dict[tuple[str, str], str]:
    """Each chart in each language, drawn once for the whole module."""
    return {(name, lang): draw(name, by_precision, lang) for lang in LANGS for name in NAMES}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", NAMES)
def test_well_formed_and_accessible(rendered, name: str, lang: str) -> None:
    svg = rendered[name, lang]
    root = check_svg(svg, f"chart-{name}-.+-{lang}")
    assert "GiB" in root.find(f"{SVG}desc").text or "MiB" in root.find(f"{SVG}desc").text
    assert svg_texts(svg)  # text kept as text
    assert "Noto Sans CJK SC" in svg and "sans-serif" in svg  # the CSS font stack


@pytest.mark.parametrize("lang", LANGS)
def test_deterministic(by_precision, rendered, lang: str) -> None:
    for name in NAMES:
        assert draw(name, copy.deepcopy(by_precision), lang) == rendered[name, lang], name


def test_ids_unique_across_charts_and_languages(rendered) -> None:
    ids = [i for svg in rendered.values() for i in svg_ids(svg)]
    assert ids and len(ids) == len(set(ids))


def test_ids_differ_between_experiments_on_one_page(by_precision) -> None:
    # the three precisions' timelines and block charts share the explainer page (content tabs)
    svgs = [chart(r, "en") for r in by_precision.values()
            for chart in (step_charts.timeline, step_charts.module_activations)]
    ids = [i for svg in svgs for i in svg_ids(svg)]
    assert len(ids) == len(set(ids))


def test_category_colours(rendered, by_precision) -> None:
    bars = rendered["bars", "en"].lower()
    for cat in CATEGORIES:
        if any(r["live_at_peak_bytes"].get(cat) for r in by_precision.values()):  # fixtures
            # stored before not_attributed existed leave it out
            assert CATEGORY_COLORS[cat].lower() in bars, cat
    timeline = rendered["timeline", "en"].lower()
    for cat in CATEGORIES:
        if any(by_precision["fp32"]["timeline"]["bytes"].get(cat, ())):
            assert CATEGORY_COLORS[cat].lower() in timeline, cat
    assert CATEGORY_COLORS["activations"].lower() in rendered["modules", "en"].lower()


def test_languages(rendered) -> None:
    for name in NAMES:
        zh, en = rendered[name, "zh"], rendered[name, "en"]
        assert CJK.search(" ".join(svg_texts(zh))), name
        assert not CJK.search(en), name
    for lang in LANGS:
        words = canvas.words(lang)
        assert CATEGORY_LABELS["activations"][lang] in svg_texts(rendered["bars", lang])
        assert words["events"] in svg_texts(rendered["timeline", lang])
        assert words["backward"] in svg_texts(rendered["timeline", lang])
        assert words["outside"] in svg_texts(rendered["modules", lang])
    assert canvas.words("zh")["events"] != canvas.words("en")["events"]


def test_peaks_printed(rendered, by_precision) -> None:
    fp32 = by_precision["fp32"]["peak_bytes"]
    for lang in LANGS:
        bars = svg_texts(rendered["bars", lang])
        for result in by_precision.values():
            assert gib_by_hand(result["peak_bytes"]) in bars
        assert any(t.endswith(gib_by_hand(fp32)) for t in svg_texts(rendered["timeline", lang]))
    assert f"Peak {gib_by_hand(fp32)}" in svg_texts(rendered["timeline", "en"])
    desc = check_svg(rendered["bars", "en"], ".+").find(f"{SVG}desc").text
    assert desc.startswith("Peak: " + ", ".join(
        f"{PRECISION_LABELS[p]['en']} {gib_by_hand(by_precision[p]['peak_bytes'])}"
        for p in ("fp32", "amp-fp16", "amp-bf16")) + ".")


def test_bars_in_precision_order(rendered) -> None:
    labels = svg_texts(rendered["bars", "en"])
    shown = [PRECISION_LABELS[p]["en"] for p in ("fp32", "amp-fp16", "amp-bf16")]
    assert [labels.index(p) for p in shown] == sorted(labels.index(p) for p in shown)


def test_modules_in_model_order(rendered, by_precision) -> None:
    blocks = [t for t in svg_texts(rendered["modules", "en"]) if not t.endswith("MiB")
              and not re.fullmatch(r"[\d.]+", t) and "(MiB)" not in t]
    layers = [f"layers.{i}" for i in range(12)]
    assert blocks == ["embeddings", *layers, "mlm_head", canvas.words("en")["outside"]]
    layer = by_precision["fp32"]["module_activation_bytes"]["layers.0"]
    assert f"{layer / 2**20:,.1f} MiB" in rendered["modules", "en"]


def test_timeline_of_a_cpu_run_with_autocast_copies() -> None:
    result = load(CPU.format("amp-bf16"))
    svg = step_charts.timeline(result, "en")
    assert CATEGORY_COLORS["autocast_copies"].lower() in svg.lower()
    assert f"Peak {gib_by_hand(result['peak_bytes'])}" in svg_texts(svg)


def test_mixed_backends_are_named(by_precision) -> None:
    mixed = {"fp32": by_precision["fp32"], "amp-bf16": load(CPU.format("amp-bf16"))}
    svg = step_charts.stacked_bars(mixed, "en")
    assert any("measured on the CPU" in t for t in svg_texts(svg))


@pytest.mark.parametrize("chart", (
    lambda r, lang: step_charts.stacked_bars({"fp32": r}, lang), step_charts.timeline,
    step_charts.module_activations), ids=NAMES)
def test_bad_language(by_precision, chart: Callable[[dict, str], str]) -> None:
    for lang in ("fr", "ZH", ""):
        with pytest.raises(ValueError, match="language"):
            chart(by_precision["fp32"], lang)


def test_failed_result_is_refused(by_precision) -> None:
    failed = copy.deepcopy(by_precision["fp32"])
    failed["error"] = "out_of_memory"
    with pytest.raises(ValueError, match="out_of_memory"):
        step_charts.timeline(failed, "en")


def test_rc_params_left_alone(by_precision) -> None:
    before = dict(matplotlib.rcParams)
    step_charts.module_activations(by_precision["fp32"], "zh")
    assert dict(matplotlib.rcParams) == before
