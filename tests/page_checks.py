"""Checks of what the site shows: a page rendered from its module's context alone, its
prose without the inline SVGs, and what every chart and diagram SVG must be."""

from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType
from typing import Any

SVG = "{http://www.w3.org/2000/svg}"

def site_inputs(results_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The step results and studies of a results tree as render.render hands them to the
    page modules, each result and study with the link to its published JSON (`json_path`)."""
    from generator import results

    found = results.load_all_with_paths(results_dir)
    for path, result in found:
        result["json_path"] = f"../data/{path.parent.name}/{path.name}"
    studies = results.load_studies_with_paths(results_dir)
    for path, study in studies:
        study["json_path"] = f"../data/studies/{path.parent.name}/{path.name}"
    return [result for _, result in found], [study for _, study in studies]


#: The committed results, which the site publishes.
COMMITTED = Path(__file__).resolve().parent.parent / "docs" / "data"


def contexts(results: list[dict[str, Any]], studies: list[dict[str, Any]]) -> dict[str, Any]:
    """Every page module's context from these results and studies, by module name."""
    from generator.site.pages import all_pages

    return {name: module.context(results, studies) for name, module in all_pages().items()}


@functools.cache
def committed_contexts() -> tuple[tuple[list, list], dict[str, Any]]:
    """site_inputs(COMMITTED) and every page module's context from them, worked out once per
    test process (the calculator's alone takes about 7 s). Contexts are read, never
    changed, as render.render shares them between pages."""
    inputs = site_inputs(COMMITTED)
    return inputs, contexts(*inputs)


#: Figures drawn per (page module, language, context), kept with their context: a module's
#: pages share them, as in render.render. A context is not changed once its page is drawn.
_FIGURES: dict[tuple[str, str, int], tuple[Any, dict[str, str]]] = {}


#: Tables likewise, per (page module, language, context).
_TABLES: dict[tuple[str, str, int], tuple[Any, dict[str, Any]]] = {}


def page_tables(module: ModuleType, ctx: Any, lang: str) -> dict[str, Any]:
    """A page module's tables for a context, made once."""
    if ctx is None:
        return {}
    key = (module.__name__, lang, id(ctx))
    if key not in _TABLES or _TABLES[key][0] is not ctx:
        _TABLES[key] = (ctx, module.PAGE_MODULE.tables(ctx, lang))
    return _TABLES[key][1]


def page_figures(module: ModuleType, ctx: Any, lang: str) -> dict[str, str]:
    """A page module's figures (SVG by name) for a context, drawn once."""
    if ctx is None:
        return {}
    key = (module.__name__, lang, id(ctx))
    if key not in _FIGURES or _FIGURES[key][0] is not ctx:
        _FIGURES[key] = (ctx, module.PAGE_MODULE.figures(ctx, lang))
    return _FIGURES[key][1]


def page_markdown(module: ModuleType, ctx: Any, lang: str, path: str | None = None) -> str:
    """One page of a page module in `lang`, from its context alone: its figures (an image of
    each SVG file, or the SVG inline) and tables, through its template, as render.render passes them. `path` picks one page of
    a module that writes several (article, reports)."""
    from generator.site import figures as figure_views
    from generator.site.pages import pages_of
    from generator.site.render import render_page

    tables = page_tables(module, ctx, lang)
    pages = [p for p in pages_of(module.PAGE_MODULE, ctx) if path is None or p.path == path]
    assert len(pages) == 1, [p.path for p in pages_of(module.PAGE_MODULE, ctx)]
    name = module.__name__.rsplit(".", 1)[-1]
    figures = figure_views.views(page_figures(module, ctx, lang))
    text = render_page(pages[0], lang, context=ctx, tables=tables, figures=figures,
                       site={name: ctx})
    assert "{{" not in text and "{%" not in text, "template syntax left on the page"
    return text


def prose(page: str) -> str:
    """A page without its inline SVGs, whose coordinates hold every digit sequence."""
    return re.sub(r"<svg.*?</svg>", "", page, flags=re.S)


def svg_texts(svg: str) -> list[str]:
    """Every visible string of an SVG: the text of each <text> element."""
    return ["".join(el.itertext()) for el in ET.fromstring(svg).iter(f"{SVG}text")]


def svg_ids(svg: str) -> list[str]:
    return re.findall(r'\sid="([^"]+)"', svg)


def check_svg(svg: str, svg_id: str) -> ET.Element:
    """What every figure of the site must be: one well-formed <svg role="img"> whose id
    matches `svg_id` (a regular expression; a plain id matches itself), labelled by its
    non-empty <title> and <desc>; every id inside it prefixed with its own id (figures share
    a page) and every reference resolved inside it; its ink the theme's (currentColor), never
    the placeholder colour; no XML prolog or metadata."""
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg" and root.get("role") == "img"
    assert re.fullmatch(svg_id, root.get("id") or ""), (root.get("id"), svg_id)
    svg_id = root.get("id")
    title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
    assert title is not None and "".join(title.itertext()).strip()
    assert desc is not None and "".join(desc.itertext()).strip()
    assert root.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    ids = svg_ids(svg)
    assert len(ids) == len(set(ids)) and all(i.startswith(svg_id) for i in ids), svg_id
    assert set(re.findall(r'(?:url\(#|href="#)([^)"]+)', svg)) <= set(ids)
    assert "currentColor" in svg and "#010203" not in svg.lower()
    assert "<?xml" not in svg and "<metadata" not in svg and "\n\n" not in svg
    return root
