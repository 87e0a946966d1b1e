"""Which figures the site shows, drawn from results for one language: name → SVG text."""

from __future__ import annotations

from typing import Any

from . import charts, diagrams

Result = dict[str, Any]


def article_figures(article: dict[str, Result], lang: str) -> dict[str, str]:
    """The article's configuration in every precision: bars, the step's timeline, activations
    per block, the AMP memory flow, and the house (FP32 beside the AMP precision)."""
    figures: dict[str, str] = {}
    if not article:
        return figures
    figures["bars"] = charts.stacked_bars(article, lang)
    # One scale for the flows of all precisions, so the reader can compare their boxes.
    scale = max(max(r["category_max_bytes"].values()) for r in article.values())
    for precision, result in article.items():
        figures[f"timeline-{precision}"] = charts.timeline(result, lang)
        if result["module_activation_bytes"]:
            figures[f"modules-{precision}"] = charts.module_activations(result, lang)
        figures[f"amp-flow-{precision}"] = diagrams.amp_flow(result, lang, scale_bytes=scale)
    amp = article.get("amp-fp16") or article.get("amp-bf16")
    if "fp32" in article and amp is not None:
        figures["house"] = diagrams.house(article["fp32"], amp, lang)
    return figures


def report_figures(reports: dict[str, list[Result]], lang: str) -> dict[str, str]:
    """Each measured experiment's timeline and activations per block, for its report page."""
    figures: dict[str, str] = {}
    for group in reports.values():
        for result in group:
            if result.get("error") or not result["timeline"]["tick"]:
                continue
            name = f"{result['key']}-{result['environment']['machine_id']}"
            figures[f"report-timeline-{name}"] = charts.timeline(result, lang)
            if result["module_activation_bytes"]:
                figures[f"report-modules-{name}"] = charts.module_activations(result, lang)
    return figures
