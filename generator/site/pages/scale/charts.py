"""The scale page's chart: one GPU's memory at the peak, per strategy and GPU count, stacked
by category, with GPU sizes as reference lines. Drawn in the charts' house style
(charts.chart_figure / chart_svg, svgtools.finalize)."""

from __future__ import annotations

from typing import Any

from matplotlib.transforms import blended_transform_factory

from generator.site.charts.canvas import chart_figure, chart_svg, gib, words
from generator.site.charts.svgtools import finalize
from generator.site.pages.scale.tables import (
    STRATEGY_LABELS,
    color,
    label,
    shown_categories,
)
from generator.site.palette import INK
from generator.words import Words

GIB = 2**30
HEADROOM = 1.15  # the axis ends this far above the tallest bar, room for its label
#: Past this many bars their labels stand upright, or neighbours' labels would overlap.
UPRIGHT_FROM = 11
_WORDS: dict[str, Words] = {
    "axis": Words("Live at the peak, per GPU (GiB)", "峰值时刻单卡占用（GiB）"),
    "gpus": Words("{} GPU", "{} 卡"), "gpus_n": Words("{} GPUs", "{} 卡"),
    "count": Words("Number of GPUs (data-parallel ranks)", "卡数（数据并行的 rank 数）"),
    "title": Words("Memory per GPU in data-parallel training: {m}, batch {b} per GPU, sequence {s}",
                   "数据并行训练的单卡显存：{m}，每卡 batch {b}，序列长度 {s}"),
    "bar": Words("{st} on {n}: {v}", "{st} {n}：{v}"),
}


def _w(key: str, lang: str) -> str:
    return _WORDS[key][lang]


def _gpus(n: int, lang: str) -> str:
    return _w("gpus" if n == 1 else "gpus_n", lang).format(n)


def scale_chart(group: dict[str, Any], lang: str) -> str:
    """Bars grouped by GPU count (DDP, then FSDP2), each stacked by what is live at its peak."""
    t = words(lang)
    rows = sorted((r for r in group["rows"] if not r.get("error")),
                  key=lambda r: (r["world_size"], r["strategy"] != "ddp"))
    if not rows:
        raise ValueError(f"no usable row in sharding group {group['id']}")
    shown = shown_categories(group)
    xs, x, previous = [], 0.0, None
    for row in rows:  # a gap between GPU counts, none between the strategies of one count
        if previous is not None:
            x += 1.0 if row["world_size"] == previous else 1.6
        xs.append(x)
        previous = row["world_size"]
    top = max(r["peak_bytes"] for r in rows) / GIB
    upright = len(rows) >= UPRIGHT_FROM
    name = f"scale-{group['id']}"
    with chart_figure(name, lang, 5.0) as (fig, ax):
        bottoms = [0.0] * len(rows)
        for cat in shown:
            heights = [r["live_at_peak_bytes"].get(cat, 0) / GIB for r in rows]
            ax.bar(xs, heights, 0.8, bottom=bottoms, color=color(cat), label=label(cat, lang),
                   linewidth=0)
            bottoms = [b + h for b, h in zip(bottoms, heights)]
        for xpos, row in zip(xs, rows):
            ax.annotate(f"{row['peak_bytes'] / GIB:.1f}", (xpos, row["peak_bytes"] / GIB),
                        xytext=(0, 2), textcoords="offset points", ha="center", va="bottom",
                        fontsize=7.5 if upright else 8.5, fontweight="bold",
                        rotation=90 if upright else 0)
        right = blended_transform_factory(ax.transAxes, ax.transData)
        for gpu in group["gpu_lines"]:
            size = gpu.memory_bytes / GIB
            ax.axhline(size, color=INK, alpha=0.5, linewidth=0.8, linestyle="--", zorder=0)
            ax.text(1.01, size, gpu.short_name, transform=right,
                    ha="left", va="center", fontsize=8.5, clip_on=False)
        ax.set_xticks(xs, [STRATEGY_LABELS[r["strategy"]] for r in rows],
                      fontsize=7.5 if upright else 8.5, rotation=90 if upright else 0)
        below = -44 if upright else -17  # the GPU count sits under the strategies' labels
        for n in dict.fromkeys(r["world_size"] for r in rows):  # the GPU count under its bars
            where = [xpos for xpos, r in zip(xs, rows) if r["world_size"] == n]
            ax.annotate(str(n), (sum(where) / len(where), 0), xycoords=("data", "axes fraction"),
                        xytext=(0, below), textcoords="offset points", ha="center", va="top",
                        fontweight="bold")
        ax.set_xlim(min(xs) - 0.7, max(xs) + 0.7)
        ax.set_ylim(0, top * HEADROOM)
        ax.set_ylabel(_w("axis", lang))
        ax.set_xlabel(_w("count", lang), labelpad=19 if not upright else 18)
        ax.grid(axis="y")
        handles, names = ax.get_legend_handles_labels()
        fig.legend(handles, names, loc="outside lower center", ncol=4)
        svg = chart_svg(fig, name, lang)
    title = _w("title", lang).format(m=group["model"], b=group["batch_size"],
                                     s=group["seq_len"])
    desc = t["peak"] + t["colon"] + t["sep"].join(
        _w("bar", lang).format(st=STRATEGY_LABELS[r["strategy"]], n=_gpus(r["world_size"], lang),
                               v=gib(r["peak_bytes"])) for r in rows) + t["stop"]
    return finalize(svg, title=title, desc=desc.strip(), id_prefix=f"chart-{name}-{lang}")
