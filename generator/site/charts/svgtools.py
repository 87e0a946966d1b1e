"""Make an SVG fit to inline into a page: accessible, theme-aware, unique ids, no dates."""

from __future__ import annotations

import re
from xml.sax.saxutils import escape

from generator.site.palette import INK

_XML_DECL = re.compile(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*", re.DOTALL)
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.DOTALL)
_COMMENT = re.compile(r"\s*<!--.*?-->", re.DOTALL)
_ROOT = re.compile(r"<svg\b[^>]*>", re.DOTALL)
_SIZE = re.compile(r'\s(width|height)="[^"]*"')


def finalize(svg: str, *, title: str, desc: str, id_prefix: str) -> str:
    """Strip the XML prolog, metadata and comments; give the root `role="img"` with a
    `<title>` and a `<desc>`; let it scale to the column; swap the ink colour for
    currentColor; drop blank lines (a blank line would end a raw HTML block in Markdown)."""
    svg = _COMMENT.sub("", _METADATA.sub("", _XML_DECL.sub("", svg)))
    root = _ROOT.search(svg)
    if root is None:
        raise ValueError("not an SVG document")
    title_id, desc_id = f"{id_prefix}-title", f"{id_prefix}-desc"
    tag = _SIZE.sub("", root.group(0))
    tag = re.sub(r"\s(role|aria-labelledby|id)=\"[^\"]*\"", "", tag)
    tag = tag[:-1].rstrip("/ ") + (f' id="{id_prefix}" role="img" aria-labelledby="{title_id} {desc_id}"'
                                   ' style="max-width:100%;height:auto">')
    head = f'<title id="{title_id}">{escape(title)}</title><desc id="{desc_id}">{escape(desc)}</desc>'
    svg = svg[:root.start()] + tag + head + svg[root.end():]
    svg = re.sub(INK, "currentColor", svg, flags=re.IGNORECASE)
    svg = _PATH_DATA.sub(lambda m: f' d="{compact_path(m.group(1))}"', svg)
    svg = _font_once(svg)
    return "\n".join(line for line in svg.splitlines() if line.strip()) + "\n"


_FONT = re.compile(r"font-family: ([^;\"]+);? ?")


def _font_once(svg: str) -> str:
    """matplotlib repeats the whole font stack in every <text>; when they all use one, the
    root names it once and the texts inherit it."""
    families = set(_FONT.findall(svg))
    if len(families) != 1:
        return svg
    family = families.pop().strip().replace('"', "'")
    svg = _FONT.sub("", svg)
    return _ROOT.sub(lambda m: m.group(0)[:-1] + f' font-family="{family}">', svg, count=1)


_PATH_DATA = re.compile(r' d="([MLz\d.\s-]*)"')
_PATH_TOKEN = re.compile(r"[MLz]|-?[\d.]+")


def compact_path(data: str) -> str:
    """matplotlib writes every vertex as `L x y`; a stacked timeline's outline is a step
    function, all horizontal and vertical runs, so `H x` / `V y` say the same in half the
    bytes (and a vertex that repeats the last one says nothing). Only paths of straight lines
    are rewritten: anything else is returned as it was."""
    tokens = _PATH_TOKEN.findall(data)
    out: list[str] = []
    x = y = start = None
    i = 0
    while i < len(tokens):
        command = tokens[i]
        if command == "z":
            out.append("z")
            x, y = start or (None, None)  # z returns to where the subpath began
            i += 1
            continue
        point = tokens[i + 1:i + 3]
        if command not in ("M", "L") or len(point) < 2 or {"M", "L", "z"} & set(point):
            return data
        nx, ny = point
        i += 3
        if command == "M":
            out.append(f"M{nx} {ny}")
            start = (nx, ny)
        elif (nx, ny) == (x, y):
            continue
        elif ny == y:
            out.append(f"H{nx}")
        elif nx == x:
            out.append(f"V{ny}")
        else:
            out.append(f"L{nx} {ny}")
        x, y = nx, ny
    return "".join(out)


_ID = re.compile(r'\sid="([^"]*)"')
_REF = re.compile(r'(url\(#|href="#)([^)"]+)')


def prefix_ids(svg: str, prefix: str) -> str:
    """Keep only the ids something refers to (clip paths, markers), each with `prefix`, so
    that several SVGs can be inlined into one page without their ids clashing."""
    used = set(m.group(2) for m in _REF.finditer(svg))
    svg = _ID.sub(lambda m: f' id="{prefix}{m.group(1)}"' if m.group(1) in used else "", svg)
    return _REF.sub(lambda m: m.group(1) + prefix + m.group(2), svg)
