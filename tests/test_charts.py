"""The charts: well-formed, accessible, deterministic SVG with unique ids, in both languages."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Callable

import matplotlib
import pytest

from generator.site.style import charts
from generator.site.style.labels import CATEGORY_LABELS
from generator.site.style.palette import CATEGORY_COLORS
from generator.results.shapes import CATEGORIES

from conftest import REPO_ROOT, cli_env

RESULTS = Path(__file__).parent / "fixtures" / "results"
ESTIMATE = "estimate/bert-base-b32-s128-{}-adamw-estimate.json"
CPU = "cpu-amd-epyc/bert-base-b4-s128-{}-adamw-cpu.json"
SVG = "{http://www.w3.org/2000/svg}"
LANGS = ("zh", "en")


def load(name: str) -> dict[str, Any]:
    with open(RESULTS / name, encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def by_precision() -> dict[str, dict[str, Any]]:
    # Deliberately out of order: the chart must put fp32 first whatever the dict's order.
    return {p: load(ESTIMATE.format(p)) for p in ("amp-bf16", "fp32", "amp-fp16")}


@pytest.fixture(scope="module")
def rendered(by_precision) -> dict[tuple[str, str], str]:
    """Each chart in each language, drawn once for the whole module."""
    fp32 = by_precision["fp32"]
    return {(name, lang): draw(lang) for lang in LANGS for name, draw in {
        "bars": lambda lang: charts.stacked_bars(by_precision, lang),
        "timeline": lambda lang: charts.timeline(fp32, lang),
        "modules": lambda lang: charts.module_activations(fp32, lang),
    }.items()}


def texts(svg: str) -> list[str]:
    """Every visible string: the text of each <text> element (svg.fonttype is none)."""
    root = ET.fromstring(svg)
    return ["".join(el.itertext()) for el in root.iter(f"{SVG}text")]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", ("bars", "timeline", "modules"))
def test_well_formed_and_accessible(rendered, name: str, lang: str) -> None:
    svg = rendered[name, lang]
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    assert root.get("role") == "img"
    assert root.get("id").startswith(f"chart-{name}-") and root.get("id").endswith(f"-{lang}")
    title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
    assert title is not None and title.text and desc is not None and desc.text
    assert root.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    assert "GiB" in desc.text or "MiB" in desc.text  # the figures, in words
    # Theme-aware ink, text kept as text, nothing machine- or date-specific.
    assert "currentColor" in svg and "#010203" not in svg.lower()
    assert texts(svg)
    assert "<?xml" not in svg and "<metadata" not in svg and "\n\n" not in svg
    assert "Noto Sans CJK SC" in svg and "sans-serif" in svg  # the CSS font stack


@pytest.mark.parametrize("lang", LANGS)
def test_deterministic(by_precision, rendered, lang: str) -> None:
    assert charts.stacked_bars(by_precision, lang) == rendered["bars", lang]
    assert charts.timeline(by_precision["fp32"], lang) == rendered["timeline", lang]
    assert charts.module_activations(by_precision["fp32"], lang) == rendered["modules", lang]


def test_deterministic_across_processes(rendered) -> None:
    path = str(RESULTS / ESTIMATE.format("fp32"))
    code = ("import json, pathlib, sys\nfrom generator.site.style import charts\n"
            f"r = json.loads(pathlib.Path({path!r}).read_text(encoding='utf-8'))\n"
            "sys.stdout.write(charts.timeline(r, 'zh'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=cli_env(),
                         capture_output=True, text=True, encoding="utf-8", timeout=120, check=True)
    assert out.stdout == rendered["timeline", "zh"]


def test_ids_unique_across_charts_and_languages(rendered) -> None:
    ids = [i for svg in rendered.values() for i in re.findall(r'\sid="([^"]+)"', svg)]
    assert ids and len(ids) == len(set(ids))
    # Every reference points at an id of the same chart.
    for svg in rendered.values():
        own = set(re.findall(r'\sid="([^"]+)"', svg))
        assert set(re.findall(r'(?:url\(#|href="#)([^)"]+)', svg)) <= own


def test_category_colours(rendered, by_precision) -> None:
    bars = rendered["bars", "en"].lower()
    for cat in CATEGORIES:
        if any(r["live_at_peak_bytes"][cat] for r in by_precision.values()):
            assert CATEGORY_COLORS[cat].lower() in bars, cat
    timeline = rendered["timeline", "en"].lower()
    for cat in ("parameters", "gradients", "optimizer_state", "activations", "temporaries"):
        assert CATEGORY_COLORS[cat].lower() in timeline, cat
    assert CATEGORY_COLORS["activations"].lower() in rendered["modules", "en"].lower()


def test_languages(rendered) -> None:
    for name in ("bars", "timeline", "modules"):
        zh, en = rendered[name, "zh"], rendered[name, "en"]
        assert re.search(r"[\u4e00-\u9fff]", " ".join(texts(zh))), name
        assert not re.search(r"[\u4e00-\u9fff]", en), name
    assert CATEGORY_LABELS["activations"]["zh"] in texts(rendered["bars", "zh"])
    assert CATEGORY_LABELS["activations"]["en"] in texts(rendered["bars", "en"])
    assert "分配事件（训练步进度）" in texts(rendered["timeline", "zh"])
    assert "allocation events (step progress)" in texts(rendered["timeline", "en"])
    for lang, phase in (("zh", "反向"), ("en", "backward")):
        assert phase in texts(rendered["timeline", lang])
    assert "损失及模块之外" in texts(rendered["modules", "zh"])
    assert "loss & outside blocks" in texts(rendered["modules", "en"])


def test_peak_printed(rendered, by_precision) -> None:
    for lang in LANGS:
        bars = texts(rendered["bars", lang])
        for result in by_precision.values():
            assert charts.gib(result["peak_bytes"]) in bars
        peak = by_precision["fp32"]["peak_bytes"]
        printed = texts(rendered["timeline", lang])
        assert any(t.endswith(f"{peak / 2 ** 30:.2f} GiB") for t in printed)
    assert "5.64 GiB" in texts(rendered["bars", "en"])  # the fixture's fp32 peak, by hand
    assert "Peak 5.64 GiB" in texts(rendered["timeline", "en"])
    desc = ET.fromstring(rendered["bars", "en"]).find(f"{SVG}desc").text
    assert desc.startswith("Peak: FP32 5.64 GiB, AMP fp16 4.84 GiB, AMP bf16 4.84 GiB.")


def test_bars_in_precision_order(rendered) -> None:
    labels = texts(rendered["bars", "en"])
    assert [labels.index(p) for p in ("FP32", "AMP fp16", "AMP bf16")] == sorted(
        labels.index(p) for p in ("FP32", "AMP fp16", "AMP bf16"))


def test_modules_in_model_order(rendered, by_precision) -> None:
    blocks = [t for t in texts(rendered["modules", "en"]) if not t.endswith("MiB")
              and not re.fullmatch(r"[\d.]+", t) and "(MiB)" not in t]
    layers = [f"layers.{i}" for i in range(12)]
    assert blocks == ["embeddings", *layers, "mlm_head", "loss & outside blocks"]
    assert charts.mib(by_precision["fp32"]["module_activation_bytes"]["layers.0"]) == "252.1 MiB"


def test_timeline_of_a_cpu_run_with_autocast_copies() -> None:
    result = load(CPU.format("amp-bf16"))
    svg = charts.timeline(result, "en")
    assert CATEGORY_COLORS["autocast_copies"].lower() in svg.lower()
    assert f"Peak {charts.gib(result['peak_bytes'])}" in texts(svg)


def test_mixed_backends_are_named(by_precision) -> None:
    mixed = {"fp32": by_precision["fp32"], "amp-bf16": load(CPU.format("amp-bf16"))}
    svg = charts.stacked_bars(mixed, "en")
    assert any("measured on the CPU" in t for t in texts(svg))


@pytest.mark.parametrize("draw", (
    lambda r, lang: charts.stacked_bars({"fp32": r}, lang), charts.timeline,
    charts.module_activations))
def test_bad_language(by_precision, draw: Callable[[dict, str], str]) -> None:
    for lang in ("fr", "ZH", ""):
        with pytest.raises(ValueError, match="language"):
            draw(by_precision["fp32"], lang)


def test_failed_result_is_refused(by_precision) -> None:
    failed = copy.deepcopy(by_precision["fp32"])
    failed["error"] = "out_of_memory"
    with pytest.raises(ValueError, match="out_of_memory"):
        charts.timeline(failed, "en")


def test_rc_params_left_alone(by_precision) -> None:
    before = dict(matplotlib.rcParams)
    charts.module_activations(by_precision["fp32"], "zh")
    assert dict(matplotlib.rcParams) == before


def test_without_a_cjk_font(monkeypatch, by_precision) -> None:
    """Where no CJK font is installed, the missing-glyph warning (an error under -W error) is
    silenced, and only that; the Chinese text is still written out as text."""
    monkeypatch.setattr(charts, "_fonts", lambda: (("DejaVu Sans",), False))
    svg = charts.module_activations(by_precision["fp32"], "zh")
    assert "损失及模块之外" in texts(svg)
    # Where a CJK font is claimed, nothing is silenced: the same drawing warns.
    monkeypatch.setattr(charts, "_fonts", lambda: (("DejaVu Sans",), True))
    with pytest.warns(UserWarning, match="Glyph"):
        charts.module_activations(by_precision["fp32"], "zh")


def test_ids_differ_between_experiments_on_one_page(by_precision) -> None:
    # the three precisions' timelines and block charts share the explainer page (content tabs)
    svgs = [chart(r, "en") for r in by_precision.values()
            for chart in (charts.timeline, charts.module_activations)]
    ids = [i for svg in svgs for i in re.findall(r'\sid="([^"]+)"', svg)]
    assert len(ids) == len(set(ids))
