"""Write generator/site/style/cjk-metrics.ttf, the font matplotlib measures Chinese chart text with.

Charts keep their text as text (svg.fonttype none): readers' browsers draw it with a CJK font
of the CSS stack, and matplotlib only measures it, for tick label room, constrained layout and
the tight bounding box. Measuring with whatever CJK font the build machine has installed made
the SVGs differ between machines. Every CJK font of the stack draws ideographs, kana and
full-width punctuation one em wide, so one glyph is enough to measure them all: this font maps
those ranges to a single glyph, advance 1 em, whose outline (a hollow box, in case it is ever
rasterised) spans the full advance and the height of Noto Sans CJK's ink for the site's
characters: from 0.1 em below the baseline (its comma reaches -0.107 em, its parentheses
-0.096 em) to 0.85 em above (0.856 em). Lines of text then measure as tall as with DejaVu's
"lp", which matplotlib takes as every line's minimum, just as they do with Noto installed.

The output is byte-for-byte reproducible (fixed timestamps); rerun only to change the ranges:
    python scripts/make_cjk_metrics_font.py
"""

from __future__ import annotations

from pathlib import Path

from fontTools.fontBuilder import FontBuilder
from fontTools.pens.ttGlyphPen import TTGlyphPen
from fontTools.ttLib.tables._c_m_a_p import CmapSubtable

FAMILY = "Chart CJK Metrics"  # charts.py asks matplotlib for this family name
OUT = Path(__file__).resolve().parent.parent / "generator" / "site" / "style" / "cjk-metrics.ttf"
EM, ASCENT, DESCENT = 1000, 850, 100
#: Full-width code points, first and last: CJK symbols and punctuation, kana, CJK Unified
#: Ideographs and extension A, compatibility ideographs and forms, full-width ASCII and signs.
RANGES = [(0x3000, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF),
          (0xFE30, 0xFE4F), (0xFF01, 0xFF60), (0xFFE0, 0xFFE6)]


def _square(inset: int) -> TTGlyphPen:
    pen = TTGlyphPen(None)
    lo, hi = -DESCENT, ASCENT
    pen.moveTo((0, lo)), pen.lineTo((0, hi)), pen.lineTo((EM, hi)), pen.lineTo((EM, lo))
    pen.closePath()  # outer contour clockwise, inner one counter-clockwise: a hollow square
    pen.moveTo((inset, lo + inset)), pen.lineTo((EM - inset, lo + inset))
    pen.lineTo((EM - inset, hi - inset)), pen.lineTo((inset, hi - inset))
    pen.closePath()
    return pen


def build() -> FontBuilder:
    fb = FontBuilder(EM, isTTF=True)
    fb.setupGlyphOrder([".notdef", "em"])
    fb.setupCharacterMap({})
    fb.setupGlyf({".notdef": TTGlyphPen(None).glyph(), "em": _square(EM // 20).glyph()})
    fb.setupHorizontalMetrics({".notdef": (0, 0), "em": (EM, 0)})
    fb.setupHorizontalHeader(ascent=ASCENT, descent=-DESCENT)
    fb.setupOS2(sTypoAscender=ASCENT, sTypoDescender=-DESCENT, sTypoLineGap=0,
                usWinAscent=ASCENT, usWinDescent=DESCENT)
    fb.setupNameTable({"familyName": FAMILY, "styleName": "Regular",
                       "uniqueFontIdentifier": FAMILY, "fullName": FAMILY,
                       "psName": FAMILY.replace(" ", "") + "-Regular", "version": "Version 1.000"},
                      mac=False)
    fb.setupPost()
    fb.setupHead(created=0, modified=0)
    # Format 13 maps whole ranges to one glyph (as the Last Resort font does): a few hundred
    # bytes where format 4 would list every one of the ~28,000 code points.
    many_to_one = CmapSubtable.newSubtable(13)
    many_to_one.platformID, many_to_one.platEncID, many_to_one.language = 3, 10, 0
    many_to_one.cmap = {cp: "em" for lo, hi in RANGES for cp in range(lo, hi + 1)}
    fb.font["cmap"].tables = [many_to_one]
    fb.font.recalcTimestamp = False
    return fb


if __name__ == "__main__":
    build().save(OUT)
    print(f"wrote {OUT.relative_to(Path.cwd()) if OUT.is_relative_to(Path.cwd()) else OUT}"
          f" ({OUT.stat().st_size} bytes)")
