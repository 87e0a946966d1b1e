"""How a page embeds a figure: the SVG file written beside the pages, and what a template
needs to show it as an image that loads lazily (its title and description in words).

Inlining every chart made the report pages several megabytes, each SVG's path data sitting in
the HTML; a file behind `<img loading="lazy">` is fetched only when the reader scrolls to it.
An image cannot take the page's text colour, so the file draws its ink in one fixed colour
(the theme gives images a light card in dark mode: docs/assets/extra.css). The chart's
`<title>` and `<desc>` stay readable: the title becomes the image's alt text and the
description its caption's text for screen readers (templates/macros.md.j2, `figure`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import unescape

from markupsafe import Markup

from generator.site.palette import FILE_INK

_TITLE = re.compile(r"<title\b[^>]*>(.*?)</title>", re.DOTALL)
_DESC = re.compile(r"<desc\b[^>]*>(.*?)</desc>", re.DOTALL)
_VIEWBOX = re.compile(r'<svg\b[^>]*\bviewBox="\s*[-\d.]+[\s,]+[-\d.]+[\s,]+([\d.]+)[\s,]+([\d.]+)')
_ROOT_STYLE = re.compile(r'(<svg\b[^>]*?\bstyle=")([^"]*)(")', re.DOTALL)


@dataclass(frozen=True)
class FigureView:
    """One figure as a template shows it."""

    svg: Markup
    """The SVG to inline (an above-the-fold figure), taking the page's text colour."""
    title: str
    """The chart's <title>, in words: the image's alt text."""
    desc: str
    """The chart's <desc>, in words: every number it draws, for screen readers."""
    width: int
    """The drawing's width and height (its viewBox), so that the page keeps the image's place
    before it loads."""
    height: int


def views(figures: dict[str, str]) -> dict[str, FigureView]:
    """Each figure's view, by name, from its finalized SVG (svgtools.finalize)."""
    return {name: view(svg) for name, svg in figures.items()}


def view(svg: str) -> FigureView:
    title, desc, box = _TITLE.search(svg), _DESC.search(svg), _VIEWBOX.search(svg)
    if title is None or desc is None or box is None:
        raise ValueError("a figure needs a <title>, a <desc> and a viewBox")
    return FigureView(svg=Markup(svg), title=unescape(title.group(1)).strip(),
                      desc=unescape(desc.group(1)).strip(), width=round(float(box.group(1))),
                      height=round(float(box.group(2))))


def standalone(svg: str) -> str:
    """The SVG as a file of its own: `currentColor` has no page to inherit from there, so the
    root sets the ink."""
    if _ROOT_STYLE.search(svg):
        return _ROOT_STYLE.sub(lambda m: f"{m.group(1)}color:{FILE_INK};{m.group(2)}{m.group(3)}",
                               svg, count=1)
    return re.sub(r"<svg\b", f'<svg style="color:{FILE_INK}"', svg, count=1)
