"""The sweeps page's two charts, in the style of charts.py: the peak over the batch size with
the fitted line and the formula's prediction, and the peak and the layers' activations over
the sequence length with the formula beside them.

Colour says the precision, line style says what is drawn: markers are measurements, solid
lines the fit, dashed lines the formula of Korthikanti et al. 2022.
"""

from __future__ import annotations

from typing import Any

from matplotlib.lines import Line2D

from generator.site.charts.canvas import GIB, chart_figure, chart_svg, gib, mib, words
from generator.site.charts.svgtools import finalize
from generator.site.labels import PRECISION_LABELS, kind
from generator.site.pages.sweeps import fits, twins
from generator.site.palette import INK, PRECISION_COLORS
from generator.units import pct
from generator.words import Words

#: One colour per precision, none of them a category's (palette.py): indigo, raspberry and
#: teal, mid-tones that read on the light and the dark theme.
#: fp16 and bf16 estimates often coincide: a hollow triangle keeps both visible.
_MARKERS = {"fp32": ("o", True), "amp-fp16": ("s", True), "amp-bf16": ("^", False)}

_WORDS: dict[str, Words] = {
    "batch_axis": Words("Batch size (samples)", "batch 大小（样本数）"),
    "seq_axis": Words("Sequence length (tokens)", "序列长度（token）"),
    "peak_axis": Words("Peak of the step (GiB)", "训练步峰值（GiB）"),
    "gib_axis": Words("Memory (GiB)", "显存（GiB）"),
    "batch_title": Words("Peak over batch size", "峰值随 batch 大小的变化"),
    "seq_title": Words("Peak and activations over sequence length", "峰值与激活值随序列长度的变化"),
    "at_seq": Words("sequence {}", "序列长度 {}"), "at_batch": Words("batch {}", "batch {}"),
    "measured": Words("peak of the step", "训练步峰值"), "fit": Words("fitted line", "拟合直线"),
    "prediction": Words("fixed part + formula activations", "固定部分 + 公式激活值"),
    "layers": Words("activations in the layers", "各层激活值"),
    "formula": Words("formula activations", "公式激活值"),
    "floor": Words("optimizer-step floor", "优化器阶段下限"),
    "per_sample": Words("{p}: {v} per sample, fixed part {f}", "{p}：每样本 {v}，固定部分 {f}"),
    "floor_desc": Words(", flat at {v} up to batch {b}", "，batch {b} 及以下持平于 {v}"),
    "formula_desc": Words("; the formula ({var}) predicts {v} per sample", "；公式（{var}）预测每样本 {v}"),
    "seq_desc": Words("{p}: peak {a} at sequence {s0}, {b} at {s1}; activations in the layers {c}",
                      "{p}：序列 {s0} 时峰值 {a}，{s1} 时 {b}；各层激活值 {c}"),
    "seq_formula": Words(", formula {v} of which {q} is the s² attention-score term",
                         "，公式 {v}，其中 s² 注意力分数项占 {q}"),
    "v_fp32": Words("fp32 variant", "fp32 版"), "v_16-bit": Words("16-bit", "16 位版"),
}


def _words(lang: str) -> dict[str, str]:
    own = {k: pair[lang] for k, pair in _WORDS.items()}
    return words(lang) | own


def _style(precision: str) -> dict[str, Any]:
    marker, filled = _MARKERS[precision]
    color = PRECISION_COLORS[precision]
    return {"color": color, "marker": marker, "markersize": 6.5, "markeredgecolor": color,
            "markerfacecolor": color if filled else "none", "markeredgewidth": 1.3}


def _legend(fig: Any, ax: Any, group: dict[str, Any],
            styles: list[tuple[str, dict[str, Any]]], t: dict[str, str]) -> None:
    """Precisions by colour inside the plot's empty upper left (every curve rises to the
    right); below it, in ink, what each line style means."""
    ax.legend([Line2D([], [], linestyle="none", **_style(p)) for p in group["series"]],
              [PRECISION_LABELS[p][t["lang"]] for p in group["series"]], loc="upper left")
    fig.legend([Line2D([], [], color=INK, **kw) for _, kw in styles],
               [t[key] for key, _ in styles], loc="outside lower center", ncol=len(styles))


def _where(group: dict[str, Any], t: dict[str, str], fixed: str) -> str:
    """Model, the field the sweep holds fixed, and where the numbers come from."""
    word = "at_seq" if fixed == "seq_len" else "at_batch"
    # kind() names the device an estimate models and the GPU a run measured on.
    return t["sep"].join([group["model"], t[word].format(group[fixed]), kind(group, t["lang"])])


def batch_desc(s: dict[str, Any], name: str, lang: str) -> str:
    """One precision's sentence of the batch chart's description, `name` its label."""
    t = _words(lang)
    desc = t["per_sample"].format(p=name, v=mib(s["bytes_per_sample"]), f=gib(s["fixed"]))
    if s["floor"] is not None:
        desc += t["floor_desc"].format(v=gib(s["floor"]), b=max(s["fit"].floor_batches))
    if "formula" in s:
        f = s["formula"]
        desc += t["formula_desc"].format(var=t[f"v_{f['variant']}"], v=mib(f["per_sample"]))
    return desc + t["stop"]


