"""The built site from the committed results, as a reader receives it (issue 13): every page
light enough to load, every chart image described in words, every page's raw data linked.

Rendered from results/ into a temporary project and built with `mkdocs build --strict`.

A page's weight is what a reader downloads for that page alone, uncompressed: its HTML plus
every image its content loads (charts are SVG files behind `<img loading="lazy">`: a reader
who scrolls to the end fetches them all). What every page shares and the browser caches once
(the theme's CSS and JavaScript, assets/, the search index) is not counted. Servers usually
compress HTML and SVG, so what travels is less: this is the upper bound.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from conftest import REPO_ROOT, make_project

from generator.site import render
from generator.site.mkdocs import build_site

LIMIT_BYTES = 1_000_000
_IMG = re.compile(r"<img\b[^>]*>")
_ATTR = re.compile(r'\b(src|alt)="([^"]*)"')
_HREF = re.compile(r'href="([^"#?]+\.json)"')
#: The line of a page that has no numbers of its own (templates/macros.md.j2, data_files).
NONE_LINE = ("本页没有自己的结果数据", "This page shows no results of its own")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_project(tmp_path_factory.mktemp("weight") / "project")
    render.render(REPO_ROOT / "docs" / "data", root / "docs")
    build_site(root / "mkdocs.yml", root / "site")
    return root / "site"


def _pages(site: Path) -> list[Path]:
    pages = [p for p in sorted(site.rglob("index.html")) if "assets" not in p.parts]
    assert len(pages) > 20, pages
    return pages


def _content(html: str) -> str:
    """The page's article: what the page itself says, without the theme's header and nav."""
    start, end = html.find("<article"), html.rfind("</article>")
    assert start >= 0 and end > start, "no <article> in the page"
    return html[start:end]


def _images(page: Path, site: Path) -> list[tuple[Path, str]]:
    """Each image the page's content loads, once, with its alt text."""
    found = {}
    for tag in _IMG.findall(_content(page.read_text(encoding="utf-8"))):
        attrs = dict(_ATTR.findall(tag))
        target = (page.parent / unquote(attrs["src"])).resolve()
        assert target.is_relative_to(site.resolve()) and target.is_file(), (page, attrs["src"])
        found[target] = attrs.get("alt", "")
    return list(found.items())


def page_weight(page: Path, site: Path) -> int:
    return page.stat().st_size + sum(image.stat().st_size for image, _ in _images(page, site)
                                     if "assets" not in image.relative_to(site.resolve()).parts)


def test_every_page_weighs_under_a_megabyte(site: Path) -> None:
    weights = {str(p.relative_to(site)): page_weight(p, site) for p in _pages(site)}
    heavy = {page: weight for page, weight in weights.items() if weight > LIMIT_BYTES}
    assert not heavy, f"pages over {LIMIT_BYTES:,} bytes (HTML + their images): {heavy}"
    # The check weighs images: the report of the article's model loads some.
    assert any(_images(p, site) for p in _pages(site) if "reports" in p.parts)


def test_every_chart_image_is_described_in_words(site: Path) -> None:
    """Its alt text (the chart's title), and the caption's description of what it draws."""
    charts = 0
    for page in _pages(site):
        content = _content(page.read_text(encoding="utf-8"))
        for image, alt in _images(page, site):
            assert alt.strip(), f"{page.relative_to(site)}: {image.name} has no alt text"
        for figure in re.findall(r'<figure class="chart">.*?</figure>', content, flags=re.DOTALL):
            if "<img" in figure:
                charts += 1
                desc = re.search(r'<span class="chart-desc">(.*?)</span>', figure, flags=re.DOTALL)
                assert desc and desc.group(1).strip(), (page, figure[:200])
    assert charts > 10, charts


def test_every_page_links_its_data_or_says_it_has_none(site: Path) -> None:
    for page in _pages(site):
        html = page.read_text(encoding="utf-8")
        assert '<h2 id="data"' in html, f"{page.relative_to(site)}: no data section"
        section = html[html.index('<h2 id="data"'):]
        links = _HREF.findall(section)
        assert links or any(line in section for line in NONE_LINE), \
            f"{page.relative_to(site)}: its data section links no file and says it has none"


def test_every_linked_data_file_is_in_the_site(site: Path) -> None:
    linked = 0
    for page in _pages(site):
        for href in _HREF.findall(page.read_text(encoding="utf-8")):
            target = (page.parent / unquote(href)).resolve()
            assert target.is_relative_to(site.resolve()) and target.is_file(), \
                f"{page.relative_to(site)} links {href}, which the site does not hold"
            linked += 1
    assert linked > 100, linked
    studies = {p.name for p in site.glob("data/studies/*/*.json")}
    assert {"torch-facts.json", "training-curves-cpu.json"} <= studies, studies


def test_the_calculator_with_its_data_weighs_under_a_megabyte(site: Path) -> None:
    """The widget loads its data as it is used: the models and GPUs at once, one model's fits
    when it is picked, one setting's replay when that is picked. The page with the heaviest
    of each stays under the limit too."""
    data = site / "data"
    models = [p.stat().st_size for p in (data / "calculator").glob("model-*.js")]
    settings = [p.stat().st_size for p in (data / "calculator").glob("*.js")
                if not p.name.startswith("model-")]
    assert models and settings, "the calculator publishes its fits"
    for page in (site / "calculator" / "index.html", site / "en" / "calculator" / "index.html"):
        weight = (page_weight(page, site) + (data / "calculator.js").stat().st_size
                  + max(models) + max(settings))
        assert weight < LIMIT_BYTES, (page, weight)
