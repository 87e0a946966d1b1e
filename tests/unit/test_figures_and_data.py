"""How pages embed figures and name their data (issue 13): a chart is an image that loads
lazily, described in words; SVG path data written short says the same; every page ends
with the JSON files its numbers come from, or says it has none."""

from __future__ import annotations

import re
from html import unescape

import markdown
import pytest
from conftest import LANGS

from generator.site import figures, sources
from generator.site.charts.svgtools import compact_path, finalize
from generator.site.pages import Page
from generator.site.templating import environment

SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="200pt" height="100pt" '
       'viewBox="0 0 200.4 99.6"><text style="font-size: 10px; font-family: \'Noto Sans\', '
       'sans-serif; fill: #010203">a</text><text style="font-family: \'Noto Sans\', sans-serif; '
       'fill: #010203">b</text><path d="M 0 0 L 5 0 L 5 5 L 5 5 L 9 7 z L 0 3 "/></svg>')


def _vertices(data: str) -> list[tuple[float, float]]:
    """Where a path of M/L/H/V/z commands goes, vertex by vertex (repeats dropped)."""
    points: list[tuple[float, float]] = []
    x = y = 0.0
    start = (0.0, 0.0)
    for command, args in re.findall(r"([MLHVz])([^MLHVz]*)", data):
        numbers = [float(n) for n in args.split()]
        if command in "ML":
            x, y = numbers
            start = (x, y) if command == "M" else start
        elif command == "H":
            x = numbers[0]
        elif command == "V":
            y = numbers[0]
        else:
            x, y = start
        if not points or points[-1] != (x, y):
            points.append((x, y))
    return points


def test_short_path_data_draws_the_same_vertices() -> None:
    steps = "M 10 50 " + " ".join(f"L {10 + i} {50 - (i // 2) % 7} L {11 + i} {50 - (i // 2) % 7}"
                                  for i in range(0, 40, 2)) + " L 60 0 L 10 0 z"
    for data in (steps, "M 1 1 L 2 1 z L 1 5", "M 0 0 L 3 4 L 3 4 L 3 9"):
        short = compact_path(data)
        assert _vertices(short) == _vertices(data), (data, short)
    assert len(compact_path(steps)) < 0.7 * len(steps)
    # Curves and anything else are left as they are.
    assert compact_path("M 1 1 C 2 3 4 5 6 7") == "M 1 1 C 2 3 4 5 6 7"


def test_a_finalized_chart_names_its_font_once_and_writes_short_paths() -> None:
    svg = finalize(SVG, title="T", desc="D", id_prefix="x")
    assert svg.count("Noto Sans") == 1 and "font-family=\"'Noto Sans', sans-serif\"" in svg
    assert ' d="M0 0H5V5L9 7zV3"' in svg  # z went back to (0, 0)


def test_a_figure_view_carries_title_description_and_size() -> None:
    svg = finalize(SVG, title="Peak [GiB] & more", desc="Every *number*", id_prefix="x")
    view = figures.view(svg)
    assert (view.title, view.desc, view.width, view.height) == \
        ("Peak [GiB] & more", "Every *number*", 200, 100)
    image = environment().get_template("macros.md.j2").module.figure({"c": view}, "c", "C", "D")
    assert "![Peak &#91;GiB&#93; & more](figures/c.svg)" in str(image)  # alt text, inert
    standalone = figures.standalone(svg)
    assert 'style="color:#1a1a1a;' in standalone and "currentColor" in standalone


def _figure(inline: bool) -> str:
    macro = environment().get_template("macros.md.j2").module.figure
    view = figures.view(finalize(SVG, title="The title", desc="The numbers", id_prefix="x"))
    return str(macro({"c": view}, "c", "Caption", "Download", "../", inline=inline))


def test_a_figure_is_a_lazy_image_with_alt_text_and_its_description() -> None:
    text = _figure(inline=False)
    assert "![The title](../figures/c.svg){ loading=lazy width=\"200\" height=\"100\" }" in text
    assert '<span class="chart-desc">The numbers</span>' in text and "<svg" not in text
    assert "[Download](../figures/c.svg)" in text
    inline = _figure(inline=True)
    assert "<svg" in inline and "![" not in inline and "Caption" in inline


@pytest.mark.parametrize("lang", LANGS)
def test_the_data_section_lists_files_or_says_there_are_none(lang: str) -> None:
    macro = environment().get_template("macros.md.j2").module.data_files
    none = str(macro([], lang, ""))
    assert "{ #data }" in none and ("没有自己的结果" if lang == "zh" else "no results of its own") in none
    few = str(macro(["data/estimate/a.json"], lang, "../"))
    assert "- [estimate/a.json](../data/estimate/a.json)" in few
    many = str(macro([f"data/estimate/{i}.json" for i in range(9)], lang, ""))
    assert "??? note" in many and "    - [estimate/8.json](data/estimate/8.json)" in many


def test_a_pages_data_files_are_the_results_its_data_holds() -> None:
    result = {"json_path": "data/m/a.json", "timeline": {"tick": [1, 2, 3]}}
    study = {"json_path": "data/studies/m/s.json"}
    context = {"rows": [{"x": 1}], "sources": [result, study], "again": {"r": result}}
    page = Page("x.md", "x/x", 0)
    assert sources.data_files(page, context) == ["data/m/a.json", "data/studies/m/s.json"]
    told = Page("y.md", "y/y", 0, variables={"data_files": [], "all": [result]})
    assert sources.data_files(told, context) == []


def test_a_figure_with_markup_in_its_words_reaches_the_page_as_text() -> None:
    """Model names come from users: the alt text and caption show them, never run them."""
    hostile = '<script>alert("x")</script> a*b* [c] & d'
    view = figures.view(finalize(SVG, title=hostile, desc=hostile, id_prefix="x"))
    macro = environment().get_template("macros.md.j2").module.figure
    html = markdown.markdown(str(macro({"c": view}, "c", "Caption", "Download")),
                             extensions=["attr_list", "md_in_html"])
    assert "<script" not in html and "<em>" not in html
    alt = re.search(r'alt="([^"]*)"', html)
    desc = re.search(r'<span class="chart-desc">([^<]*)</span>', html)
    assert alt and desc and unescape(alt.group(1)) == unescape(desc.group(1)) == hostile
