"""The article's pages: the home page, the explainer, the claims check and the methodology.

All four tell the story of the source article's example (BERT-base, batch 32, sequence 128,
AdamW) from the same data (context.py): its result in each precision, the claims checked
against it (claims.py), the estimate's accuracy, and the diagrams drawn from it
(diagrams.py). Their templates see that data by name (`fp32`, `headline`, `claims`, …).
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from generator.results.shapes import StepResult
from generator.site import tables as step_tables
from generator.site.charts import step_charts
from generator.site.pages import Page, PageModule
from generator.site.pages.article import diagrams
from generator.site.pages.article.context import site_data
from generator.site.templating import template_text

Result = StepResult
#: Each page and its place in the nav; the other pages' modules place themselves between.
NAV = {"index": 0, "explainer": 10, "claims": 20, "methodology": 70}
#: The AMP training loop the explainer shows; a test runs it.
SNIPPET = "article/amp_training.py"


def context(results: list[Result], studies: list[dict[str, Any]]) -> dict[str, Any]:
    return site_data(results, studies, template_text(SNIPPET))


#: What the article pages' figures and tables are drawn from, and the studies behind the
#: claims on formats and underflow: each page's data files count them (sources.py) beside
#: the values its template names.
DRAWN_FROM = ("article_results", "sources")
#: What a page prints through words computed from a value its template does not name.
WORDS_FROM = {"index": ("small_batch",)}


def pages(ctx: dict[str, Any]) -> list[Page]:
    return [Page(f"{name}.md", f"article/{name}", nav, variables=ctx,
                 shares_context=DRAWN_FROM + WORDS_FROM.get(name, ()))
            for name, nav in NAV.items()]


def figures(ctx: dict[str, Any], lang: str) -> dict[str, str]:
    """The example in every precision shown (AMP bf16 only where it differs from AMP fp16):
    bars, the step's timeline, activations per block; the AMP memory flow in every precision
    (fp16's has a GradScaler, bf16's not); and the house (FP32 beside the AMP precision)."""
    article: dict[str, Result] = ctx["article_results"]
    shown: dict[str, Result] = ctx["shown_results"]
    found: dict[str, str] = {}
    if not article:
        return found
    found["bars"] = step_charts.stacked_bars(shown, lang)
    for precision, result in shown.items():
        found[f"timeline-{precision}"] = step_charts.timeline(result, lang)
        if result["module_activation_bytes"]:
            found[f"modules-{precision}"] = step_charts.module_activations(result, lang)
    # One scale for the flows of all precisions, so the reader can compare their boxes.
    scale = max(max(r["category_max_bytes"].values()) for r in article.values())
    for precision, result in article.items():
        found[f"amp-flow-{precision}"] = diagrams.amp_flow(result, lang, scale_bytes=scale)
    amp = article.get("amp-fp16") or article.get("amp-bf16")
    if "fp32" in article and amp is not None:
        found["house"] = diagrams.house(article["fp32"], amp, lang)
    return found


def tables(ctx: dict[str, Any], lang: str) -> dict[str, Markup]:
    """The example's breakdown per precision shown, and those precisions side by side in
    both views."""
    article: dict[str, Result] = ctx["shown_results"]
    found = {f"breakdown-{p}": step_tables.breakdown(r, lang) for p, r in article.items()}
    if article:
        found["precisions_live"] = step_tables.precisions(article, lang, "live")
        found["precisions_max"] = step_tables.precisions(article, lang, "max")
    return found


PAGE_MODULE = PageModule((), context, figures=figures, tables=tables, derived_pages=pages)
