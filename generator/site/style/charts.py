"""The charts' house style: one figure size, fonts, colours and SVG clean-up for every chart
of the site, and the words charts share.

Figures are bare `matplotlib.figure.Figure` objects, never pyplot: no global backend is chosen
or needed (savefig picks the SVG canvas from `format="svg"`), and every rcParam is set inside
`rc_context`; the one lasting change is two private font families added to matplotlib's font
manager. Output is deterministic: a fixed hash salt per figure, no dates, ids rewritten to
per-chart names, and text measured with fonts that ship with matplotlib and this package,
never with the fonts the machine happens to have (see `_register_fonts`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import matplotlib
from matplotlib.figure import Figure

from generator import units
from generator.site.style.palette import FONT_STACK, INK
from generator.site.style.svgtools import prefix_ids

GIB, MIB = 2 ** 30, 2 ** 20
WIDTH_IN = 7.3  # ≈ 525 pt, shown in a ~700 px column: 10 pt text reads at ~13 px


#: Every word the charts show or say, as (English, Chinese).
_WORDS: dict[str, tuple[str, str]] = {
    "sep": (", ", "，"), "stop": (". ", "。"), "colon": (": ", "："), "peak": ("Peak", "峰值"),
    "gib_axis": ("Live at the peak (GiB)", "峰值时刻占用（GiB）"),
    "step_axis": ("Live memory (GiB)", "占用（GiB）"),
    "events": ("allocation events (step progress)", "分配事件（训练步进度）"),
    "mib_axis": ("Activations saved (MiB)", "保存的激活值（MiB）"),
    "outside": ("loss & outside blocks", "损失及模块之外"),
    "batch": ("batch {}", "batch {}"), "seq": ("sequence {}", "序列长度 {}"),
    "bars_title": ("Memory live at the peak by precision", "不同精度下峰值时刻的内存构成"),
    "live": ("Live at the peak", "峰值时刻"),
    "step_title": ("Memory over one training step", "一个训练步内的内存变化"),
    "step_peak": ("Peak {v} at allocation event {at} of {end}",
                  "峰值 {v}，出现在第 {at} 个分配事件（共 {end} 个）"),
    "in_phase": (", in the {} phase", "，处于{}阶段"),
    "phase_from": ("{} from event {}", "{}从事件 {} 开始"), "phases_word": ("Phases", "阶段"),
    "mod_title": ("Activations saved for backward, per block", "各模块为反向传播保存的激活值"),
    "mod_total": ("{n} blocks, {v} in all", "共 {n} 个部分，合计 {v}"),
    "forward": ("forward", "前向"), "backward": ("backward", "反向"),
    "optimizer": ("optimizer", "优化器"),
}
_LANGS = ("en", "zh")


def gib(nbytes: float) -> str:
    """How every chart (and its test) prints a size in GiB."""
    return f"{units.gib(nbytes)} GiB"


def mib(nbytes: float) -> str:
    return f"{units.mib(nbytes)} MiB"



def words(lang: str) -> dict[str, str]:
    if lang not in _LANGS:
        raise ValueError(f"unknown language {lang!r}; expected 'zh' or 'en'")
    return {key: pair[_LANGS.index(lang)] for key, pair in _WORDS.items()} | {"lang": lang}



#: matplotlib's bundled DejaVu Sans, under a family name of its own: asked for as "DejaVu Sans",
#: a system copy (another build, other metrics) could stand in, depending on the font cache.
_DEJAVU = "Chart DejaVu Sans"
_DEJAVU_FILES = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSans-Oblique.ttf",
                 "DejaVuSans-BoldOblique.ttf")
#: Metrics-only fallback for what DejaVu lacks: CJK characters, each one em wide as in every CJK
#: font of FONT_STACK (cjk-metrics.ttf, written by scripts/make_cjk_metrics_font.py).
_CJK_METRICS = "Chart CJK Metrics"
_CJK_METRICS_FILE = Path(__file__).resolve().parent / "cjk-metrics.ttf"


@functools.cache
def _register_fonts() -> None:
    """Make the two measuring families known to matplotlib's font manager (once).

    matplotlib only measures chart text (`svg.fonttype: none` keeps it text, and chart_svg hands
    the browser FONT_STACK), so these fonts decide the layout alone, on every machine alike.
    """
    from matplotlib import font_manager, ft2font
    manager = font_manager.fontManager
    for file in _DEJAVU_FILES:
        entry = font_manager.ttfFontProperty(
            ft2font.FT2Font(Path(matplotlib.get_data_path(), "fonts", "ttf", file)))
        manager.ttflist.append(dataclasses.replace(entry, name=_DEJAVU))  # as addfont does
    manager.addfont(_CJK_METRICS_FILE)  # last: addfont also empties findfont's cache


@contextlib.contextmanager
def chart_figure(name: str, lang: str, height: float) -> Iterator[tuple[Figure, Any]]:
    """A full-width figure and its axes, drawn with the charts' style (set only meanwhile)."""
    _register_fonts()
    # matplotlib falls back glyph by glyph through font.family: DejaVu, then the CJK metrics.
    # Mathtext ($2^{8}$) looks its fonts up by name too, so it gets the same DejaVu files.
    mathtext = {f"mathtext.{key}": f"{_DEJAVU}{style}" for key, style in (
        ("rm", ""), ("sf", ""), ("tt", ""), ("cal", ""), ("it", ":italic"), ("bf", ":bold"),
        ("bfit", ":italic:bold"))}
    rc = {"svg.fonttype": "none", "svg.hashsalt": f"generator-chart-{name}-{lang}",
          "font.family": [_DEJAVU, _CJK_METRICS], "font.size": 10, "legend.fontsize": 9.5,
          "mathtext.fontset": "custom", **mathtext,
          "text.color": INK, "axes.labelcolor": INK, "axes.edgecolor": INK,
          "xtick.color": INK, "ytick.color": INK, "xtick.labelcolor": INK, "ytick.labelcolor": INK,
          "figure.facecolor": "none", "axes.facecolor": "none",
          "savefig.facecolor": "none", "savefig.edgecolor": "none",
          "axes.spines.top": False, "axes.spines.right": False,
          "legend.frameon": False, "axes.axisbelow": True, "path.simplify": False,
          "grid.color": INK, "grid.alpha": 0.15, "grid.linewidth": 0.6}
    with matplotlib.rc_context(rc):
        fig = Figure(figsize=(WIDTH_IN, height), layout="constrained")
        yield fig, fig.add_subplot()


_FONT_FAMILY = re.compile(r"font-family:[^;\"]*")
_CSS_STACK = "font-family: " + ", ".join(n if n == "sans-serif" else f"'{n}'" for n in FONT_STACK)
_PATH_DATA = re.compile(r'\sd="[^"]*"')
_DECIMAL = re.compile(r"-?\d+\.\d+")


def chart_svg(fig: Figure, name: str, lang: str) -> str:
    """SVG text with the full CSS font stack, compact paths, and ids that cannot clash."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", pad_inches=0.08,
                metadata={"Date": None, "Creator": None})
    svg = _FONT_FAMILY.sub(_CSS_STACK, buf.getvalue())
    # A hundredth of a point is far below a pixel; one line per vertex only bloats the page.
    svg = _PATH_DATA.sub(lambda m: " " + " ".join(_DECIMAL.sub(
        lambda n: f"{float(n.group()):.2f}".rstrip("0").rstrip("."), m.group()).split()), svg)
    # matplotlib names groups figure_1, axes_1 … in every chart.
    return prefix_ids(svg, f"chart-{name}-{lang}-")
