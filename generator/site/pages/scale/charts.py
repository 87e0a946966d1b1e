"""The scale page's chart: one GPU's memory at the peak, per strategy and GPU count, stacked
by category, with GPU sizes as reference lines. Drawn in the charts' house style
(charts.chart_figure / chart_svg, svgtools.finalize)."""

from __future__ import annotations

from typing import Any

from matplotlib.transforms import blended_transform_factory

from generator.site.charts.canvas import chart_figure, chart_svg, gib, words
from generator.site.charts.svgtools import finalize
from generator.site.pages.scale.tables import color, label, shown_categories
from generator.site.palette import INK
from generator.words import Words

GIB = 2**30
HEADROOM = 1.15  # the axis ends this far above the tallest bar, room for its label
#: Past this many bars their labels stand upright, or neighbours' labels would overlap.
UPRIGHT_FROM = 11
_WORDS: dict[str, Words] = {
    "axis": Words("Live at the peak, per GPU (GiB)", "峰值时刻单卡占用（GiB）"),
    "gpus": Words("{} GPU", "{} 卡"), "gpus_n": Words("{} GPUs", "{} 卡"),
    "count": Words("Number of GPUs", "卡数"),
    "title": Words("Tensors live at the peak on one GPU: {m}, batch {b} per GPU, sequence {s}",
                   "峰值时刻单卡上的张量：{m}，每卡 batch {b}，序列长度 {s}"),
    "lines_axis": Words("Reserved peak per GPU (GiB)", "单卡已预留峰值（GiB）"),
    "lines_title": Words("Reserved peak per GPU against the number of GPUs: {m}, batch {b} per "
                         "GPU, sequence {s}",
                         "单卡已预留峰值随卡数的变化：{m}，每卡 batch {b}，序列长度 {s}"),
    "line": Words("{st}: {pts}", "{st}：{pts}"),
    "point": Words("{v} on {n}", "{n} {v}"),
    "bar": Words("{st} on {n}: {v}", "{st} {n}：{v}"),
    "bar1": Words("{st}: {v}", "{st}：{v}"),
}


#: The lines' colours and markers, in the lines' order (Okabe-Ito, readable in light and dark).
LINE_STYLES = (("#E69F00", "o"), ("#0072B2", "s"), ("#009E73", "^"), ("#CC79A7", "D"),
               ("#D55E00", "v"), ("#56B4E9", "P"))
#: The short names under the bars: the tables' names without their regime's words.
SHORT = {"single": Words("1 GPU", "单卡"), "mp": Words("FSDP2 MP", "FSDP2 MP")}


def _short(line: dict[str, Any], lang: str) -> str:
    if line["id"] == "single":
        return SHORT["single"][lang]
    if line["policy"]:
        return SHORT["mp"][lang]
    return line["words"][lang]


def _w(key: str, lang: str) -> str:
    return _WORDS[key][lang]


def _gpus(n: int, lang: str) -> str:
    return _w("gpus" if n == 1 else "gpus_n", lang).format(n)


def scale_chart(group: dict[str, Any], lang: str) -> str:
    """Bars grouped by GPU count (one per line), each stacked by what is live at its peak."""
    t = words(lang)
    order = [line["id"] for line in group["lines"]]
    short = {line["id"]: _short(line, lang) for line in group["lines"]}
    rows = sorted(group["rows"], key=lambda r: (r["world_size"], order.index(r["strategy"])))
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
        ax.set_xticks(xs, [short[r["strategy"]] for r in rows],
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
        (_w("bar1", lang).format(st=short[r["strategy"]], v=gib(r["peak_bytes"]))
         if r["strategy"] == "single" else
         _w("bar", lang).format(st=short[r["strategy"]], n=_gpus(r["world_size"], lang),
                                v=gib(r["peak_bytes"]))) for r in rows) + t["stop"]
    return finalize(svg, title=title, desc=desc.strip(), id_prefix=f"chart-{name}-{lang}")


def lines_chart(group: dict[str, Any], lang: str) -> str:
    """The reserved peak of one GPU against the number of GPUs (log scale), one line per
    strategy (those in the group's regime start from the step on one GPU), with GPU sizes as
    reference lines."""
    t = words(lang)
    lines = [line for line in group["lines"] if line["id"] != "single"]
    name = f"scale-lines-{group['id']}"
    top = max(r["reserved_bytes"] for r in group["rows"]) / GIB
    with chart_figure(name, lang, 4.2) as (fig, ax):
        if group["single"] is not None:
            one = group["single"]["reserved_bytes"] / GIB
            ax.plot([1], [one], marker="*", markersize=11, color=INK, linestyle="none",
                    label=SHORT["single"][lang])
        for (colour, marker), line in zip(LINE_STYLES * 2, lines):
            series = line["series"]
            ax.plot([r["world_size"] for r in series],
                    [r["reserved_bytes"] / GIB for r in series], marker=marker, color=colour,
                    linestyle="--" if line["policy"] else "-", linewidth=1.6,
                    label=line["words"][lang])
        right = blended_transform_factory(ax.transAxes, ax.transData)
        for gpu in group["gpu_lines"]:
            size = gpu.memory_bytes / GIB
            ax.axhline(size, color=INK, alpha=0.5, linewidth=0.8, linestyle=":", zorder=0)
            ax.text(1.01, size, gpu.short_name, transform=right, ha="left", va="center",
                    fontsize=8.5, clip_on=False)
        ax.set_xscale("log", base=2)
        counts = group["world_sizes"]
        ax.set_xticks(counts, [str(n) for n in counts])
        ax.minorticks_off()
        ax.set_ylim(0, top * HEADROOM)
        ax.set_xlabel(_w("count", lang))
        ax.set_ylabel(_w("lines_axis", lang))
        ax.grid(axis="y")
        handles, names = ax.get_legend_handles_labels()
        fig.legend(handles, names, loc="outside lower center", ncol=2)
        svg = chart_svg(fig, name, lang)
    title = _w("lines_title", lang).format(m=group["model"], b=group["batch_size"],
                                           s=group["seq_len"])
    parts = []
    if group["single"] is not None:
        parts.append(_w("line", lang).format(st=SHORT["single"][lang],
                                             pts=gib(group["single"]["reserved_bytes"])))
    for line in lines:
        pts = t["sep"].join(_w("point", lang).format(v=gib(r["reserved_bytes"]),
                                                     n=_gpus(r["world_size"], lang))
                            for r in line["rows"])
        parts.append(_w("line", lang).format(st=line["words"][lang], pts=pts))
    desc = "; ".join(parts) + t["stop"] if lang == "en" else "；".join(parts) + t["stop"]
    return finalize(svg, title=title, desc=desc.strip(), id_prefix=f"chart-{name}-{lang}")
