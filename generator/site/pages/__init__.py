"""The site's pages. Each page is one module (or folder) here, registered the same way:

    PAGES: tuple[Page, ...]                       its pages: file, template, place in the nav
    def context(results, studies) -> dict | None  its data, computed once for both languages
    def figures(ctx, lang) -> dict[str, str]      optional: SVGs by name (prefixed with the
                                                  page's name, so names cannot clash)
    def tables(ctx, lang) -> dict[str, Markup]    optional: Markdown tables by name
    def pages(ctx) -> list[Page]                  optional: pages that exist only with data
                                                  (one report per model)
    def data_files(ctx) -> dict[str, str]         optional: files written under
                                                  docs/<lang>/data/ (the calculator's fits)
    def own_results(results) -> set[str]          optional: keys of results only this module
                                                  shows; the other modules do not see them

Its templates, in both languages side by side, are `templates/<page>/<file>.<lang>.md.j2`.
A template sees its page's context as `page` (and a Page's `variables` by name), `lang`,
`tables`, `figures`, and every page's context as `site`. Data flows one way: from results
to the page, computed in the page module, printed by the template. Adding a page means
adding a module here and a folder under templates/: nothing else to edit.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any


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


def all_pages() -> dict[str, ModuleType]:
    """Every page module, by name."""
    return {m.name: importlib.import_module(f"{__name__}.{m.name}")
            for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name)
            if not m.name.startswith("_")}


def pages_of(module: ModuleType, ctx: Any) -> list[Page]:
    """The pages a page module writes: its fixed ones and, with data, those it derives."""
    derived = module.pages(ctx) if hasattr(module, "pages") and ctx is not None else []
    return list(getattr(module, "PAGES", ())) + derived
