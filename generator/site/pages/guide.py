"""The user guide: how to install the tool and use each command, the Python API and the
fit verdict, in both languages.

It reads no results: the guide is prose in templates/guide/ and types no figure. What it
states of the code (the verdict's words, the most GPUs a search tries, the exit status of a
step that falls short) comes from the code that decides it, through the context; the page
ends, as every page does, saying it has no data files.
"""

from __future__ import annotations

from typing import Any

from generator.plan.fit import DOES_NOT_FIT
from generator.plan.fit import WORD_TEXT, WORDS
from generator.plan.search import GPU_COUNTS
from generator.site.pages import Page, PageModule

#: Right after the calculator (5): the reader who wants a step the calculator lacks.
PAGES = (Page("guide.md", "guide/guide", nav=7),)


def context(results: list[dict[str, Any]], studies: list[dict[str, Any]]) -> dict[str, Any]:
    """The same with or without results: what the guide quotes of the code."""
    return {"words": {word: WORD_TEXT[word] for word in WORDS},
            "most_gpus": GPU_COUNTS[-1], "does_not_fit": DOES_NOT_FIT}


PAGE_MODULE = PageModule(PAGES, context)
