"""Every number on the site is one of three kinds and says which where it stands: estimated
(fake tensors modelling a device; 估算), measured on the CPU (CPU 实测) or measured on a GPU
(GPU 实测). No page calls an estimate "measured" (实测, 测出来); instructions for whoever
runs the tool stand on the methodology page only. The pages are rendered here from the
committed results/ as `python -m generator render` renders them, and also from no results at
all (every page's "nothing yet" wording)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from conftest import LANGS, REPO_ROOT
from markupsafe import Markup
from page_checks import committed_contexts, contexts, prose, svg_texts

from generator.gpus import CATALOGUE
from generator.results.reference_runs import held_out_sources, multi_gpu_held_out
from generator.site import figures as figure_views
from generator.site.figures import FigureView
from generator.site.labels import BACKEND_LABELS
from generator.site.pages import PageModule, all_pages, pages_of
from generator.site.held_out import gpu_name
from generator.site.render import render_page
from generator.site.labels import kind

#: Where a word of measurement is honest: it names the CPU or a GPU.
ALLOWED = ("CPU 实测", "GPU 实测", "measured on the CPU", "measured on a GPU")
#: A word of measurement anywhere else.
FORBIDDEN = re.compile(r"实测|测出来|measured", re.I)
#: Pages passed over: none (the accuracy page names its GPU measurements "GPU 实测" too).
EXEMPT: set[str] = set()
#: Instructions to whoever runs the tool; only the methodology page may give them.
MAINTAINER = re.compile(r"本机|this machine|on a machine with|在有 (CUDA )?GPU 的机器上")


#: A figure of the report pages, not drawn (a report page's charts take seconds each).
_BLANK = FigureView(svg=Markup(""), title="-", desc="-", width=1, height=1)


class _AnyFigure(dict):
    """Figures of the report pages: every name is there, and blank."""

    def __contains__(self, name: object) -> bool:
        return True

    def __getitem__(self, name: str) -> FigureView:
        return _BLANK


def _site(page_contexts: dict[str, Any]
          ) -> tuple[list[tuple[str, str, str, str]], list[tuple[str, str, str, str]]]:
    """(module, page path, language, Markdown) of every page, rendered as render.render
    renders them from each module's context: every table and figure of the language, and
    every page's context as `site`; and (module, figure, language, SVG) of every figure but
    the reports'."""
    modules = all_pages()
    found, drawn = [], []
    for lang in LANGS:
        tables: dict[str, Markup] = {}
        figures: dict[str, str] = {}
        for name, module in modules.items():
            ctx = page_contexts[name]
            if ctx is None:
                continue
            tables.update(module.tables(ctx, lang))
            if name != "reports":
                own = module.figures(ctx, lang)
                drawn += [(name, figure, lang, svg) for figure, svg in own.items()]
                figures.update(own)
        for name, module in modules.items():
            for page in pages_of(module, page_contexts[name]):
                shown = _AnyFigure() if name == "reports" else figure_views.views(figures)
                text = render_page(page, lang, context=page_contexts[name], tables=tables,
                                   figures=shown, site=page_contexts)
                found.append((name, page.path, lang, text))
    return found, drawn


@pytest.fixture(scope="module")
def committed_site() -> tuple[list[tuple[str, str, str, str]], list[tuple[str, str, str, str]]]:
    return _site(committed_contexts()[1])


@pytest.fixture(scope="module")
def committed(committed_site) -> list[tuple[str, str, str, str]]:
    return committed_site[0]


@pytest.fixture(scope="module")
def empty() -> list[tuple[str, str, str, str]]:
    return _site(contexts([], []))[0]


def _claims_measurement(text: str) -> list[str]:
    """Each word of measurement in `text` that names neither the CPU nor a GPU, in context
    (the text as the page prints it: an allowed phrase nearby is not cut out of the context,
    which would show an empty "（）" where the page says "（CPU 实测）")."""
    text = re.sub(r"<[^>]+>", "", text)  # tags and their attributes (class="verdict-not_measured")
    allowed = [m.span() for phrase in ALLOWED
               for m in re.finditer(re.escape(phrase), text, flags=re.I)]
    return [text[max(0, m.start() - 40):m.end() + 40].replace("\n", " ")
            for m in FORBIDDEN.finditer(text)
            if not any(start <= m.start() and m.end() <= end for start, end in allowed)]


def _pages(site: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str, str]]:
    return [p for p in site if p[0] not in EXEMPT]


