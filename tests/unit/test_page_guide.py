"""The user guide: it renders in both languages with and without results, sits right after
the calculator in the nav, shows every command in both languages, states the verdict's words
as plan/fit.py decides them, links only to pages that exist without results, and types no
figure in its prose (what it quotes of the code comes through its context)."""

from __future__ import annotations

import re

import pytest
from conftest import LANGS
from page_checks import page_markdown

from generator.plan.fit import DOES_NOT_FIT
from generator.plan.fit import WORD_TEXT, WORDS
from generator.site.pages import all_pages, guide, pages_of

#: The sub-commands the guide explains, each under its own heading or beside it.
COMMANDS = ("estimate", "run", "measure", "render", "site", "build", "validate", "models", "gpus")
#: Names with a digit in them: the only digits the prose may hold besides the context's.
NAMED_DIGITS = re.compile(r"\b(?:H100|FP32|fp16|bf16|FSDP2|fsdp2)\b")
LINK = re.compile(r"\]\(([^)#]*)(#[^)]*)?\)")


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return {lang: page_markdown(guide, guide.context([], []), lang) for lang in LANGS}


def test_it_needs_no_results_and_comes_right_after_the_calculator() -> None:
    assert guide.context([], []) == guide.context([{"any": "result"}], [{"any": "study"}])
    ctx = {name: module.context([], []) for name, module in all_pages().items()}
    nav = sorted((p.nav, p.path) for name, module in all_pages().items()
                 for p in pages_of(module, ctx[name]) if p.section is None)
    paths = [path for _, path in nav]
    assert paths[paths.index("calculator.md") + 1] == "guide.md"
    assert [n for n, _ in nav].count(guide.PAGES[0].nav) == 1, "another page shares its place"


def test_both_languages_show_every_command_and_the_same_blocks(pages) -> None:
    blocks = {lang: re.findall(r"^```(\w+)$", text, re.M) for lang, text in pages.items()}
    assert blocks["zh"] == blocks["en"]
    for lang, text in pages.items():
        assert text.startswith("# "), lang
        for command in COMMANDS:
            assert f"python -m generator {command}" in text, (lang, command)
        for flag in ("--gpu", "--gpu-memory", "--largest-batch", "--levers", "--gpus",
                     "--parallel", "--fewest-gpus", "--json", "[[grid]]", "[sizes]",
                     "generator.simulated_gpu(", "generator.track(", "generator.estimate("):
            assert flag in text, (lang, flag)


def test_the_verdict_words_are_the_rules(pages) -> None:
    for lang, text in pages.items():
        assert f"`{DOES_NOT_FIT}`" in text, lang  # the exit status of a step that falls short
        for word in WORDS:
            assert f"`{word}`（{WORD_TEXT[word].zh}）" in text if lang == "zh" else \
                f"`{word}` ({WORD_TEXT[word].en})" in text, (lang, word)


def test_links_reach_pages_that_exist_without_results(pages) -> None:
    ctx = {name: module.context([], []) for name, module in all_pages().items()}
    exist = {p.path for name, module in all_pages().items() for p in pages_of(module, ctx[name])}
    for lang, text in pages.items():
        targets = [path for path, _ in LINK.findall(text) if path]
        assert targets, lang
        assert set(targets) <= exist, (lang, set(targets) - exist)


def test_no_figure_is_typed_in_the_prose(pages) -> None:
    most = str(guide.context([], [])["most_gpus"])
    for lang, text in pages.items():
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        prose = re.sub(r"`[^`\n]*`|\]\([^)]*\)|\{ #[a-z-]+ \}", "", prose).replace(most, "")
        prose = NAMED_DIGITS.sub("", prose)
        assert not re.search(r"\d", prose), (lang, re.findall(r".{0,20}\d.{0,20}", prose))
