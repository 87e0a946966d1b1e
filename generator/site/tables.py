"""Markdown tables of results, in Chinese or English. Cells are escaped here, since the
Jinja environment marks what these functions return as safe."""

from __future__ import annotations

from typing import Any, Sequence

from markupsafe import Markup

from generator.results.shapes import CATEGORIES, ONLY_WHEN_SEEN
from generator.site import derived
from generator.site.escaping import markdown_text as escape
from generator.site.labels import CATEGORY_LABELS, PRECISION_LABELS
from generator.site.palette import CATEGORY_COLORS, PRECISION_COLORS
from generator.units import mib, pct
from generator.words import Words

TEXT: dict[str, Words] = {
    "category": Words("Category", "类别"),
    "live": Words("Live at the peak (MiB)", "峰值时刻驻留 (MiB)"),
    "live_share": Words("Share of the peak", "占峰值"),
    "max": Words("Own maximum (MiB)", "各自最大值 (MiB)"),
    "max_share": Words("Share of the sum of maxima", "占最大值之和"),
    "total": Words("Total", "合计"),
    "saving": Words("Saving", "节省"),
}


def _t(key: str, lang: str) -> str:
    return TEXT[key][lang]


def swatch(category: str, lang: str, name: str | None = None) -> str:
    """The category's colour square and its name (or `name`): the legend of a table row."""
    color = CATEGORY_COLORS[category]
    return (f'<span class="swatch" style="background:{color}"></span>'
            f"{escape(name or CATEGORY_LABELS[category][lang])}")


def precision_swatch(precision: str, lang: str) -> str:
    """The precision's colour in the charts, then its name: the tables' legend. Kept on one
    line: a swatch above "AMP fp16" would read as a label of its own."""
    return (f'<span style="white-space:nowrap"><span class="swatch" '
            f'style="background:{PRECISION_COLORS[precision]}"></span>'
            f"{escape(PRECISION_LABELS[precision][lang])}</span>")




def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]],
                   numeric_from: int = 1) -> Markup:
    align = ["---" if i < numeric_from else "---:" for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return Markup("\n".join(lines) + "\n")


def breakdown(result: dict[str, Any], lang: str) -> Markup:
    """One result, both views: live at the peak (sums to the peak) and each category's own
    maximum (their sum overstates the peak)."""
    shares = derived.shares(result)
    rows = [[swatch(cat, lang), mib(row["live_bytes"]), pct(row["live_share"]),
             mib(row["max_bytes"]), pct(row["max_share"])] for cat, row in shares.items()
            if cat not in ONLY_WHEN_SEEN or row["max_bytes"]]
    total_max = sum(result["category_max_bytes"].values())
    rows.append([f"**{_t('total', lang)}**", f"**{mib(result['peak_bytes'])}**", pct(1.0),
                 f"**{mib(total_max)}**", pct(1.0)])
    headers = [_t("category", lang), _t("live", lang), _t("live_share", lang),
               _t("max", lang), _t("max_share", lang)]
    return markdown_table(headers, rows)


def precisions(by_precision: dict[str, dict[str, Any]], lang: str, view: str = "live") -> Markup:
    """Bytes per category and precision (live at the peak, or each category's own maximum),
    with each AMP precision's saving against fp32."""
    comparison = derived.precision_comparison(by_precision, view)
    names = comparison["precisions"]
    savers = [p for p in names if p != "fp32" and "fp32" in names]
    headers = ([_t("category", lang)] + [f"{PRECISION_LABELS[p][lang]} (MiB)" for p in names]
               + [f"{_t('saving', lang)} {PRECISION_LABELS[p][lang]}" for p in savers])
    rows = []
    for row in comparison["rows"]:
        cat = row["category"]
        if cat in ONLY_WHEN_SEEN and not any(row["bytes"].values()):
            continue
        if cat in CATEGORIES:
            label = swatch(cat, lang)
        else:
            label = f"**{CATEGORY_LABELS['peak' if view == 'live' else 'sum_of_maxima'][lang]}**"
        rows.append([label] + [mib(row["bytes"][p]) for p in names]
                    + [pct(row["saving"].get(p)) for p in savers])
    return markdown_table(headers, rows)
