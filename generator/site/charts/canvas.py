"""The charts' house style: one figure size, fonts, colours and SVG clean-up for every chart
of the site, and the words charts share.

Figures are bare `matplotlib.figure.Figure` objects, never pyplot: no global backend is chosen
or needed (savefig picks the SVG canvas from `format="svg"`), and every rcParam is set inside
`rc_context`; the one lasting change is a private font family added to matplotlib's font
manager (its files saved in matplotlib's cache folder). Output is deterministic: a fixed hash
salt per figure, no dates, ids rewritten to per-chart names, and text measured with a font made
from matplotlib's own DejaVu Sans, never with the fonts the machine happens to have (see
`_register_fonts`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import matplotlib
from matplotlib.figure import Figure

from generator import units
from generator.site.charts.svgtools import prefix_ids
from generator.site.palette import FONT_STACK, INK
from generator.words import LANGS, Words

GIB, MIB = 2 ** 30, 2 ** 20
WIDTH_IN = 7.3  # ≈ 525 pt, shown in a ~700 px column: 10 pt text reads at ~13 px


#: Every word the charts share.
_WORDS: dict[str, Words] = {
    "sep": Words(", ", "，"), "stop": Words(". ", "。"), "colon": Words(": ", "："),
    "peak": Words("Peak", "峰值"),
    "gib_axis": Words("Live at the peak (GiB)", "峰值时刻占用（GiB）"),
    "step_axis": Words("Live memory (GiB)", "占用（GiB）"),
    "events": Words("allocation events (step progress)", "分配事件（训练步进度）"),
    "mib_axis": Words("Activations saved (MiB)", "保存的激活值（MiB）"),
    "outside": Words("loss & outside blocks", "损失及模块之外"),
    "batch": Words("batch {}", "batch {}"), "seq": Words("sequence {}", "序列长度 {}"),
    "bars_title": Words("Memory live at the peak by precision", "不同精度下峰值时刻的内存构成"),
    "live": Words("Live at the peak", "峰值时刻"),
    "step_title": Words("Memory over one training step", "一个训练步内的内存变化"),
    "step_peak": Words("Peak {v} at allocation event {at} of {end}",
                       "峰值 {v}，出现在第 {at} 个分配事件（共 {end} 个）"),
    "in_phase": Words(", in the {} phase", "，处于{}阶段"),
    "phase_from": Words("{} from event {}", "{}从事件 {} 开始"), "phases_word": Words("Phases", "阶段"),
    "mod_title": Words("Activations saved for backward, per block", "各模块为反向传播保存的激活值"),
    "mod_total": Words("{n} blocks, {v} in all", "共 {n} 个部分，合计 {v}"),
    "forward": Words("forward", "前向"), "backward": Words("backward", "反向"),
    "optimizer": Words("optimizer", "优化器"),
}


def gib(nbytes: float) -> str:
    """How every chart (and its test) prints a size in GiB."""
    return f"{units.gib(nbytes)} GiB"


def mib(nbytes: float) -> str:
    return f"{units.mib(nbytes)} MiB"


def words(lang: str) -> dict[str, str]:
    """The charts' words in one language (and the language itself, as "lang")."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; expected 'zh' or 'en'")
    return {key: pair[lang] for key, pair in _WORDS.items()} | {"lang": lang}


#: The one family chart text is measured in: matplotlib's own DejaVu Sans files plus one glyph
#: for CJK (see `_chart_font`). One font, not DejaVu with a CJK fallback, because mathtext
#: ("乘 $2^{16}$ 后…") measures the words around the math in a single font, with no fallback.
_FAMILY = "Chart Sans"
_DEJAVU_FILES = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSans-Oblique.ttf",
                 "DejaVuSans-BoldOblique.ttf")
#: Full-width code points, first and last: CJK symbols and punctuation, kana, CJK Unified
#: Ideographs and extension A, compatibility ideographs, vertical and full-width forms. Every CJK
#: font of FONT_STACK draws them one em wide, so one glyph measures them all.
_CJK_RANGES = ((0x3000, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF),
               (0xFE30, 0xFE4F), (0xFF01, 0xFF60), (0xFFE0, 0xFFE6))
