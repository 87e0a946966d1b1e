"""Charts of one step's result, drawn in the house style of charts.py: the memory live at the
peak per precision (stacked bars), the timeline of one step, and activations per block. The
article's pages and the reports show them.
"""

from __future__ import annotations

import math
import re
from typing import Any

from matplotlib.transforms import blended_transform_factory

from generator.results.shapes import CATEGORIES, StepResult
from generator.site.derived import result_id
from generator.site.charts.canvas import GIB, MIB, chart_figure, chart_svg, gib, mib, words
from generator.site.charts.svgtools import finalize
from generator.site.labels import CATEGORY_LABELS, PRECISION_LABELS, kind
from generator.site.palette import CATEGORY_COLORS, INK

Result = StepResult
PRECISION_ORDER = tuple(PRECISION_LABELS)
OUTSIDE_MODULES = "(outside modules)"
ENVELOPE_BINS = 320  # about 2 px per slice across the plot of a ~700 px wide chart


def stacked_bars(by_precision: dict[str, Result], lang: str) -> str:
    """One bar per precision, stacked by category live at the peak, peak printed above."""
    t = words(lang)
    results = [(p, _usable(by_precision[p])) for p in PRECISION_ORDER if p in by_precision]
    if not results:
        raise ValueError("no result to chart")
    shown = [c for c in CATEGORIES if any(r["live_at_peak_bytes"].get(c) for _, r in results)]
    # Name each bar's backend only when the bars do not all come from one.
    mixed = len({r["backend"] for _, r in results}) > 1
    name = f"bars-{result_id(results[0][1])}"
    with chart_figure(name, lang, 4.2) as (fig, ax):
        xs = range(len(results))
        bottoms = [0.0] * len(results)
        for cat in shown:
            heights = [r["live_at_peak_bytes"].get(cat, 0) / GIB for _, r in results]
            ax.bar(xs, heights, 0.55, bottom=bottoms, color=CATEGORY_COLORS[cat],
                   label=CATEGORY_LABELS[cat][lang], linewidth=0)
            bottoms = [b + h for b, h in zip(bottoms, heights)]
        for x, (_, r) in zip(xs, results):
            ax.annotate(gib(r["peak_bytes"]), (x, r["peak_bytes"] / GIB), xytext=(0, 3),
                        textcoords="offset points", ha="center", va="bottom", fontweight="bold")
        ax.set_xticks(list(xs), [PRECISION_LABELS[p][lang] + (
            "\n" + kind(r, lang) if mixed else "") for p, r in results])
        ax.set_xlim(-0.6, len(results) - 0.4)
        ax.set_ylim(0, max(r["peak_bytes"] for _, r in results) / GIB * 1.12)
        ax.set_ylabel(t["gib_axis"])
        ax.grid(axis="y")
        handles, names = ax.get_legend_handles_labels()
        # Reversed, so the legend reads top-down like the stack.
        fig.legend(handles[::-1], names[::-1], loc="outside right upper")
        svg = chart_svg(fig, name, lang)
    exp = results[0][1]["experiment"]
    title = t["bars_title"] + t["colon"] + _setup(exp, t, "model", "batch", "seq")
    desc = t["peak"] + t["colon"] + t["sep"].join(
        f"{PRECISION_LABELS[p][lang]} {gib(r['peak_bytes'])}" for p, r in results) + t["stop"]
    desc += "".join(PRECISION_LABELS[p][lang] + t["colon"] + _breakdown(r, lang) + t["stop"]
                    for p, r in results)
    return finalize(svg, title=title, desc=desc.strip(), id_prefix=f"chart-{name}-{lang}")


