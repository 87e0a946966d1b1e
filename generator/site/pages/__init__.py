"""The site's pages. Each page is one module (or folder) here, and exports what the render
reads of it as one typed record, `PAGE_MODULE = PageModule(...)`:

    pages                   its pages: file, template, place in the nav
    context(results, studies) -> dict | None
                            its data, computed once for both languages
    figures(ctx, lang) -> dict[str, str]
                            optional: SVGs by name (prefixed with the page's name, so names
                            cannot clash)
    tables(ctx, lang) -> dict[str, Markup]
                            optional: Markdown tables by name
    derived_pages(ctx) -> list[Page]
                            optional: pages that exist only with data (one report per model)
    data_files(ctx) -> dict[str, str]
                            optional: files written under docs/data/ (the calculator's fits)
    own_results(results) -> set[str]
                            optional: keys of results only this module shows; the other
                            modules do not see them
    reads_own_results_of    optional: the modules whose own results this one sees all the same

Its templates, in both languages side by side, are `templates/<page>/<file>.<lang>.md.j2`.
A template sees its page's context as `page` (and a Page's `variables` by name), `lang`,
`tables`, `figures`, and every page's context as `site`. Data flows one way: from results
to the page, computed in the page module, printed by the template. Adding a page means
adding a module here and a folder under templates/: nothing else to edit. Pages import only
downward: what two pages share lives below them (site/, plan/, ...), never in one of them.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from generator.results.shapes import StepResult, StudyResult


@dataclass(frozen=True)
class Page:
    """One page of the site in both languages."""

    path: str
    """Where it is written under docs/<lang>/, e.g. `levers.md`; also its nav entry."""
    template: str
    """The template without language and suffix: `levers/levers` reads
    `templates/levers/levers.zh.md.j2` and `….en.md.j2`."""
    nav: int
    """Its place in the nav: lower comes first."""
    section: str | None = None
    """A nav section to group it under (the reports), or None for the top level."""
    variables: dict[str, Any] = field(default_factory=dict, compare=False)
    """Extra template variables, by name."""
    shares_context: tuple[str, ...] | None = None
    """For pages that share one context (the article's four): its data files are those
    behind the context's values the template names, and behind these keys (what its figures
    and tables are drawn from), plus the other pages' contexts it reads through `site`;
    None: every file its context holds."""


def _nothing(ctx: Any, lang: str) -> dict[str, Any]:
    return {}


def _no_pages(ctx: Any) -> list[Page]:
    return []


def _no_files(ctx: Any) -> dict[str, str]:
    return {}


def _no_results(results: list[StepResult]) -> Collection[str]:
    return frozenset()


@dataclass(frozen=True)
class PageModule:
    """What the render reads of a page module: each exports one as PAGE_MODULE, its
    optional parts left at their defaults (nothing)."""

    pages: tuple[Page, ...]
    """Its fixed pages (none: a module whose pages all derive from data)."""
    context: Callable[[list[StepResult], list[StudyResult]], Any]
    """Its data from the results and studies, once for both languages; None without data."""
    figures: Callable[[Any, str], dict[str, str]] = _nothing
    """SVGs by name, in a language."""
    tables: Callable[[Any, str], dict[str, Markup]] = _nothing
    """Markdown tables by name, in a language."""
    derived_pages: Callable[[Any], list[Page]] = _no_pages
    """Pages that exist only with data (one report per model), from a context not None."""
    data_files: Callable[[Any], dict[str, str]] = _no_files
    """Files written under docs/data/, by path, from a context not None."""
    own_results: Callable[[list[StepResult]], Collection[str]] = _no_results
    """Keys of the results only this module shows: the other modules do not see them."""
    reads_own_results_of: tuple[str, ...] = ()
    """Other modules whose own results this one sees all the same."""


def all_pages() -> dict[str, PageModule]:
    """Every page module, by name."""
    return {m.name: importlib.import_module(f"{__name__}.{m.name}").PAGE_MODULE
            for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name)
            if not m.name.startswith("_")}


def pages_of(module: PageModule, ctx: Any) -> list[Page]:
    """The pages a page module writes: its fixed ones and, with data, those it derives."""
    return list(module.pages) + (module.derived_pages(ctx) if ctx is not None else [])
