"""The glossary page: it renders in both languages with and without results, defines every
entry's anchor once in each, links only to pages and anchors that exist without results,
writes its Chinese prose in Chinese (Latin only in code and a short list of names, spaced
from the characters around it) and types no digit outside code."""

from __future__ import annotations

import re

import pytest
from conftest import LANGS
from page_checks import page_markdown

from generator.site.pages import all_pages, article, glossary, pages_of

#: Latin the Chinese prose may use outside code: product, format and kernel names, a unit.
ZH_LATIN = {"PyTorch", "CUDA", "GPU", "CPU", "NVIDIA", "cuBLAS", "AMP", "FP32", "fp16", "bf16",
            "FSDP2", "SDPA", "DTensor", "FakeTensor", "GradScaler", "autocast", "foreach",
            "fused", "for-loop", "flash", "memory-efficient", "eps", "MiB"}
#: Names with a digit in them: the only digits either language's prose may hold.
NAMED_DIGITS = re.compile(r"\b(?:FP32|fp16|bf16|FSDP2)\b")
ANCHOR = re.compile(r"^#{2,} .+ \{ #([a-z0-9-]+) \}$", re.M)
LINK = re.compile(r"\]\(([^)]*)\)")
CJK = "\u4e00-\u9fff"


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return {lang: page_markdown(glossary, glossary.context([], []), lang) for lang in LANGS}


def _text(page: str, code: str = "") -> str:
    """The prose a reader sees: no anchors, no link targets or brackets, each code span
    replaced by `code`."""
    page = re.sub(r" ?\{ #[a-z0-9-]+ \}", "", page)
    page = LINK.sub("]", page).replace("[", "").replace("]", "")
    return re.sub(r"`[^`]*`", code, page)


def test_it_needs_no_results_and_sits_between_methodology_and_reports() -> None:
    assert glossary.context([], []) == glossary.context([{"any": "result"}], [{"any": "study"}])
    ctx = {name: module.context([], []) for name, module in all_pages().items()}
    nav = {p.path: p.nav for name, module in all_pages().items()
           for p in pages_of(module, ctx[name])}
    assert nav["methodology.md"] < nav["glossary.md"] < nav["reports/index.md"]
    assert [p for p in nav.values() if p == nav["glossary.md"]] == [nav["glossary.md"]]


def test_both_languages_define_every_entry_once(pages) -> None:
    for lang, text in pages.items():
        assert text.startswith("# "), lang
        # Every page ends with its data section (render.render_page), the glossary too.
        assert ANCHOR.findall(text) == [*glossary.ENTRIES, "data"], lang


def test_links_reach_pages_and_anchors_that_exist_without_results(pages) -> None:
    """In-page links name an entry; other pages' anchors exist even on a site without
    results (a strict build of such a site must not break on the glossary)."""
    ctx = article.context([], [])
    for lang, text in pages.items():
        targets = LINK.findall(text)
        assert targets, lang
        for target in targets:
            path, _, anchor = target.partition("#")
            if not path:
                assert anchor in glossary.ENTRIES, (lang, target)
                continue
            assert path in {"explainer.md", "levers.md", "precision.md", "scale.md",
                            "accuracy.md", "methodology.md"}, (lang, target)
            if anchor:
                assert path == "explainer.md", (lang, target)
                explainer = page_markdown(article, ctx, lang, path)
                assert f"{{ #{anchor} }}" in explainer, (lang, target)


def test_the_chinese_prose_holds_latin_only_in_code_and_names(pages) -> None:
    text = _text(pages["zh"])
    words = set(re.findall(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*", text))
    assert words <= ZH_LATIN, sorted(words - ZH_LATIN)


def test_the_chinese_prose_spaces_latin_from_characters(pages) -> None:
    """A space between a Chinese character and Latin, a digit or code, either way."""
    text = _text(pages["zh"], code="`code`")
    tight = re.findall(rf"[{CJK}][A-Za-z0-9`]|[A-Za-z0-9`][{CJK}]", text)
    assert not tight, tight


def test_no_digit_is_typed_outside_code(pages) -> None:
    for lang, text in pages.items():
        prose = NAMED_DIGITS.sub("", _text(text))
        assert not re.search(r"\d", prose), (lang, re.findall(r".{0,20}\d.{0,20}", prose))
