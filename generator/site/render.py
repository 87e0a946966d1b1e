"""Render the site from results: figures, data files and Markdown pages under docs/.

Top to bottom: read the results and studies → each page module computes its data once
(pages/) → per language, its figures and tables → its templates, which only print.
docs/zh/, docs/en/ (each language's pages and figures), docs/data/ (the JSON behind them,
once for both languages: the i18n plugin serves files outside the language folders to both)
and docs/.nav.yml (the nav, which the hand-written mkdocs.yml INHERITs) are generated and owned
by this module: files it did not write in this run are removed, so nothing lingers without
data. It writes no hand-written file, and only into a docs folder that is new, empty or marked
as its own (owned.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from markupsafe import Markup

from generator import results
from generator.errors import OutputError, ResultsError
from generator.files import write_atomic
from generator.results.shapes import StepResult, StudyResult
from generator.site import figures as figure_views
from generator.site import sources
from generator.site.figures import FigureView
from generator.site.glossary_links import link_first_uses
from generator.site.owned import PAGES, check_folder, claim_folder
from generator.site.pages import Page, PageModule, all_pages, pages_of
from generator.site.templating import environment, template_text
from generator.site.wording import chinese_spaced
from generator.words import LANGS

#: The data files, once for both languages, under the docs folder: the project's results
#: (RESULTS_DIR is this folder of docs/) and what the pages derive from them.
DATA = "data"
#: The results a render copied in from another results folder, one path a line (hidden: mkdocs
#: neither publishes nor cleans it): the copies the next render may remove.
PUBLISHED = ".published"
#: The nav, generated; mkdocs.yml takes it with `INHERIT: docs/.nav.yml` (a dotfile, which
#: mkdocs does not publish).
NAV = ".nav.yml"


def render(results_dir: Path, docs_dir: Path) -> list[Path]:
    """Render every page, figure and data file from the results present, and the nav;
    returns the files written."""
    docs_dir = Path(docs_dir)
    check_folder(docs_dir, PAGES)
    found, found_studies = read_results(results_dir)
    every, studies = [r for _, r in found], [s for _, s in found_studies]
    modules = all_pages()
    owned = {name: set(module.own_results(every)) for name, module in modules.items()}
    contexts = {name: module.context(_seen_by(name, module, owned, every), studies)
                for name, module in modules.items()}
    pages = sorted(((name, page) for name, module in modules.items()
                    for page in pages_of(module, contexts[name])),
                   key=lambda item: (item[1].section is not None, item[1].nav))
    data = docs_dir / DATA
    claim_folder(docs_dir, PAGES)
    published = _published(data)
    linked, copied = _copy_data(found, data, "", published)
    more_linked, more_copied = _copy_data(found_studies, data, "studies", published)
    written: list[Path] = linked + more_linked
    copied += more_copied
    for name, module in modules.items():
        if contexts[name] is not None:
            written += [write_text_atomic(data / file, text)
                        for file, text in sorted(module.data_files(contexts[name]).items())]
    _prune(data, set(written), stored=set(results.stored_files(data)) - published)
    write_text_atomic(data / PUBLISHED, "".join(
        f"{p.relative_to(data).as_posix()}\n" for p in sorted(copied)))
    for lang in LANGS:
        root = docs_dir / lang
        figures: dict[str, str] = {}
        tables: dict[str, Markup] = {}
        for name, module in modules.items():
            if contexts[name] is not None:
                figures.update(module.figures(contexts[name], lang))
                tables.update(module.tables(contexts[name], lang))
        for name, svg in sorted(figures.items()):
            written.append(write_text_atomic(root / "figures" / f"{name}.svg",
                                             figure_views.standalone(svg)))
        shown = figure_views.views(figures)  # once per language
        for name, page in pages:
            text = render_page(page, lang, context=contexts[name], tables=tables,
                               figures=shown, site=contexts)
            written.append(write_text_atomic(root / page.path, text))
        _prune(root, set(written))
    written.append(write_nav(docs_dir / NAV, [page for _, page in pages]))
    return written


def _seen_by(name: str, module: PageModule, owned: dict[str, set[str]],
             every: list[StepResult]) -> list[StepResult]:
    """The results a page module sees: all but those another module owns (`owned`, each
    module's `own_results`: the calculator's fitting grid would otherwise fill the reports),
    unless the module names that other module in its `reads_own_results_of` (the sweeps page
    asks the calculator what a step needs between its points, and keeps the grid out of its
    sweeps itself)."""
    reads = set(module.reads_own_results_of)
    hidden = set().union(*(keys for other, keys in owned.items()
                           if other != name and other not in reads))
    return [r for r in every if r["key"] not in hidden]


def render_page(page: Page, lang: str, *, context: Any, tables: dict[str, Markup],
                figures: dict[str, FigureView], site: dict[str, Any]) -> str:
    """One page in one language: its template, given its page's context as `page` (and the
    Page's variables by name), the language, every table and figure (figures.FigureView: the
    file to load, or the SVG to inline) of that language, and every page's context as `site`."""
    template = environment().get_template(f"{page.template}.{lang}.md.j2")
    text = template.render(lang=lang, tables=tables, site=site, page=context, figures=figures,
                           **page.variables)
    if lang == "zh":  # however a sentence or cell was joined, spaced as the site writes Chinese
        text = chinese_spaced(text)
    if page.path != "glossary.md":
        text = link_first_uses(text, lang, page.path)
    # Every page ends with the data files its numbers come from (or says it has none), from
    # one macro: no template lists them by hand.
    section = environment().get_template("macros.md.j2").module.data_files(
        sources.data_files(page, context, site=site, sources=[
            template_text(f"{page.template}.{other}.md.j2") for other in LANGS]),
        lang, "../" * page.path.count("/"))
    return text.rstrip("\n") + "\n\n" + str(section).strip("\n") + "\n"


