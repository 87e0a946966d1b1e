"""The reports: one page per model with every experiment measured on it, and their index.

Each experiment shows its breakdown table, its timeline and its activations per block, and
links its result's JSON, so that every figure of the site can be traced to a file. The
activations per block are a table, not a chart: a model with fifty experiments would
otherwise carry a hundred charts on one page (issue 13: every page under 1 MB).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any

from markupsafe import Markup

from generator.results.shapes import StepResult
from generator.site import tables as step_tables
from generator.site.derived import beside_published, result_id
from generator.site.charts import step_charts
from generator.site.escaping import markdown_text as escape
from generator.site.labels import PRECISION_LABELS
from generator.site.pages import Page, PageModule
from generator.units import mib, pct
from generator.words import LANGS, Words

Result = StepResult
PRECISION_ORDER = tuple(PRECISION_LABELS)
#: After every other page; the reports are a section of the nav of their own.
NAV = 100
SECTION = "Reports"


def context(results: list[Result], studies: list[dict[str, Any]]) -> dict[str, list[Result]]:
    """Results grouped per model (one report page each), in a stable order. The estimates
    of the published H100 runs belong to the accuracy page, not here."""
    groups: dict[str, list[Result]] = defaultdict(list)
    for result in beside_published(results):
        groups[result["experiment"]["model"]].append(result)
    return {model: sorted(group, key=lambda r: (
        r["experiment"]["batch_size"], r["experiment"]["seq_len"], r["backend"],
        r["experiment"]["device"], PRECISION_ORDER.index(r["experiment"]["precision"])))
        for model, group in sorted(groups.items())}


def pages(reports: dict[str, list[Result]]) -> list[Page]:
    """The index sees every group as `reports`; each model's page its own results, and for
    each step whose timeline is not drawn, the step whose chart stands for it and its peak
    and phases in words."""
    # The index counts experiments; each report it links lists its own data files.
    index = Page("reports/index.md", "reports/index", NAV, SECTION,
                 {"reports": reports, "data_files": []})
    found = [index]
    for model, group in reports.items():
        leads = timeline_leads(group)
        found.append(Page(
            f"reports/{report_slug(model)}.md", "reports/model", NAV + 1, SECTION,
            {"model": model, "model_results": group,
             "logits": {result_id(r): logits_bytes(r) for r in group},
             "timeline_lead": {name: lead for name, lead in leads.items()
                               if result_id(lead) != name},
             "timeline_words": {result_id(r): {lang: step_charts.timeline_words(r, lang)[1]
                                               for lang in LANGS}
                                for r in _measured({model: group})
                                if result_id(leads[result_id(r)]) != result_id(r)}}))
    return found


#: Options that change only how the caching allocator is replayed, not a tensor of the step:
#: steps that differ only in them have the same timeline, charted once.
ALLOCATOR_ONLY = ("expandable_segments", "gpu", "gpu_memory", "allocation_trace")


def timeline_leads(group: list[Result]) -> dict[str, Result]:
    """For each step with a timeline, the step whose timeline chart the page draws for it.
    Steps that differ only in batch size or sequence length (a sweep) rise and fall through
    the same phases, so one chart stands for them all: the one at the page's most common
    batch and sequence; steps that differ only in an allocator option (ALLOCATOR_ONLY) hold
    the same tensors and share it too. Fifty charts on one page weighed megabytes (issue 13)."""
    measured = _measured({"": group})
    common = Counter((r["experiment"]["batch_size"], r["experiment"]["seq_len"]) for r in measured)
    families: dict[tuple, list[Result]] = defaultdict(list)
    for r in measured:
        setup = sorted((k, str(v)) for k, v in r["experiment"].items()
                       if k not in ("batch_size", "seq_len") + ALLOCATOR_ONLY)
        families[(*setup, r["environment"]["machine_id"])].append(r)
    leads = {}
    for members in families.values():
        lead = max(members, key=lambda r: (common[r["experiment"]["batch_size"],
                                                  r["experiment"]["seq_len"]],
                                           # the allocator's defaults lead
                                           not any(r["experiment"].get(k) for k in ALLOCATOR_ONLY),
                                           r["experiment"]["batch_size"], r["experiment"]["seq_len"]))
        leads.update({result_id(r): lead for r in members})
    return leads


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
    """The timeline of each step that leads its sweep (timeline_leads)."""
    leads = {result_id(lead): lead
             for group in reports.values() for lead in timeline_leads(group).values()}
    return {f"report-timeline-{result_id(r)}": step_charts.timeline(r, lang)
            for r in leads.values()}


def tables(reports: dict[str, list[Result]], lang: str) -> dict[str, Markup]:
    """Each experiment's breakdown, both views, and its activations per block."""
    found = {}
    for r in (r for group in reports.values() for r in group if not r.get("error")):
        found[f"breakdown-{result_id(r)}"] = step_tables.breakdown(r, lang)
        if r.get("module_activation_bytes"):
            found[f"blocks-{result_id(r)}"] = blocks_table(r, lang)
    return found


BLOCK_HEADERS = (Words("Block", "模块"), Words("Saved for backward (MiB)", "为反向传播保存 (MiB)"),
                 Words("Share", "占比"))


EACH = Words("{first} … {last}: {n} blocks, each", "{first} … {last}：共 {n} 个，每个")


def blocks_table(result: Result, lang: str) -> Markup:
    """Activation bytes saved per block, in model order, with each block's share of them.
    Numbered blocks in a row that save the same bytes (a transformer's layers) share a row,
    which says how many and what each saves."""
    blocks = step_charts.blocks_in_order(result)
    total = sum(v for _, v in blocks) or 1
    runs: list[list[tuple[str, int]]] = []
    for name, value in blocks:
        last = runs[-1][-1] if runs else None
        if last and value == last[1] and _next_in_row(last[0], name):
            runs[-1].append((name, value))
        else:
            runs.append([(name, value)])
    rows = []
    for run in runs:
        (first, value), n = run[0], len(run)
        label = step_charts.block_name(first, lang) if n == 1 else \
            EACH[lang].format(first=first, last=run[-1][0], n=n)
        rows.append([escape(label), mib(value), pct(value / total)])
    return step_tables.markdown_table([h[lang] for h in BLOCK_HEADERS], rows)


def _next_in_row(previous: str, name: str) -> bool:
    """`layers.4` follows `layers.3`."""
    a, b = re.fullmatch(r"(.+)\.(\d+)", previous), re.fullmatch(r"(.+)\.(\d+)", name)
    return bool(a and b and a.group(1) == b.group(1) and int(b.group(2)) == int(a.group(2)) + 1)


def _measured(reports: dict[str, list[Result]]) -> list[Result]:
    return [r for group in reports.values() for r in group
            if not r.get("error") and r["timeline"]["tick"]]


PAGE_MODULE = PageModule((), context, figures=figures, tables=tables, derived_pages=pages)
