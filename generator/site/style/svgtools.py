"""Make an SVG fit to inline into a page: accessible, theme-aware, unique ids, no dates."""

from __future__ import annotations

import re
from xml.sax.saxutils import escape

from generator.site.style.palette import INK

_XML_DECL = re.compile(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*", re.S)
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
_COMMENT = re.compile(r"\s*<!--.*?-->", re.S)
_ROOT = re.compile(r"<svg\b[^>]*>", re.S)
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
    svg = re.sub(INK, "currentColor", svg, flags=re.I)
    return "\n".join(line for line in svg.splitlines() if line.strip()) + "\n"


_ID = re.compile(r'\sid="([^"]*)"')
_REF = re.compile(r'(url\(#|href="#)([^)"]+)')


def prefix_ids(svg: str, prefix: str) -> str:
    """Keep only the ids something refers to (clip paths, markers), each with `prefix`, so
    that several SVGs can be inlined into one page without their ids clashing."""
    used = set(m.group(2) for m in _REF.finditer(svg))
    svg = _ID.sub(lambda m: f' id="{prefix}{m.group(1)}"' if m.group(1) in used else "", svg)
    return _REF.sub(lambda m: m.group(1) + prefix + m.group(2), svg)