def test_the_committed_results_make_every_page(committed) -> None:
    # Modules without pages write none.
    paged = {name for name, module in all_pages().items()
             if module.pages or module.derived_pages is not PageModule.derived_pages}
    assert {name for name, *_ in committed} == paged
    assert {(name, lang) for name, _, lang, _ in committed} == \
        {(name, lang) for name in paged for lang in LANGS}


def test_no_page_calls_an_estimate_measured(committed, empty) -> None:
    wrong = {}
    for name, path, lang, text in _pages(committed + empty):
        for line in prose(text).splitlines():
            if hits := _claims_measurement(line):
                wrong.setdefault((name, path, lang), []).extend(hits)
    assert not wrong, wrong


def test_no_chart_calls_an_estimate_measured(committed_site) -> None:
    """What a chart draws, and its title and description (an image's alt text and caption)."""
    drawn = committed_site[1]
    assert len(drawn) > 10, "no chart drawn: the check would check nothing"
    for name, figure, lang, svg in drawn:
        view = figure_views.view(svg)
        words = " ".join([*svg_texts(svg), view.title, view.desc])
        assert not _claims_measurement(words), (name, figure, lang, words)


def test_instructions_for_the_maintainer_stand_on_the_methodology_page_only(
        committed, empty) -> None:
    for name, path, lang, text in _pages(committed + empty):
        if path == "methodology.md":
            continue
        body = re.sub(r"```.*?```", "", prose(text), flags=re.S)  # the home page's commands
        assert not MAINTAINER.search(body), (name, path, lang, MAINTAINER.search(body))
        assert "generator build" not in body, (name, path, lang)
    # and there once: where no GPU measurement is published
    instructions = [text.count("generator build`") for name, path, lang, text in empty
                    if path == "methodology.md"]
    assert instructions == [1, 1]


def test_the_estimate_pages_say_they_are_estimates(committed) -> None:
    """The article's example is an estimate in the committed results: the pages that show
    it say so, in both languages, where its numbers stand."""
    pages = {(path, lang): text for name, path, lang, text in committed if name == "article"}
    for path in ("index.md", "explainer.md", "claims.md"):
        assert "估算（模拟 CUDA）" in pages[path, "zh"], path
        assert "estimated (modelling CUDA)" in pages[path, "en"], path
    assert "实测的答案" not in pages["index.md", "zh"]
    assert "The measured answer" not in pages["index.md", "en"]


def test_kind_names_the_device_or_the_gpu() -> None:
    estimate = {"backend": "estimate", "experiment": {"device": "cuda"}}
    assert kind(estimate, "en") == "estimated (modelling CUDA)"
    assert kind(estimate, "zh") == "估算（模拟 CUDA）"
    as_cpu = {"backend": "estimate", "experiment": {"device": "cpu"}}
    assert kind(as_cpu, "en") == "estimated (modelling the CPU)"
    assert kind(as_cpu, "zh") == "估算（模拟 CPU）"
    cpu = {"backend": "cpu", "experiment": {"device": "cpu"}, "environment": {"device_name": None}}
    assert kind(cpu, "en") == "measured on the CPU" and kind(cpu, "zh") == "CPU 实测"
    gpu = {"backend": "cuda", "experiment": {"device": "cuda"},
           "environment": {"device_name": "NVIDIA H100 80GB HBM3"}}
    assert kind(gpu, "en") == "measured on a GPU (NVIDIA H100 80GB HBM3)"
    assert kind(gpu, "zh") == "GPU 实测（NVIDIA H100 80GB HBM3）"
    # a page's summary of results: the sweeps' groups, the levers' step times
    assert kind({"backend": "estimate", "device": "cuda"}, "en") == "estimated (modelling CUDA)"
    assert kind({"backend": "cuda", "machine": "A100"}, "zh") == "GPU 实测（A100）"
    assert kind({"backend": "cuda", "device_name": None, "machine": "m"}, "en") == \
        "measured on a GPU (m)"
    assert kind({"backend": "cuda"}, "en") == "measured on a GPU"
    assert kind({"backend": "estimate"}, "zh") == "估算"


def test_backend_labels_never_call_an_estimate_measured() -> None:
    assert BACKEND_LABELS["cuda"] == ("measured on a GPU", "GPU 实测")
    assert BACKEND_LABELS["cpu"] == ("measured on the CPU", "CPU 实测")
    assert not FORBIDDEN.search(" ".join(BACKEND_LABELS["estimate"]))


