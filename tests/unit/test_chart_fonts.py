"""Charts are laid out the same whatever fonts the machine has, and say nothing while drawn.

matplotlib only measures chart text (the SVG keeps it as text for the browser), so the fonts
it measures with decide every position in the file. Here fonts are put in front of the real
ones under every name of the CSS font stack and "DejaVu Sans", as a machine with other fonts
installed would offer them, and the charts must come out byte for byte the same.
"""

from __future__ import annotations

import contextlib
import json
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path

import matplotlib
import pytest
from fontTools.ttLib import TTFont
from matplotlib import font_manager
from matplotlib.ft2font import FT2Font

from generator.site.charts import step_charts
from generator.site.charts.canvas import chart_figure, chart_svg
from generator.site.palette import FONT_STACK

RESULT = (Path(__file__).resolve().parents[1] / "fixtures" / "results" / "estimate"
          / "bert-base-b32-s128-fp32-adamw-estimate.json")
#: Serif: other widths than any sans, so a chart measured with it moves.
IMPOSTOR_SOURCE = Path(matplotlib.get_data_path(), "fonts", "ttf", "DejaVuSerif.ttf")


def _timeline() -> str:
    return step_charts.timeline(json.loads(RESULT.read_text(encoding="utf-8")), "zh")


def _mixed_math() -> str:
    """Chinese around mathtext, which measures the words with one font and no fallback."""
    with chart_figure("fonts-math", "zh", 1.5) as (fig, ax):
        ax.set_xticks([0, 1], ["$2^{-24}$", "$2^{16}$"])
        ax.set_ylabel("乘 $2^{16}$ 后的最小正规数")
        ax.set_xlabel("分配事件（训练步进度）")
        svg = chart_svg(fig, "fonts-math", "zh")
    assert "¤" not in svg  # mathtext's stand-in for a glyph its font lacks
    return svg


def _draw_quietly(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Both charts, failing on any warning or matplotlib log warning (findfont's are logs)."""
    caplog.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with caplog.at_level(logging.WARNING, logger="matplotlib"):
            svgs = [_timeline(), _mixed_math()]
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    return svgs


@contextlib.contextmanager
def _impostors(folder: Path) -> Iterator[None]:
    """A copy of DejaVu Serif under each family name of FONT_STACK (but the generic
    sans-serif) and "DejaVu Sans", ahead of every installed font: asked for by one of those
    names, matplotlib picks the impostor."""
    manager = font_manager.fontManager
    names = dict.fromkeys([n for n in FONT_STACK if n != "sans-serif"] + ["DejaVu Sans"])
    entries = []
    for i, name in enumerate(names):
        font = TTFont(IMPOSTOR_SOURCE)
        for record in font["name"].names:
            if record.nameID in (1, 16):  # family names
                record.string = name
        font.save(folder / f"impostor-{i}.ttf")
        entries.append(font_manager.ttfFontProperty(FT2Font(folder / f"impostor-{i}.ttf")))
    original = manager.ttflist
    manager.ttflist = entries + original  # first, so they also win ties with installed fonts
    manager._findfont_cached.cache_clear()  # it keeps earlier answers; there is no public way
    try:
        yield
    finally:
        manager.ttflist = original
        manager._findfont_cached.cache_clear()


def test_same_bytes_with_other_fonts_installed(tmp_path: Path, caplog) -> None:
    baseline = _draw_quietly(caplog)
    with _impostors(tmp_path):
        picked = font_manager.findfont(font_manager.FontProperties(family=FONT_STACK[0]))
        assert Path(picked).name.startswith("impostor-")  # what measuring by name would use
        assert _draw_quietly(caplog) == baseline