def seq_desc(s: dict[str, Any], name: str, lang: str) -> str:
    """One precision's sentence of the sequence chart's description, `name` its label."""
    t = _words(lang)
    lo, hi = s["first"], s["last"]
    desc = t["seq_desc"].format(p=name, a=gib(lo["peak"]), b=gib(hi["peak"]), s0=lo["seq"],
                                s1=hi["seq"], c=gib(hi["layers"]))
    if "formula" in hi:
        desc += t["seq_formula"].format(v=gib(hi["formula"]), q=pct(hi["quadratic_share"], 0))
    return desc + t["stop"]


def batch_chart(group: dict[str, Any], lang: str) -> str:
    """Measured peaks per precision over the batch size, the fitted line (never below the
    optimizer-step floor), and dashed, the fixed part plus the formula's activations."""
    t = _words(lang)
    name = f"sweeps-batch-{group['id']}"
    top = max(p["batch"] for s in group["series"].values() for p in s["points"])
    with chart_figure(name, lang, 4.6) as (fig, ax):
        for precision, s in group["series"].items():
            color, fit = PRECISION_COLORS[precision], s["fit"]
            ax.plot([p["batch"] for p in s["points"]], [p["peak"] / GIB for p in s["points"]],
                    linestyle="none", zorder=3, **_style(precision))
            # Straight lines need their ends only, plus the kink where the floor ends.
            kink = [s["crossover"]] if s["crossover"] and 0 < s["crossover"] < top else []
            xs = [0.0] + kink + [float(top)]
            ax.plot(xs, [fit.peak(x) / GIB for x in xs], color=color, linewidth=1.2, zorder=2)
            if "formula" in s:
                per = s["formula"]["per_sample"]
                ax.plot([0, top], [fit.line.intercept / GIB, (fit.line.intercept + per * top) / GIB],
                        color=color, linewidth=1.2, linestyle=(0, (5, 3)), zorder=2)
        floors = [s["floor"] for s in group["series"].values() if s["floor"] is not None]
        if floors:  # the flat start is the optimizer step's peak, not the line's
            # Below every line, where the plot is empty, with an arrow to the flat start.
            low = max(floors) / GIB
            ax.annotate(t["floor"], (min(4, top * 0.03), low), xytext=(top * 0.12, low * 0.4),
                        fontsize=8.5, va="center",
                        arrowprops={"arrowstyle": "->", "color": INK, "lw": 0.7})
        ax.set_xlim(0, top * 1.03)
        ax.set_ylim(0, None)
        ax.set_xlabel(t["batch_axis"])
        ax.set_ylabel(t["peak_axis"])
        ax.grid(True)
        styles = [("fit", {"linewidth": 1.2})]
        if group["formula"]:
            styles.append(("prediction", {"linewidth": 1.2, "linestyle": (0, (5, 3))}))
        _legend(fig, ax, group, styles, t)
        svg = chart_svg(fig, name, lang)
    title = t["batch_title"] + t["colon"] + _where(group, t, "seq_len")
    desc = "".join(batch_desc(s, twins.label(p, group["twins"])[lang], lang)
                   for p, s in group["shown"].items())
    return finalize(svg, title=title, desc=desc.strip(), id_prefix=f"chart-{name}-{lang}")


def seq_chart(group: dict[str, Any], lang: str) -> str:
    """Over the sequence length: the peak (markers, solid), the activations saved inside the
    transformer layers (hollow markers, thin) and the formula for them (dashed), whose a·s²
    attention-score term bends the curve upwards."""
    t = _words(lang)
    name = f"sweeps-seq-{group['id']}"
    seqs = sorted({p["seq"] for s in group["series"].values() for p in s["points"]})
    with chart_figure(name, lang, 4.6) as (fig, ax):
        for precision, s in group["series"].items():
            color, pts = PRECISION_COLORS[precision], s["points"]
            x = [p["seq"] for p in pts]
            ax.plot(x, [p["peak"] / GIB for p in pts], linewidth=1.6, zorder=3,
                    **_style(precision))
            ax.plot(x, [p["layers"] / GIB for p in pts], linewidth=0.9, zorder=3,
                    **{**_style(precision), "markerfacecolor": "none", "markersize": 5})
            if group["formula"]:
                dense = list(range(seqs[0], seqs[-1] + 1, max(1, (seqs[-1] - seqs[0]) // 160)))
                arch, batch = group["architecture"], group["batch_size"]
                ax.plot(dense, [fits.formula_activations(arch, precision=precision,
                                                         batch_size=batch, seq_len=q)["bytes"]
                                / GIB for q in dense],
                        color=color, linewidth=1.2, linestyle=(0, (5, 3)), zorder=2)
        ax.set_xticks(seqs)
        ax.set_xlim(0, seqs[-1] * 1.04)
        ax.set_ylim(0, None)
        ax.set_xlabel(t["seq_axis"])
        ax.set_ylabel(t["gib_axis"])
        ax.grid(True)
        styles = [("measured", {"linewidth": 1.6, "marker": "o", "markersize": 5}),
                  ("layers", {"linewidth": 0.9, "marker": "o", "markersize": 5,
                              "markerfacecolor": "none"})]
        if group["formula"]:
            styles.append(("formula", {"linewidth": 1.2, "linestyle": (0, (5, 3))}))
        _legend(fig, ax, group, styles, t)
        svg = chart_svg(fig, name, lang)
    title = t["seq_title"] + t["colon"] + _where(group, t, "batch_size")
    desc = "".join(seq_desc(s, twins.label(p, group["twins"])[lang], lang)
                   for p, s in group["shown"].items())
    return finalize(svg, title=title, desc=desc.strip(), id_prefix=f"chart-{name}-{lang}")
