"""The precision page's two charts, in the style of charts.py: the training loss per precision
(with the difference to fp32 below it), and where gradient magnitudes fall against fp16's
limits.

Colour says the precision (the sweeps page's colours) or, for gradients, the category
(palette.py): parameter gradients in the gradients' colour, gradients flowing between blocks
in the activations' colour.
"""

from __future__ import annotations

from typing import Any

from generator.site.charts.canvas import chart_figure, chart_svg, words
from generator.site.charts.svgtools import finalize
from generator.site.labels import PRECISION_LABELS
from generator.site.palette import CATEGORY_COLORS, INK, PRECISION_COLORS
from generator.units import pct_figures
from generator.words import Words

REFERENCE_COLOR = "#8C8C8C"
#: Gradients between blocks: Okabe & Ito's reddish purple, apart from the gradients' orange.
BETWEEN_COLOR = "#CC79A7"
_STYLE = {"fp32": {"linewidth": 2.4}, "amp-bf16": {"linewidth": 1.3, "linestyle": (0, (5, 2))},
          "amp-fp16": {"linewidth": 1.3, "linestyle": (0, (1, 1.5))}}
_WORDS: dict[str, Words] = {
    "step_axis": Words("Training step", "训练步"),
    "loss_axis": Words("Training loss", "训练损失"),
    "diff_axis": Words("AMP − FP32", "AMP − FP32"),
    "reference": Words("FP32, seed {}", "FP32，种子 {}"),
    "curves_title": Words("Training loss of the sorting task per precision", "排序任务的训练损失：不同精度"),
    "curves_setup": Words("tiny BERT, {steps} steps, batch {batch}, on {machine}",
                          "tiny BERT，{steps} 步，batch {batch}，{machine}"),
    "run_desc": Words("{p} (seed {s}): loss {a} at the start, {b} over the last {n} steps, "
                      "held-out loss {c}", "{p}（种子 {s}）：开始时损失 {a}，最后 {n} 步平均 {b}，"
                      "留出集损失 {c}"),
    "every": Words(" Each point is the mean of {} steps.", "每个点是 {} 步的平均。"),
    "log2_axis": Words("Gradient magnitude |g| (powers of two)", "梯度绝对值 |g|（按 2 的幂分组）"),
    "share_axis": Words("Share of non-zero values (%)", "非零值占比（%）"),
    "params": Words("parameter gradients", "参数梯度"),
    "between": Words("gradients between blocks", "块与块之间的梯度"),
    "normal": Words("fp16 smallest normal", "fp16 最小正规数"),
    "subnormal": Words("fp16 smallest subnormal", "fp16 最小次正规数"),
    "scaled_normal": Words("smallest normal, with ×{}", "乘 {} 后的最小正规数"),
    "scaled_subnormal": Words("smallest subnormal, with ×{}", "乘 {} 后的最小次正规数"),
    "hist_title": Words("Where the gradients of {model} fall against fp16's limits",
                        "{model} 的梯度落在 fp16 表示范围的哪里"),
    "hist_desc": Words("{what}: {n} non-zero values; cast to fp16, {plain}; after ×{scale}, "
                       "{scaled}", "{what}：{n} 个非零值；直接转成 fp16，{plain}；先乘 {scale} 再转，"
                       "{scaled}"),
}
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _words(lang: str) -> dict[str, str]:
    return words(lang) | {k: pair[lang] for k, pair in _WORDS.items()}


def power_of_two(exponent: int, math: bool = False) -> str:
    """2 with a superscript exponent: Unicode superscripts for pages and tables, matplotlib's
    mathtext for charts (Unicode ones fall back to mismatched glyphs in the CJK fonts)."""
    return f"$2^{{{exponent}}}$" if math else "2" + str(exponent).translate(_SUPERSCRIPT)


def cast_words(zero: float, subnormal: float) -> Words:
    """What a cast to fp16 makes of the non-zero values: the share that becomes 0 and the
    share that becomes subnormal, each to as many digits as show it (0.0046 %, not 0.00 %;
    an exact zero as "none"), and "the same share" where the two print alike."""
    z, s = (_share(f) for f in (zero, subnormal))
    if z == s:
        if zero == 0:
            return Words("none becomes 0 or subnormal", "没有值变成 0 或次正规数")
        return Words(f"{z.en} become 0 and the same share subnormal",
                     f"{z.zh}变成 0，成为次正规数的也是这么多")
    return Words(f"{z.en} become{'s' if zero == 0 else ''} 0 and {s.en} subnormal",
                 f"{z.zh}变成 0，{s.zh}成为次正规数")


def _share(fraction: float) -> Words:
    """A share of the values, to as many digits as show it; "none" where it is exactly 0.
    (Chinese: the number and a space, so that "没有值" joins the verb without one.)"""
    if fraction == 0:
        return Words("none", "没有值")
    return Words(pct_figures(fraction), pct_figures(fraction) + " ")


