"""The levers page's chart: the example's peak with each lever, stacked by category.

Drawn in the house style of canvas.py (its figure, fonts, colours and SVG clean-up)."""

from __future__ import annotations

from typing import Any

from generator.results.shapes import CATEGORIES
from generator.site.charts import canvas
from generator.site.charts.svgtools import finalize
from generator.site.labels import CATEGORY_LABELS, kind
from generator.site.pages.levers.tables import label
from generator.site.palette import CATEGORY_COLORS, INK
from generator.site.wording import capital, spaced
from generator.words import Words

GIB = 2 ** 30
_WORDS: dict[str, Words] = {
    "title": Words("The peak with each lever, by what is live at it", "各项手段下的显存峰值（峰值时刻的构成）"),
    "axis": Words("Live at the peak (GiB)", "峰值时刻占用（GiB）"),
    "baseline_line": Words("baseline peak", "基线峰值"),
    "between": Words("; ", "；"),
    "other_training": Words(" (another kind of training)", "（另一种训练）"),
}


def bars(ctx: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(label id, result) per bar, top-down: the baseline, each lever in ranked order (for
    a lever already in the baseline, its opposite; one printed once with another, not
    again), another kind of training (LoRA) after them, then the combinations."""
    found = [("baseline", ctx["baseline"])]
    for row in ctx["shown"] + ctx["other_training"]:
        found.append((row["id"] + ("-off" if row["in_baseline"] else ""), row["other"]))
    return found + [(row["id"], row["result"]) for row in ctx["combos"]]


def peaks(ctx: dict[str, Any], lang: str) -> str:
    """Horizontal bars, one per experiment, stacked by category live at the peak."""
    t = canvas.words(lang)
    shown = bars(ctx)
    mixed = len({r["backend"] for _, r in shown}) > 1
    apart = {row["id"] for row in ctx["other_training"]}
    names = [label(ctx["names"], i, lang).replace("`", "") + (
        _WORDS["other_training"][lang] if i in apart else "") + (
        f" ({kind(r, lang)})" if mixed else "") for i, r in shown]
    used = [c for c in CATEGORIES if any(r["live_at_peak_bytes"][c] for _, r in shown)]
    baseline = ctx["baseline_peak"] / GIB
    with canvas.chart_figure("levers-peaks", lang, 1.2 + 0.36 * len(shown)) as (fig, ax):
        lefts = [0.0] * len(shown)
        for cat in used:
            widths = [r["live_at_peak_bytes"][cat] / GIB for _, r in shown]
            ax.barh(range(len(shown)), widths, 0.62, left=lefts, color=CATEGORY_COLORS[cat],
                    label=CATEGORY_LABELS[cat][lang], linewidth=0)
            lefts = [a + b for a, b in zip(lefts, widths)]
        for y, (_, r) in enumerate(shown):
            ax.annotate(canvas.gib(r["peak_bytes"]), (r["peak_bytes"] / GIB, y), xytext=(4, 0),
                        textcoords="offset points", va="center", fontweight="bold")
        ax.axvline(baseline, color=INK, alpha=0.5, linewidth=0.9, linestyle="--")
        ax.set_yticks(range(len(shown)), names)
        ax.set_ylim(len(shown) - 0.5, -0.5)  # the baseline on top, as in the table
        ax.set_xlim(0, max(r["peak_bytes"] for _, r in shown) / GIB * 1.18)
        ax.set_xlabel(_WORDS["axis"][lang])
        ax.grid(axis="x")
        handles, legend = ax.get_legend_handles_labels()
        fig.legend(handles, legend, loc="outside lower center", ncol=min(3, len(used)))
        svg = canvas.chart_svg(fig, "levers-peaks", lang)
    exp = ctx["baseline"]["experiment"]
    title = _WORDS["title"][lang] + t["colon"] + t["sep"].join(
        [exp["model"], t["batch"].format(exp["batch_size"]), t["seq"].format(exp["seq_len"])])
    # names hold commas ("gradient accumulation, 4 micro-batches of 8"): a colon before each
    # figure and a semicolon between bars keep them apart
    desc = _WORDS["between"][lang].join(
        spaced(n, "：", canvas.gib(r["peak_bytes"])) if lang == "zh"
        else f"{n}: {canvas.gib(r['peak_bytes'])}" for n, (_, r) in zip(names, shown)) + t["stop"]
    desc += capital(_WORDS["baseline_line"][lang]) + t["colon"] + canvas.gib(ctx["baseline_peak"])
    return finalize(svg, title=title, desc=desc.strip(), id_prefix=f"chart-levers-peaks-{lang}")