def read_results(results_dir: Path
                 ) -> tuple[list[tuple[Path, StepResult]], list[tuple[Path, StudyResult]]]:
    """Every step result and every study result, each with its file; a results folder that
    does not exist or holds nothing is a mistake (a typo), refused before anything is written."""
    folder = Path(results_dir)
    if not folder.is_dir():
        raise ResultsError(f"no results folder {folder}; measure first "
                           "(python -m generator measure) or give --results FOLDER")
    found, studies = results.load_all_with_paths(folder), results.load_studies_with_paths(folder)
    if not found and not studies:
        raise ResultsError(f"{folder} holds no result (no <machine>/<experiment>.json and no "
                           "studies/<machine>/<study>.json); measure first or give --results FOLDER")
    return found, studies


def _copy_data(found: list[tuple[Path, dict[str, Any]]], data: Path, folder: str,
               published: set[Path]) -> tuple[list[Path], list[Path]]:
    """Publish each result's (or study's) JSON under `folder` of the data folder, where the
    pages that cite it link it (from a language's root: the data folder is its sibling);
    returns where each is published, and which of those are copies. The project's own results
    live there already (RESULTS_DIR): those are linked where they are, not copied. A copy never
    replaces a stored result that render did not publish (`published`: its copies of the last
    render)."""
    linked, copies = [], []
    for path, result in found:
        target = data / folder / path.parent.name / path.name
        result["json_path"] = "/".join(part for part in ("..", DATA, folder, path.parent.name,
                                                          path.name) if part)
        linked.append(target)
        if target.exists() and target.samefile(path):
            continue
        unchanged = target.exists() and target.read_bytes() == path.read_bytes()
        if target.exists() and not unchanged and target not in published:
            raise OutputError(f"{target} is a stored result, not one render published; "
                              f"render from the folder that holds it, or into another docs "
                              f"folder")
        if not unchanged:
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
            except OSError as error:
                raise OutputError(f"cannot write pages to {target.parent}: "
                                  f"{error.strerror or error}") from None
        copies.append(target)
    return linked, copies


def _published(data: Path) -> set[Path]:
    """The results the last render copied into the data folder (its PUBLISHED list)."""
    try:
        lines = (data / PUBLISHED).read_text(encoding="utf-8").splitlines()
    except OSError:
        return set()
    return {data / line for line in lines if line and ".." not in Path(line).parts}


def write_nav(path: Path, pages: list[Page]) -> Path:
    """The nav of the pages written, grouped in sections, as the file mkdocs.yml inherits."""
    lines = ["# Generated by python -m generator render: the pages written, in order. mkdocs.yml",
             "# takes it with INHERIT; edit the pages' modules (their Page's nav), not this file.",
             "nav:"] + [f"  - {page.path}" for page in pages if page.section is None]
    for section in dict.fromkeys(page.section for page in pages if page.section):
        lines += [f"  - {section}:"] + [f"      - {page.path}" for page in pages
                                         if page.section == section]
    return write_text_atomic(path, "\n".join(lines) + "\n")


def _prune(root: Path, keep: set[Path], stored: set[Path] = frozenset()) -> None:
    """Remove generated files of an earlier run that this run did not write; never a stored
    result (`stored`) nor a hidden file (the markers)."""
    if not root.exists():
        return
    for path in sorted(root.rglob("*"), reverse=True):
        if path.is_file() and path not in keep and path not in stored and \
                not path.name.startswith("."):
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def write_text_atomic(path: Path, text: str) -> Path:
    """A page, figure or nav written whole or not at all (files.write_atomic)."""
    return write_atomic(path, text, what="pages")
