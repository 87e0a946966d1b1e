"""Pages rendered from the committed results (hundreds of files, every page module): every page
ends with the JSON files its numbers come from, and the methodology page labels each CPU check
apart. Slow: they load and render the whole results tree."""

from __future__ import annotations

import re

import pytest
from conftest import LANGS
from markupsafe import Markup
from page_checks import committed_contexts, page_markdown

from generator.site import figures
from generator.site.pages import all_pages, article, pages_of
from generator.site.render import render_page


def test_every_page_ends_with_its_data() -> None:
    """Rendered from the committed results: every page of every module, in both languages,
    has the section; the pages that print measured numbers link files, studies among them."""
    _, contexts = committed_contexts()
    linked = set()
    for name, module in all_pages().items():
        ctx = contexts[name]
        for page in pages_of(module, ctx):
            if name in ("reports", "article") and page.path not in ("reports/index.md",
                                                                    "claims.md"):
                continue  # their figures take long to draw; the reports' tests cover them
            for lang in LANGS:
                text = render_page(page, lang, context=ctx, tables=_AnyTable(),
                                   figures=_NoFigure(), site={})
                data = text[text.index("{ #data }"):]
                links = re.findall(r"\]\(((?:\.\./)+data/[^)]+\.json)\)", data)
                linked.update(links)
                assert links or "没有自己的结果" in data or "no results of its own" in data, (page.path, lang)
    assert any("/studies/" in link for link in linked), linked
    # the data folder is the language folders' sibling: one copy for both languages
    assert any(link.startswith("../data/estimate/") for link in linked), linked


class _AnyTable(dict):
    def __contains__(self, name: object) -> bool:
        return True

    def __getitem__(self, name: str) -> str:
        return ""


class _NoFigure(dict):
    """Every figure is there, blank: its drawing is not what this test is about."""

    def __contains__(self, name: object) -> bool:
        return True

    def __getitem__(self, name: str) -> figures.FigureView:
        return figures.FigureView(svg=Markup(""), title="-", desc="-", width=1, height=1)


@pytest.mark.parametrize("lang", LANGS)
def test_each_cpu_check_on_the_methodology_page_has_its_own_label(lang: str) -> None:
    """The batch-1 CPU runs differ only in their step options (checkpointing, the optimizer's
    kernels): each row of the accuracy table names them, so no two rows read alike."""
    page = page_markdown(article, committed_contexts()[1]["article"], lang, "methodology.md")
    cpu_word = {"en": "measured on the CPU", "zh": "CPU 实测"}[lang]
    labels = [line.split(" | ")[0] for line in page.splitlines()
              if line.startswith("| ") and cpu_word in line.split(" | ")[0]]
    assert len(labels) >= 3
    assert len(labels) == len(set(labels)), labels




def test_the_sweeps_largest_batch_is_the_calculators_and_the_estimates() -> None:
    """One question, one answer: the sweeps page's largest batch of bert-base at sequence 128
    is the calculator widget's (the same replay, the same search) for every GPU of its table,
    and an estimate for the smallest GPU at that batch and the next needs what the replay
    says, and fits there and not beyond."""
    import generator
    from generator import gpus
    from generator.plan.predictor import verdicts

    contexts = committed_contexts()[1]
    ctx, widget = contexts["sweeps"], contexts["calculator"]
    group = next(g for g in ctx["batch"] if g["model"] == "bert-base" and g["seq_len"] == 128)
    answer = group["series"]["fp32"]["largest"]
    fit = next(f for f in widget["fits"] if (f["model"], f["precision"], f["levers"]) ==
               ("bert-base", "fp32", "none"))
    for row in answer:
        gpu = verdicts.gpu_entry(gpus.find(row.gpu))
        assert row.method == "replay" and not row.disagreements
        assert row.batch == verdicts.largest_batch(fit, gpu, 128, widget["replays"]), row.gpu
    smallest = answer[0]
    for batch, fits in ((smallest.batch, True), (smallest.batch + 1, False)):
        step = generator.estimate("bert-base", batch_size=batch, seq_len=128, gpu=smallest.gpu)
        verdict = step.fits(smallest.gpu)
        assert verdict.fits is fits, (batch, verdict)
        if fits:
            assert verdict.needed_bytes == smallest.needed_bytes
