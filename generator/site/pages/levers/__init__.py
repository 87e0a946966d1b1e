"""The levers page: what each memory lever beyond AMP saves on the article's example, which
category it acts on, and what it costs in step time. Its rows are the levers measured
(site/lever_results/, which the article's pages rank as well); this module draws and
tabulates them.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from generator.site.lever_results import context
from generator.site.pages import Page, PageModule
from generator.site.pages.levers import charts as lever_charts
from generator.site.pages.levers import tables as lever_tables

PAGES = (Page("levers.md", "levers/levers", nav=30),)


def figures(ctx: dict[str, Any], lang: str) -> dict[str, str]:
    return {"levers-peaks": lever_charts.peaks(ctx, lang)}


def tables(ctx: dict[str, Any], lang: str) -> dict[str, Markup]:
    names, by_reserved = ctx["names"], ctx["by_reserved"]
    found = {"levers-ranking": lever_tables.ranking(ctx["shown"], names, lang, by_reserved),
             "levers-other-training": lever_tables.ranking(ctx["other_training"], names, lang,
                                                           by_reserved, ranked=False),
             "levers-costs": lever_tables.costs(ctx["costs"], names, lang)}
    if ctx["combos"]:
        found["levers-combos"] = lever_tables.combos(ctx["combos"], names, lang, by_reserved)
    return found


PAGE_MODULE = PageModule(PAGES, context, figures=figures, tables=tables)