def test_labels_of_tables_and_charts_name_no_measurement() -> None:
    """Column and legend labels serve figures of any kind: none calls them measured."""
    import importlib

    labels = []
    for name, table in (("sweeps.tables", "_TEXT"), ("sweeps.charts", "_WORDS"),
                        ("scale.tables", "TEXT"), ("accuracy.tables", "_TEXT"),
                        ("accuracy.charts", "_WORDS")):
        module = importlib.import_module(f"generator.site.pages.{name}")
        labels += list(getattr(module, table).values())
    assert not [w for w in labels if _claims_measurement(" ".join(w))]


def test_site_description_claims_no_measurement() -> None:
    config = (REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    descriptions = re.findall(r"^\s*site_description:\s*(.+)$", config, flags=re.M)
    assert len(descriptions) == 2  # Chinese, and the English build's
    for text in descriptions:
        assert not re.search(r"实测|测出|测量|measur", text, flags=re.I), text


#: A run of four or more English words separated by spaces: prose left in English.
LATIN_RUN = re.compile(r"[A-Za-z]{2,}(?:[,.:;]?\s+[A-Za-z]{2,}){3,}")


def _chinese_prose(page: str) -> str:
    """A Chinese page's own sentences: without code (fenced or inline), HTML and SVG, link
    targets, maths, attribute lists, and titles quoted in 《》 (a paper's own title)."""
    for pattern in (r"```.*?```", r"<(svg|figure|script|style)\b.*?</\1>", r"<[^>]+>",
                    r"`[^`\n]*`", r"\]\([^)\s]*\)", r"\$[^$\n]*\$", r"\{[:.#][^}]*\}",
                    r"《[^》]*》"):
        page = re.sub(pattern, " ", page, flags=re.S)
    return page


def test_chinese_pages_leave_no_prose_in_english(committed) -> None:
    found = [(path, m.group(0)) for _, path, lang, text in committed if lang == "zh"
             for m in LATIN_RUN.finditer(_chinese_prose(text))]
    assert not found, found[:10]


def test_every_note_of_the_committed_results_is_data_in_both_languages() -> None:
    """Each note of the committed results is an identifier of the catalogue (results/notes.py),
    not prose: its words exist in both languages."""
    from generator.results.notes import CATALOGUE, text

    results, studies = committed_contexts()[0]
    notes = [note for result in results for note in result.get("notes") or []]
    notes += [note for study in studies for note in study["data"].get("notes") or []]
    assert notes
    assert not [n for n in notes if not isinstance(n, dict) or n["id"] not in CATALOGUE]
    assert all(text(n, "zh") != text(n, "en") for n in notes if n["values"] == {})


#: A figure in decimal units, with what stands just before it.
DECIMAL = re.compile(r"(.{0,16}?)\b\d[\d.,]*\s?(?:GB|MB)\b")
#: Where the site may quote the article's decimal units: the pages that check its claims.
QUOTING = {"index.md", "explainer.md", "claims.md"}
#: A quote of the article ("about 12 GB", "约 12 GB", "it puts them at 12 GB", "说…有 12 GB"),
#: or our binary figure converted beside it ("5.64 GiB (6.05 GB)", "208.1 MiB, that is 218 MB").
QUOTE = re.compile(r"(?:about|约|at|有) ?$")
BESIDE = re.compile(r"(?:GiB|MiB) ?[（(]$|(?:GiB|MiB)(?:, that is|，即) ?$")


def test_decimal_units_only_quote_the_article_or_stand_beside_our_binary_figure(
        committed) -> None:
    """One rule for units: binary wherever the site measures; the article's decimal GB/MB
    only where it is quoted, and ours converted once beside it on the pages that check it."""
    wrong = []
    for _, path, _, text in committed:
        text = re.sub(r"`[^`\n]*`|<[^>]+>", "", prose(text))
        text = text.replace("1 GB = ", "")  # the claims page's statement of the two units
        # a GPU's name is a name ("H100 80GB HBM3"), not a figure; the longest first ("A10"
        # is the start of "A100-SXM4-40GB")
        names = {n for g in CATALOGUE for n in (g.name, g.short_name)}
        names |= {n for s in held_out_sources() for n in (s.gpu, gpu_name(s))}  # theirs too
        names |= {n for p in multi_gpu_held_out() for n in (p.gpu, p.gpu.removeprefix("NVIDIA "))}
        for name in sorted(names, key=len, reverse=True):
            text = text.replace(name, "")
        for found in DECIMAL.finditer(text):
            before = found.group(1)
            if path not in QUOTING or not (QUOTE.search(before) or BESIDE.search(before)):
                wrong.append((path, found.group(0)))
    assert not wrong, wrong[:10]
