"""A page's first prose use of a glossary term links to its entry; nothing else changes."""

from __future__ import annotations

from generator.site.glossary_links import TERMS, link_first_uses
from generator.site.pages.glossary import ENTRIES

PAGE = """# Temporaries and activations

The `temporaries` in code stay. <span>temporaries</span> in HTML stay too.

| temporaries | activations |
|---|---|

```python
activations = []  # a fence
```

<figure>
activations inside a figure
</figure>

!!! note "activations in a title"
    The step keeps activations and [activations](elsewhere.md), then temporaries.

Later prose names activations and temporaries again."""


def test_the_first_prose_use_links_and_nothing_else() -> None:
    out = link_first_uses(PAGE, "en", "explainer.md")
    assert out.count("(glossary.md#activations)") == 1
    assert out.count("(glossary.md#temporaries)") == 1
    assert "    The step keeps [activations](glossary.md#activations) and [activations](" \
        "elsewhere.md), then [temporaries](glossary.md#temporaries)." in out
    untouched = [line for line in PAGE.split("\n") if "The step keeps" not in line]
    assert all(line in out.split("\n") for line in untouched)


def test_pages_in_folders_link_up() -> None:
    out = link_first_uses("Fake tensors carry shapes.", "en", "reports/bert-base.md")
    assert out == "[Fake tensors](../glossary.md#fake-tensor) carry shapes."


def test_chinese_terms() -> None:
    out = link_first_uses("峰值时刻的激活值和临时张量；激活值很大。", "zh", "index.md")
    assert out == ("峰值时刻的[激活值](glossary.md#activations)和"
                   "[临时张量](glossary.md#temporaries)；激活值很大。")


def test_a_link_is_never_searched_again() -> None:
    out = link_first_uses("activations of fake tensors", "en", "index.md")
    assert out == ("[activations](glossary.md#activations) of "
                   "[fake tensors](glossary.md#fake-tensor)")


def test_every_term_has_an_entry_in_both_languages() -> None:
    for lang in ("en", "zh"):
        anchors = {anchor for _, anchor in TERMS[lang]}
        assert anchors <= set(ENTRIES)
        assert anchors == {anchor for _, anchor in TERMS["en"]}
