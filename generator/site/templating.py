"""The one Jinja2 environment for pages (Markdown) and diagrams (SVG), and where the
templates are.

The templates live in the project's top-level `templates/` folder; `generator/templates` is a
link to it, so a wheel ships them inside the package and an installed copy renders as a
source checkout does.
"""

from __future__ import annotations

import functools
from pathlib import Path

import jinja2

from generator import units
from generator.experiment import option_words
from generator.plan.fit import RESERVED_IS_AN_UPPER_BOUND, WORD_TEXT
from generator.results.notes import text as note_text
from generator.site.labels import (
    BACKEND_LABELS,
    CATEGORY_LABELS,
    GROUND_TRUTH_LABELS,
    PRECISION_LABELS,
    kind,
)
from generator.site.pages.reports import report_slug
from generator.site.palette import CATEGORY_COLORS

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def template_text(name: str) -> str:
    """A file under templates/ as text (a code snippet the pages show)."""
    return (TEMPLATES / name).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """Autoescape on for every template: model names come from users and end up in HTML and
    SVG. StrictUndefined: a missing value is a bug, not an empty string."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(mib=units.mib, gib=units.gib, size=units.size, pct=units.pct,
                       pct_figures=units.pct_figures, gb=units.gb, mb=units.mb)
    env.globals.update(categories=CATEGORY_LABELS, precisions=PRECISION_LABELS,
                       backends=BACKEND_LABELS, ground_truths=GROUND_TRUTH_LABELS,
                       colors=CATEGORY_COLORS, report_slug=report_slug,
                       options_of=option_words, kind=kind, print_alike=units.print_alike,
                       note_text=note_text,
                       # the one fit rule's words, and what a reserved peak means (plan/fit.py)
                       fit_words=WORD_TEXT, upper_bound=RESERVED_IS_AN_UPPER_BOUND)
    return env
