"""The reports: one page per model with every experiment measured on it, and their index.

Each experiment shows its breakdown table, its timeline and its activations per block, and
links its result's JSON, so that every figure of the site can be traced to a file.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from markupsafe import Markup

from generator.results.reference_runs import experiment_keys
from generator.results.shapes import StepResult
from generator.site.analysis import result_id
from generator.site.pages import Page
from generator.site.style import step_charts
from generator.site.style import tables as step_tables
from generator.site.style.labels import PRECISION_LABELS

Result = StepResult
PRECISION_ORDER = tuple(PRECISION_LABELS)
#: After every other page; the reports are a section of the nav of their own.
NAV = 100
SECTION = "Reports"


def context(results: list[Result], studies: list[dict[str, Any]]) -> dict[str, list[Result]]:
    """Results grouped per model (one report page each), in a stable order. The estimates
    of the published H100 runs belong to the accuracy page, not here."""
    groups: dict[str, list[Result]] = defaultdict(list)
    validation = experiment_keys()
    for result in results:
        if result["key"] in validation:
            continue
        groups[result["experiment"]["model"]].append(result)
    return {model: sorted(group, key=lambda r: (
        r["experiment"]["batch_size"], r["experiment"]["seq_len"], r["backend"],
        r["experiment"]["device"], PRECISION_ORDER.index(r["experiment"]["precision"])))
        for model, group in sorted(groups.items())}


def pages(reports: dict[str, list[Result]]) -> list[Page]:
    """The index sees every group as `reports`; each model's page its own results."""
    index = Page("reports/index.md", "reports/index", NAV, SECTION, {"reports": reports})
    return [index] + [Page(f"reports/{report_slug(model)}.md", "reports/model", NAV + 1, SECTION,
                           {"model": model, "model_results": group,
                            "logits": {result_id(r): logits_bytes(r) for r in group}})
                      for model, group in reports.items()]


def logits_bytes(result: Result) -> int | None:
    """One fp32 copy of a language model's logits, batch × sequence × vocabulary × 4 bytes:
    the unit in which the loss's temporaries come (the logits, their softmax, its gradient).
    None for models without a vocabulary."""
    vocab = (result.get("architecture") or {}).get("vocab")
    exp = result["experiment"]
    return exp["batch_size"] * exp["seq_len"] * vocab * 4 if vocab else None


def report_slug(model: str) -> str:
    """A model name as a page name: user factories (pkg.mod:fn) become pkg.mod-fn."""
    return "".join(c if c.isalnum() or c in ".-" else "-" for c in model).strip("-.") or "model"


def figures(reports: dict[str, list[Result]], lang: str) -> dict[str, str]:
    """Each measured experiment's timeline and activations per block."""
    found: dict[str, str] = {}
    for result in _measured(reports):
        name = result_id(result)
        found[f"report-timeline-{name}"] = step_charts.timeline(result, lang)
        if result["module_activation_bytes"]:
            found[f"report-modules-{name}"] = step_charts.module_activations(result, lang)
    return found


def tables(reports: dict[str, list[Result]], lang: str) -> dict[str, Markup]:
    """Each experiment's breakdown, both views."""
    return {f"breakdown-{result_id(r)}": step_tables.breakdown(r, lang)
            for group in reports.values() for r in group if not r.get("error")}


def _measured(reports: dict[str, list[Result]]) -> list[Result]:
    return [r for group in reports.values() for r in group
            if not r.get("error") and r["timeline"]["tick"]]

