"""The accuracy page's chart: estimate ÷ real for every run, this project's allocated and
reserved peaks beside PyTorch MemTracker's. Drawn in the house style of canvas.py."""

from __future__ import annotations

from typing import Any

from generator.site.charts import canvas
from generator.site.charts.svgtools import finalize
from generator.site.palette import INK
from generator.words import Words

#: (field, words, colour, marker) of each series.
SERIES = (
    ("active_ratio", Words("allocated peak, this project", "已分配峰值：本项目"), "#1F9E89", "o"),
    ("reserved_ratio", Words("reserved peak, this project", "已预留峰值：本项目"), "#6A5ACD", "s"),
    ("memtracker_ratio", Words("allocated peak, PyTorch MemTracker", "已分配峰值：PyTorch MemTracker"),
     "#D6336C", "^"),
)
_WORDS: dict[str, Words] = {
    "title": Words("Estimate ÷ real H100 measurement, per run",
                   "估算 ÷ H100 上的 GPU 实测，逐次运行"),
    "axis": Words("Estimate ÷ real (1 = exact)", "估算 ÷ GPU 实测（1 为完全一致）"),
    "band": Words("within ±{}", "±{} 以内"),
}


def ratios(ctx: dict[str, Any], lang: str) -> str:
    rows = ctx["rows"]
    band = ctx["targets"]["active_worst"]
    names = [r["short_label"][lang] for r in rows]
    values = [r[field] for r in rows for field, *_ in SERIES if r[field] is not None]
    low, high = min(values + [1 - 2 * band]), max(values + [1 + 2 * band])
    margin = (high - low) * 0.05
    with canvas.chart_figure("accuracy-ratios", lang, 1.4 + 0.3 * len(rows)) as (fig, ax):
        ax.axvspan(1 - band, 1 + band, color=INK, alpha=0.08, linewidth=0,
                   label=_WORDS["band"][lang].format(f"{band:.0%}"))
        ax.axvline(1, color=INK, alpha=0.6, linewidth=0.9)
        for field, words, color, marker in SERIES:
            points = [(r[field], y) for y, r in enumerate(rows) if r[field] is not None]
            ax.scatter([x for x, _ in points], [y for _, y in points], s=22, marker=marker,
                       color=color, label=words[lang], zorder=3, linewidths=0)
        ax.set_yticks(range(len(rows)), names)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlim(low - margin, high + margin)
        ax.set_xlabel(_WORDS["axis"][lang])
        ax.grid(axis="x")
        handles, legend = ax.get_legend_handles_labels()
        fig.legend(handles, legend, loc="outside lower center", ncol=2)
        svg = canvas.chart_svg(fig, "accuracy-ratios", lang)
    t = canvas.words(lang)
    desc = t["sep"].join(
        f"{name}{t['colon']}" + ", ".join(f"{r[field]:.3f}" for field, *_ in SERIES
                                          if r[field] is not None)
        for name, r in zip(names, rows)) + t["stop"]
    return finalize(svg, title=_WORDS["title"][lang], desc=desc,
                    id_prefix=f"chart-accuracy-ratios-{lang}")
