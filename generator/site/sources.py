"""Which data files a page's numbers come from: the published JSON of each step result and
study that the page's data holds.

render publishes every result and study under data/ and notes its link in it as
`json_path`. A page's data (its Page's variables, or else its module's context) holds the
results it prints; a page module that keeps only figures derived from them also keeps the
results and studies under a "sources" key. Walking that data finds every file, so no
template or page lists its files by hand. A Page whose variables give "data_files" (a list
of links, empty for a page with no numbers of its own) is taken at its word.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import jinja2
import jinja2.meta

from generator.site.pages import Page
from generator.site.templating import environment


def data_files(page: Page, context: Any, *, sources: list[str] | None = None,
               site: dict[str, Any] | None = None) -> list[str]:
    """The links, from the language root, of the JSON files behind the page, sorted. A page
    that shares its context (Page.shares_context) counts only what its templates' `sources`
    (both languages) name of it, and the pages' contexts they read through `site`."""
    if "data_files" in page.variables:
        return sorted(page.variables["data_files"])
    data = page.variables or context
    if page.shares_context is not None and sources is not None and isinstance(data, dict):
        named = set(page.shares_context).union(*map(_variables, sources))
        read = set().union(*map(_read_through_site, sources))
        data = [*(value for key, value in data.items() if key in named),
                *((site or {}).get(name) for name in sorted(read))]
    found: set[str] = set()
    _walk(data, found, set())
    return sorted(found)


@functools.cache
def _variables(source: str) -> frozenset[str]:
    """The variables a template's source reads (parsed once per source: every page of a
    template, in each language, asks again)."""
    return frozenset(jinja2.meta.find_undeclared_variables(environment().parse(source)))


@functools.cache
def _read_through_site(source: str) -> frozenset[str]:
    """The pages' contexts a template's source reads through `site`."""
    return frozenset(re.findall(r"""site(?:\.get\(|\[)["']([a-z_]+)["']""", source))


def _walk(value: Any, found: set[str], seen: set[int]) -> None:
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, dict):
        if isinstance(value.get("json_path"), str):
            found.add(value["json_path"])
            return  # a result holds no other result
        for item in value.values():
            _walk(item, found, seen)
    elif isinstance(value, (list, tuple)):
        # A list of numbers (a timeline) holds no result: skip it without visiting each.
        if value and not isinstance(value[0], (dict, list, tuple)):
            return
        for item in value:
            _walk(item, found, seen)
