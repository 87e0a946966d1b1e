"""Everything the pages print, computed once from the results for both languages.

Templates receive this dictionary (plus per-language tables and figures) and only place its
values: no template computes a figure.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from markupsafe import Markup

from . import analysis
from .claims import check_claims
from .ranges import number_ranges

Result = dict[str, Any]
#: The article's example, the configuration every headline number is about.
ARTICLE = {"model": "bert-base", "batch_size": 32, "seq_len": 128, "optimizer": "adamw"}
SNIPPET = "code/amp_training.py"


def site_data(all_results: list[Result], snippet: str) -> dict[str, Any]:
    article = analysis.best_by_precision(all_results, **ARTICLE)
    return {
        "article": ARTICLE,
        "article_results": article,
        "fp32": article.get("fp32"),
        "headline": headline(article),
        "formula": {p: analysis.formula_check(r) for p, r in article.items()},
        "accuracy": analysis.estimate_accuracy(all_results),
        "cuda_overhead": cuda_overhead(all_results),
        "claims": check_claims(article),
        "ranges": number_ranges(),
        "reports": reports(all_results),
        "snippet": Markup(snippet),  # our own file, shown in a code fence that escapes it
        "result_count": len(all_results),
        "failed": [r for r in all_results if r.get("error")],
    }


def headline(article: dict[str, Result]) -> dict[str, Any] | None:
    """The home page's answer: the FP32 peak, what dominates it, what AMP saves."""
    fp32 = article.get("fp32")
    if fp32 is None:
        return None
    live = fp32["live_at_peak_bytes"]
    ranked = sorted(live, key=live.get, reverse=True)
    found: dict[str, Any] = {
        "fp32_peak": fp32["peak_bytes"],
        "largest": ranked[0],
        "largest_share": live[ranked[0]] / fp32["peak_bytes"],
        "second": ranked[1],
        "second_share": live[ranked[1]] / fp32["peak_bytes"],
        "model_state": sum(live[c] for c in ("parameters", "gradients", "optimizer_state")),
        "backend": fp32["backend"],
        "savings": {},
    }
    for precision in ("amp-fp16", "amp-bf16"):
        if precision in article:
            amp = article[precision]
            found["savings"][precision] = {
                "peak": amp["peak_bytes"],
                "saving": analysis.saving(fp32["peak_bytes"], amp["peak_bytes"]),
                "activation_saving": analysis.saving(live["activations"],
                                                     amp["live_at_peak_bytes"]["activations"]),
            }
    return found


def cuda_overhead(all_results: list[Result]) -> list[dict[str, Any]]:
    """What only a CUDA run sees: the allocator's cached-but-unused bytes and the context."""
    rows = []
    for result in analysis.usable(all_results):
        truth = result.get("ground_truth") or {}
        if result["backend"] == "cuda" and "context_bytes" in truth:
            rows.append({"result": result, "allocated": truth["peak_bytes"],
                         "reserved": truth["max_reserved_bytes"],
                         "overhead": truth["allocator_overhead_bytes"],
                         "context": truth["context_bytes"]})
    return rows


def reports(all_results: list[Result]) -> dict[str, list[Result]]:
    """Results grouped per model (one report page each), in a stable order."""
    groups: dict[str, list[Result]] = defaultdict(list)
    for result in all_results:
        groups[result["experiment"]["model"]].append(result)
    order = ("fp32", "amp-fp16", "amp-bf16")
    return {model: sorted(group, key=lambda r: (
        r["experiment"]["batch_size"], r["experiment"]["seq_len"], r["backend"],
        r["experiment"]["device"], order.index(r["experiment"]["precision"])))
        for model, group in sorted(groups.items())}


def report_slug(model: str) -> str:
    """A model name as a page name: user factories (pkg.mod:fn) become pkg.mod-fn."""
    return "".join(c if c.isalnum() or c in ".-" else "-" for c in model).strip("-.") or "model"
