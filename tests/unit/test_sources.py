"""Which data files a page lists (site/sources.py): a page that shares its context with
others lists only the files behind what its template names, what its figures are drawn
from, and the other pages' contexts it reads through `site` (issue 34: the article's pages
each listed all 39 files of their shared context)."""

from __future__ import annotations

from generator.site import sources
from generator.site.pages import Page


def _result(name: str) -> dict:
    return {"json_path": f"data/estimate/{name}.json"}


CONTEXT = {"fp32": _result("a"), "levers": [_result("b")], "drawn": {"x": _result("c")}}
SITE = {"accuracy": {"rows": [_result("d")]}, "sweeps": {"rows": [_result("e")]}}


def test_a_page_of_its_own_lists_every_file_of_its_context():
    page = Page("x.md", "x/x", 0, variables=CONTEXT)
    assert sources.data_files(page, CONTEXT, sources=["{{ fp32.peak }}"], site=SITE) == \
        ["data/estimate/a.json", "data/estimate/b.json", "data/estimate/c.json"]


def test_a_page_sharing_its_context_lists_what_it_names_and_reads_through_site():
    page = Page("x.md", "x/x", 0, variables=CONTEXT, shares_context=("drawn",))
    found = sources.data_files(page, CONTEXT, site=SITE, sources=[
        '{{ fp32.peak }} {% set acc = site.get("accuracy") %}{{ acc.rows }} levers in prose'])
    assert found == ["data/estimate/a.json", "data/estimate/c.json", "data/estimate/d.json"]
