"""Render pages from results: Jinja2 templates under templates/ → Markdown under docs/."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import jinja2

from . import analysis, results
from .errors import OutputError
from .labels import BACKEND_LABELS, CATEGORY_LABELS, PRECISION_LABELS

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
#: The article's example, the configuration every headline number is about.
ARTICLE = {"model": "bert-base", "batch_size": 32, "seq_len": 128, "optimizer": "adamw"}


def mib(nbytes: float | None) -> str:
    """Bytes → MiB with a thousands separator (1 MiB = 2²⁰ bytes)."""
    return "–" if nbytes is None else f"{nbytes / 2**20:,.1f}"


def gib(nbytes: float | None) -> str:
    return "–" if nbytes is None else f"{nbytes / 2**30:,.2f}"


def pct(fraction: float | None, digits: int = 1) -> str:
    return "–" if fraction is None else f"{fraction * 100:.{digits}f} %"


def signed_pct(fraction: float | None, digits: int = 2) -> str:
    return "–" if fraction is None else f"{fraction * 100:+.{digits}f} %"


def environment(templates: Path = TEMPLATES) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        autoescape=True,  # every text that reaches a page (model names too) is escaped
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(mib=mib, gib=gib, pct=pct, signed_pct=signed_pct)
    env.globals.update(categories=CATEGORY_LABELS, precisions=PRECISION_LABELS,
                       backends=BACKEND_LABELS)
    return env


def page_context(all_results: list[dict[str, Any]]) -> dict[str, Any]:
    """Everything the first page shows, computed here and not in the template."""
    article = analysis.best_by_precision(all_results, **ARTICLE)
    fp32 = article.get("fp32")
    return {
        "article": ARTICLE,
        "article_results": article,
        "fp32": fp32,
        "fp32_shares": analysis.shares(fp32) if fp32 else None,
        "comparison": analysis.precision_comparison(article) if article else None,
        "accuracy": analysis.estimate_accuracy(all_results),
        "result_count": len(all_results),
        "failed": [r for r in all_results if r.get("error")],
    }


def render(results_dir: Path, docs_dir: Path) -> list[Path]:
    """Render every page from the results present; returns the files written."""
    context = page_context(results.load_all(results_dir))
    env = environment()
    written = []
    for name in ("index.md",):
        text = env.get_template(f"{name}.j2").render(**context)
        target = Path(docs_dir) / name
        write_text_atomic(target, text)
        written.append(target)
    return written


def write_text_atomic(path: Path, text: str) -> None:
    """Write whole or not at all; skip the write when nothing changed (keeps mtimes stable)."""
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:
        raise OutputError(f"cannot write pages to {path.parent}: {error.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