#: That glyph's box, in ems: the whole advance wide, and as high as Noto Sans CJK's ink for the
#: site's characters (up to 0.856 em for "（", down to -0.107 em for "，"); it stays inside
#: DejaVu's "lp", so lines of Chinese measure as tall as lines of Latin, as with Noto.
_CJK_BOTTOM, _CJK_TOP = -0.10, 0.85


@functools.cache
def _register_fonts() -> None:
    """Make _FAMILY known to matplotlib's font manager (once per process).

    matplotlib only measures chart text (`svg.fonttype: none` keeps it text, and chart_svg hands
    the browser FONT_STACK), so this font alone decides the layout, alike on every machine.
    """
    from matplotlib import font_manager
    for file in _DEJAVU_FILES:
        font_manager.fontManager.addfont(_chart_font(file))


def _chart_font(file: str) -> Path:
    """matplotlib's DejaVu Sans face `file`, renamed _FAMILY, with a glyph for _CJK_RANGES.

    Made afresh in each process (~0.05 s a face); the font manager takes fonts by path only, so
    it is saved to matplotlib's cache folder, under a name taken from its bytes (the same on
    every machine with the same matplotlib)."""
    from fontTools.pens.ttGlyphPen import TTGlyphPen
    from fontTools.ttLib import TTFont
    from fontTools.ttLib.tables._c_m_a_p import CmapSubtable

    # By file, not by name: a DejaVu Sans installed on the machine may be another build.
    # recalcBBoxes=False copies DejaVu's glyphs as they are, instead of recompiling them all.
    font = TTFont(Path(matplotlib.get_data_path(), "fonts", "ttf", file),
                  recalcBBoxes=False, recalcTimestamp=False)
    em = font["head"].unitsPerEm
    low, high = round(_CJK_BOTTOM * em), round(_CJK_TOP * em)
    pen = TTGlyphPen(None)
    pen.moveTo((0, low)), pen.lineTo((0, high)), pen.lineTo((em, high)), pen.lineTo((em, low))
    pen.closePath()
    glyph = pen.glyph()
    glyph.recalcBounds(font["glyf"])
    font["glyf"]["cjk"], font["hmtx"]["cjk"] = glyph, (em, 0)  # appended to the glyph order
    # One many-to-one (format 13) subtable holds DejaVu's own map and every CJK range.
    cmap = CmapSubtable.newSubtable(13)
    cmap.platformID, cmap.platEncID, cmap.language = 3, 10, 0
    cmap.cmap = {c: "cjk" for lo, hi in _CJK_RANGES for c in range(lo, hi + 1)} | font.getBestCmap()
    font["cmap"].tables = [cmap]
    for record in font["name"].names:  # family, unique, full, PostScript, typographic names
        if record.nameID in (1, 3, 4, 6, 16):
            record.string = (str(record).replace("DejaVu Sans", _FAMILY)
                             .replace("DejaVuSans", _FAMILY.replace(" ", "")))
    data = io.BytesIO()
    font.save(data)
    digest = hashlib.sha256(data.getvalue()).hexdigest()[:16]
    path = Path(matplotlib.get_cachedir(), f"chart-sans-{digest}.ttf")
    if not path.exists():  # write, then rename: never a half-written font, should builds race
        partial = path.with_name(f"{path.name}.{os.getpid()}")
        partial.write_bytes(data.getvalue())
        partial.replace(path)
    return path


@contextlib.contextmanager
def chart_figure(name: str, lang: str, height: float) -> Iterator[tuple[Figure, Any]]:
    """A full-width figure and its axes, drawn with the charts' style (set only meanwhile)."""
    _register_fonts()
    # Mathtext ($2^{16}$) looks its fonts up by name as well: give it _FAMILY too.
    mathtext = {f"mathtext.{key}": _FAMILY + style for key, style in (
        ("rm", ""), ("sf", ""), ("tt", ""), ("cal", ""), ("it", ":italic"), ("bf", ":bold"),
        ("bfit", ":italic:bold"))}
    rc = {"svg.fonttype": "none", "svg.hashsalt": f"generator-chart-{name}-{lang}",
          "font.family": [_FAMILY], "font.size": 10, "legend.fontsize": 9.5,
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