def timeline(result: Result, lang: str) -> str:
    """Stacked areas of live bytes per category over the step, phases shaded, peak marked."""
    t = words(lang)
    tl = _usable(result)["timeline"]
    if not tl["tick"]:
        raise ValueError("the result has an empty timeline")
    shown = [c for c in CATEGORIES if any(tl["bytes"].get(c, ()))]
    totals = [sum(tl["bytes"][c][i] for c in shown) for i in range(len(tl["tick"]))]
    at = max(range(len(totals)), key=totals.__getitem__)
    phases = sorted(result.get("phases") or [], key=lambda p: p["tick"])
    name = f"timeline-{result_id(result)}"
    with chart_figure(name, lang, 4.4) as (fig, ax):
        edges, rows = _envelope(tl["tick"], tl["end_tick"], totals)
        lower, uppers = [0.0] * len(rows), []
        for cat in shown:
            lower = [lo + (tl["bytes"][cat][i] / GIB if i is not None else 0.0)
                     for lo, i in zip(lower, rows)]
            uppers.append((cat, lower))
        # Each category's area down to zero, the highest drawn first and each lower one over
        # it: the same picture as bands between two outlines, with half the path data.
        for cat, upper in reversed(uppers):
            top = _steps(edges, upper) + [(edges[-1], 0.0), (edges[0], 0.0)]
            ax.fill([x for x, _ in top], [y for _, y in top], linewidth=0,
                    color=CATEGORY_COLORS[cat], label=CATEGORY_LABELS[cat][lang])
        # INK at low alpha becomes translucent currentColor: a light band on dark, dark on light.
        above = blended_transform_factory(ax.transData, ax.transAxes)
        for i, phase in enumerate(phases):
            end = phases[i + 1]["tick"] if i + 1 < len(phases) else tl["end_tick"]
            ax.axvspan(phase["tick"], end, color=INK, alpha=0.08 if i % 2 == 0 else 0.03,
                       linewidth=0, zorder=0)
            if i:
                ax.axvline(phase["tick"], color=INK, alpha=0.45, linewidth=0.8, linestyle="--")
            ax.text((phase["tick"] + end) / 2, 1.015, t.get(phase["name"], phase["name"]),
                    transform=above, ha="center", va="bottom")
        x, y = tl["tick"][at], totals[at] / GIB
        ax.plot([x], [y], marker="v", color=INK, markersize=7, linestyle="none")
        ax.annotate(f"{t['peak']} {gib(result['peak_bytes'])}", (x, y), xytext=(0, 8),
                    textcoords="offset points", va="bottom", fontweight="bold",
                    ha="right" if x > 0.7 * tl["end_tick"] else "left")
        ax.set_xlim(0, tl["end_tick"])
        ax.set_ylim(0, y * 1.2)
        ax.set_xlabel(t["events"])
        ax.set_ylabel(t["step_axis"])
        ax.grid(axis="y")
        handles, names = (found[::-1] for found in ax.get_legend_handles_labels())
        # The legend fills column by column; this order makes its rows read in CATEGORIES order.
        order = [i for col in range(3) for i in range(col, len(handles), 3)]
        fig.legend([handles[i] for i in order], [names[i] for i in order],
                   loc="outside lower center", ncol=3)
        svg = chart_svg(fig, name, lang)
    title, desc = timeline_words(result, lang)
    return finalize(svg, title=title, desc=desc, id_prefix=f"chart-{name}-{lang}")


def timeline_words(result: Result, lang: str) -> tuple[str, str]:
    """The timeline chart's title and description (where the peak falls, the phases, what is
    live at the peak), also printed where a page shows the step without its chart."""
    t = words(lang)
    tl = _usable(result)["timeline"]
    shown = [c for c in CATEGORIES if any(tl["bytes"].get(c, ()))]
    totals = [sum(tl["bytes"][c][i] for c in shown) for i in range(len(tl["tick"]))]
    x = tl["tick"][max(range(len(totals)), key=totals.__getitem__)]
    phases = sorted(result.get("phases") or [], key=lambda p: p["tick"])
    exp = result["experiment"]
    where = next((p["name"] for p in reversed(phases) if p["tick"] <= x), None)
    title = t["step_title"] + t["colon"] + _setup(exp, t, "model", "precision", "batch", "backend")
    desc = t["step_peak"].format(v=gib(result["peak_bytes"]), at=x, end=tl["end_tick"])
    desc += (t["in_phase"].format(t.get(where, where)) if where else "") + t["stop"]
    if phases:
        desc += t["phases_word"] + t["colon"] + t["sep"].join(
            t["phase_from"].format(t.get(p["name"], p["name"]), p["tick"])
            for p in phases) + t["stop"]
    desc += t["live"] + t["colon"] + _breakdown(result, lang) + t["stop"]
    return title, desc.strip()