def loss_curves(view: dict[str, Any], lang: str) -> str:
    """The loss per step of every run on one chart; below it, each AMP run minus FP32."""
    t = _words(lang)
    steps, runs, base = view["step"], view["runs"], view["fp32"]
    name = f"precision-curves-{view['id']}"
    with chart_figure(name, lang, 4.8) as (fig, ax):
        ax.remove()
        top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[3, 1.2])
        for run in runs:
            if run["reference"]:
                top.plot(steps, run["loss"], color=REFERENCE_COLOR, linewidth=0.9, zorder=1,
                         label=t["reference"].format(run["seed"]))
                continue
            style = _STYLE[run["precision"]]
            label = PRECISION_LABELS[run["precision"]][lang]
            top.plot(steps, run["loss"], color=PRECISION_COLORS[run["precision"]], label=label,
                     zorder=2, **style)
            if run is not base:
                bottom.plot(steps, [a - b for a, b in zip(run["loss"], base["loss"])],
                            color=PRECISION_COLORS[run["precision"]], label=label, **style)
        bottom.axhline(0, color=INK, linewidth=0.8, alpha=0.6)
        spread = max([abs(a - b) for run in view["amp"]
                      for a, b in zip(run["loss"], base["loss"])] + [1e-3])
        bottom.set_ylim(-1.15 * spread, 1.15 * spread)
        top.set_ylim(0, max(max(r["loss"]) for r in runs) * 1.05)
        top.set_xlim(0, steps[-1])
        top.set_ylabel(t["loss_axis"])
        bottom.set_ylabel(t["diff_axis"])
        bottom.set_xlabel(t["step_axis"])
        for axes in (top, bottom):
            axes.grid(axis="y")
        top.legend(loc="upper right")
        svg = chart_svg(fig, name, lang)
    title = t["curves_title"] + t["colon"] + t["curves_setup"].format(
        steps=view["steps"], batch=view["batch_size"], machine=view["machine"])
    desc = t["sep"].join(t["run_desc"].format(
        p=PRECISION_LABELS[r["precision"]][lang], s=r["seed"], a=f"{r['loss'][0]:.3f}",
        b=f"{r['final_loss']:.3f}", n=view["final_steps"], c=f"{r['eval_loss']:.3f}")
        for r in runs) + t["stop"].strip()
    if view["every"] > 1:
        desc += t["every"].format(view["every"])
    return finalize(svg, title=title, desc=desc, id_prefix=f"chart-{name}-{lang}")


def underflow_histogram(view: dict[str, Any], lang: str) -> str:
    """Share of gradient values per power of two, with fp16's smallest normal and subnormal
    numbers marked, as they are and as they lie before GradScaler's multiplication."""
    t = _words(lang)
    series = [(key, t[word], color) for key, word, color in
              (("parameters", "params", CATEGORY_COLORS["gradients"]),
               ("activations", "between", BETWEEN_COLOR)) if view.get(key)]
    limits = view["limits"]
    name = "precision-underflow"
    with chart_figure(name, lang, 3.9) as (fig, ax):
        lows, highs, top = [], [], 0.0
        for key, label, color in series:
            group = view[key]
            xs = [group["log2_first"] + i for i in range(len(group["log2_counts"]))]
            shares = [100 * c / group["nonzero"] for c in group["log2_counts"]]
            # A step outline per power of two: bin k holds the values in [2^k, 2^(k+1)).
            ax.stairs(shares, xs + [xs[-1] + 1], color=color, linewidth=1.8, label=label,
                      fill=False, baseline=0)
            lows.append(xs[0])
            highs.append(xs[-1] + 1)
            top = max(top, max(shares))
        shift = view["scale_log2"]
        normal, subnormal = limits["fp16_normal_log2"], limits["fp16_subnormal_log2"]
        left = min(lows + [subnormal - shift]) - 2
        ax.axvspan(left, normal, color=INK, alpha=0.05, linewidth=0, zorder=0)
        ax.axvspan(left, subnormal, color=INK, alpha=0.08, linewidth=0, zorder=0)
        scaled = power_of_two(shift, math=True)
        for x, word, dashed in ((normal, "normal", False), (subnormal, "subnormal", False),
                                (normal - shift, "scaled_normal", True),
                                (subnormal - shift, "scaled_subnormal", True)):
            ax.axvline(x, color=INK, linewidth=0.9, alpha=0.5 if dashed else 0.75,
                       linestyle=(0, (4, 3)) if dashed else "-")
            ax.text(x + 0.3, top * 1.22, t[word].format(scaled), rotation=90, ha="left",
                    va="top", fontsize=8.5, alpha=0.75 if dashed else 0.9)
        ax.set_xlim(left, max(highs) + 1)
        ax.set_ylim(0, top * 1.25)
        ticks = list(range(left - left % 5 + 5, max(highs) + 2, 5))
        ax.set_xticks(ticks, [power_of_two(k, math=True) for k in ticks])
        ax.set_xlabel(t["log2_axis"])
        ax.set_ylabel(t["share_axis"])
        ax.grid(axis="y")
        fig.legend(loc="outside lower center", ncol=2)
        svg = chart_svg(fig, name, lang)
    title = t["hist_title"].format(model=view["model"])
    desc = t["stop"].join(t["hist_desc"].format(
        what=label, n=f"{view[key]['nonzero']:,}", scale=power_of_two(shift),
        plain=cast_words(view[key]["fp16"]["zero_fraction"],
                         view[key]["fp16"]["subnormal_fraction"])[lang],
        scaled=cast_words(view[key]["fp16_scaled"]["zero_fraction"],
                          view[key]["fp16_scaled"]["subnormal_fraction"])[lang])
        for key, label, _ in series) + t["stop"].strip()
    return finalize(svg, title=title, desc=desc, id_prefix=f"chart-{name}-{lang}")
