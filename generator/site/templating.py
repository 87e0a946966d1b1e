"""The one Jinja2 environment for pages (Markdown) and diagrams (SVG), and where the
templates are.

The templates live in the project's top-level `templates/` folder; `generator/templates` is a
link to it, so a wheel ships them inside the package and an installed copy renders as a
source checkout does.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jinja2
from jinja2.compiler import CodeGenerator, Frame, optimizeconst
from jinja2.nodes import Concat
from markupsafe import Markup

from generator import gpus, units
from generator.experiment import option_words
from generator.plan.fit import RESERVED_IS_AN_UPPER_BOUND, WORD_TEXT
from generator.results.notes import text as note_text
from generator.site import escaping, offers
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


def _is_xml(template: str | None) -> bool:
    """Whether a template draws SVG (XML) rather than writing a Markdown page."""
    return (template or "").endswith(".svg.j2")


@jinja2.pass_context
def _finalize(context: jinja2.runtime.Context, value: Any) -> Markup:
    """Every `{{ value }}` a template prints passes here before autoescape: the one place
    where text from results enters a page or a drawing, escaped for Markdown (which covers
    HTML too) and, in a drawing, for XML."""
    return escaping.markdown(value, xml=_is_xml(context.name))


def _join(template: str | None, parts: tuple[Any, ...]) -> str | Markup:
    return escaping.join(parts, xml=_is_xml(template))


class _CodeGenerator(CodeGenerator):
    """Jinja's, but a template's `a ~ b` joins with escaping.join: joined to markup (a macro's
    output), text from results would otherwise be escaped for HTML alone."""

    @optimizeconst
    def visit_Concat(self, node: Concat, frame: Frame) -> None:
        self.write("environment.join_escaped(context.name, (")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class _Environment(jinja2.Environment):
    code_generator_class = _CodeGenerator
    join_escaped = staticmethod(_join)


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """Every printed value escaped for Markdown and HTML (escaping.py): model names come from
    users and end up in Markdown pages, in HTML within them and in SVG drawings (numeric
    character references are XML too). StrictUndefined: a missing value is a bug, not an
    empty string."""
    env = _Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        finalize=_finalize,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(mib=units.mib, gib=units.gib, size=units.size, pct=units.pct,
                       pct_figures=units.pct_figures, gb=units.gb, mb=units.mb,
                       code=escaping.code)
    env.globals.update(categories=CATEGORY_LABELS, precisions=PRECISION_LABELS,
                       backends=BACKEND_LABELS, ground_truths=GROUND_TRUTH_LABELS,
                       colors=CATEGORY_COLORS, report_slug=report_slug,
                       options_of=option_words, kind=kind, print_alike=units.print_alike,
                       note_text=note_text,
                       # the one fit rule's words, and what a reserved peak means (plan/fit.py)
                       fit_words=WORD_TEXT, upper_bound=RESERVED_IS_AN_UPPER_BOUND,
                       # what the two ends of a CUDA context range hold (gpus.py)
                       context_ends=gpus.CONTEXT_ENDS,
                       # what the home page says other pages offer, from their contexts
                       calculator_models=offers.calculator_models,
                       scale_strategies=offers.scale_strategies)
    return env