def module_activations(result: Result, lang: str) -> str:
    """Horizontal bars: activation bytes saved by each block, in model order, in MiB."""
    t = words(lang)
    blocks = blocks_in_order(_usable(result))
    if not blocks:
        raise ValueError("the result has no per-block activations to chart")
    names = [block_name(n, lang) for n, _ in blocks]
    values = [v / MIB for _, v in blocks]
    name = f"modules-{result_id(result)}"
    with chart_figure(name, lang, 0.9 + 0.26 * len(blocks)) as (fig, ax):
        bars = ax.barh(range(len(blocks)), values, 0.7, color=CATEGORY_COLORS["activations"])
        ax.bar_label(bars, [mib(v) for _, v in blocks], padding=3)
        ax.set_yticks(range(len(blocks)), names)
        ax.set_ylim(len(blocks) - 0.5, -0.5)  # model order reads top-down, as the data flows
        ax.set_xlim(0, max(values + [1]) * 1.2)
        ax.set_xlabel(t["mib_axis"])
        ax.grid(axis="x")
        svg = chart_svg(fig, name, lang)
    exp = result["experiment"]
    title = t["mod_title"] + t["colon"] + _setup(exp, t, "model", "precision", "batch")
    desc = t["mod_total"].format(n=len(blocks), v=mib(sum(v for _, v in blocks))) + t["colon"]
    desc += t["sep"].join(f"{n} {mib(v)}" for n, (_, v) in zip(names, blocks)) + t["stop"]
    return finalize(svg, title=title, desc=desc.strip(), id_prefix=f"chart-{name}-{lang}")


def _usable(result: Result) -> Result:
    if result.get("error"):
        raise ValueError(f"result {result.get('key', '?')} failed ({result['error']}); no figures")
    return result


def _setup(exp: dict[str, Any], t: dict[str, str], *fields: str) -> str:
    """The experiment in words, for titles: model, precision, batch, sequence, backend."""
    lang = t["lang"]
    words = {"model": exp["model"], "precision": PRECISION_LABELS[exp["precision"]][lang],
             "batch": t["batch"].format(exp["batch_size"]), "seq": t["seq"].format(exp["seq_len"]),
             "backend": kind({"backend": exp["backend"], "device": exp.get("device")}, lang)}
    return t["sep"].join(words[f] for f in fields)


def _breakdown(result: Result, lang: str) -> str:
    """The non-zero categories live at the peak, in words."""
    live = result["live_at_peak_bytes"]
    return words(lang)["sep"].join(f"{CATEGORY_LABELS[c][lang]} {gib(live[c])}"
                                   for c in CATEGORIES if live.get(c))


def blocks_in_order(result: Result) -> list[tuple[str, int]]:
    """Activation bytes saved per block, in model order."""
    return sorted(result["module_activation_bytes"].items(), key=lambda kv: _block_order(kv[0]))


def block_name(name: str, lang: str) -> str:
    """A block's name as charts and tables print it: the bytes outside every block in words."""
    return words(lang)["outside"] if name == OUTSIDE_MODULES else name


def _block_order(name: str) -> tuple:
    """Model order from names alone (results store them sorted as text): embeddings, numbered
    blocks by number, other blocks (heads), and the bytes outside every block last."""
    if name == OUTSIDE_MODULES:
        return (3, name, 0)
    numbered = re.fullmatch(r"(.+)\.(\d+)", name)
    if numbered:
        return (1, numbered.group(1), int(numbered.group(2)))
    return (0 if "embed" in name else 2, name, 0)


def _envelope(ticks: list[int], end: int, totals: list[int],
              bins: int = ENVELOPE_BINS) -> tuple[list[float], list[int | None]]:
    """Equal slices of the step, each showing the point with the highest total live in it.
    Each point holds until the next allocation event, often for less than a pixel: drawn as
    is, the peak would be a hairline below its marker. Returns the slice edges and, per
    slice, the index of its point (None before the first allocation)."""
    width = end / bins
    rows: list[int | None] = [None] * bins
    for i, start in enumerate(ticks):
        stop = ticks[i + 1] if i + 1 < len(ticks) else end
        first = min(int(start / width), bins - 1)
        for b in range(first, min(max(math.ceil(stop / width), first + 1), bins)):
            if rows[b] is None or totals[i] > totals[rows[b]]:
                rows[b] = i
    return [b * width for b in range(bins + 1)], rows


def _steps(edges: list[float], ys: list[float]) -> list[tuple[float, float]]:
    """The outline of a step function (ys[k] between edges k and k+1), without the points
    where nothing changes: a flat layer costs two vertices, not hundreds."""
    points = [(edges[0], ys[0])]
    for x, y in zip(edges[1:], ys[1:]):
        if y != points[-1][1]:
            points += [(x, points[-1][1]), (x, y)]
    return points + [(edges[-1], points[-1][1])]


