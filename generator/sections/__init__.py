"""Parts of the site beyond the article, one module each, each with its own page.

A section module provides

    def context(results, studies) -> dict | None    its data for the page; None: no page data
    def figures(ctx, lang) -> dict[str, str]        optional: SVGs by name (prefixed by the
                                                    section's name, so names cannot clash)
    def tables(ctx, lang) -> dict[str, Markup]      optional: Markdown tables by name

and a page template `templates/<lang>/<name>.md.j2` that reads `sections.<name>`. Data flows
one way as everywhere: from results to the page, computed here, printed by the template.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def all_sections() -> list[ModuleType]:
    return [importlib.import_module(f"{__name__}.{m.name}")
            for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name)
            if not m.name.startswith("_")]
