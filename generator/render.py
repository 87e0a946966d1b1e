"""Render the site's pages from results: figures and Markdown under docs/<lang>/.

Data flows one way: results → analysis (figures computed once, here) → templates, which
only print. Everything under docs/zh/ and docs/en/ is generated and owned by this module:
files it did not write in this run are removed, so a page or figure that no longer has data
does not linger.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from markupsafe import Markup

from . import analysis, results, tables
from .errors import OutputError
from .figures import article_figures
from .templating import environment

LANGS = ("zh", "en")
PAGES = ("index.md",)
#: The article's example, the configuration every headline number is about.
ARTICLE = {"model": "bert-base", "batch_size": 32, "seq_len": 128, "optimizer": "adamw"}


def site_data(all_results: list[dict[str, Any]]) -> dict[str, Any]:
    """Every derived figure the pages show, computed once for both languages."""
    article = analysis.best_by_precision(all_results, **ARTICLE)
    return {
        "article": ARTICLE,
        "article_results": article,
        "fp32": article.get("fp32"),
        "formula": {p: analysis.formula_check(r) for p, r in article.items()},
        "accuracy": analysis.estimate_accuracy(all_results),
        "result_count": len(all_results),
        "failed": [r for r in all_results if r.get("error")],
    }


def page_tables(data: dict[str, Any], lang: str) -> dict[str, Markup]:
    article, fp32 = data["article_results"], data["fp32"]
    found: dict[str, Markup] = {}
    if fp32:
        found["fp32_breakdown"] = tables.breakdown(fp32, lang)
    for precision, result in article.items():
        found[f"breakdown-{precision}"] = tables.breakdown(result, lang)
    if article:
        found["precisions_live"] = tables.precisions(article, lang, "live")
        found["precisions_max"] = tables.precisions(article, lang, "max")
    return found


def render(results_dir: Path, docs_dir: Path) -> list[Path]:
    """Render every page and figure from the results present; returns the files written."""
    data = site_data(results.load_all(results_dir))
    env = environment()
    written: list[Path] = []
    for lang in LANGS:
        root = Path(docs_dir) / lang
        figures = article_figures(data["article_results"], lang)
        for name, svg in sorted(figures.items()):
            written.append(write_text_atomic(root / "figures" / f"{name}.svg", svg))
        context = {**data, "lang": lang, "tables": page_tables(data, lang),
                   "figures": {name: Markup(svg) for name, svg in figures.items()}}
        for page in PAGES:
            text = env.get_template(f"{lang}/{page}.j2").render(**context)
            written.append(write_text_atomic(root / page, text))
        _prune(root, set(written))
    return written


def _prune(root: Path, keep: set[Path]) -> None:
    """Remove generated files of an earlier run that this run did not write."""
    for path in sorted(root.rglob("*"), reverse=True):
        if path.is_file() and path not in keep:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def write_text_atomic(path: Path, text: str) -> Path:
    """Write whole or not at all; skip the write when nothing changed (keeps mtimes stable)."""
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return path
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
    return path
