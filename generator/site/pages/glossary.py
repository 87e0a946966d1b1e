"""The glossary: the site's recurring terms, a few sentences each, under stable anchors.

It reads no results: the entries are prose in templates/glossary/, in both languages, and
types no number (sizes that matter stand on the pages that compute them). Other pages link
a term's first use to `glossary.md#<id>`, one id of ENTRIES.
"""

from __future__ import annotations

from typing import Any

from generator.site.pages import Page, PageModule

#: After the methodology page (70), before the reports (100).
PAGES = (Page("glossary.md", "glossary/glossary", nav=80),)
#: Each entry's anchor, in the order the page lists them: how the site's numbers are made,
#: the categories, the levers, the GPU's own memory, precision, sharding.
ENTRIES = (
    "kinds-of-numbers", "fake-tensor",
    "activations", "autocast-copies", "temporaries",
    "activation-checkpointing", "sdpa", "optimizer-kernels",
    "reserved-vs-allocated", "cuda-context", "cublas-workspace",
    "eps", "loss-scaling",
    "dtensor",
)


def context(results: list[dict[str, Any]], studies: list[dict[str, Any]]) -> dict[str, Any]:
    """The same with or without results: the entries' anchors."""
    return {"entries": ENTRIES}


PAGE_MODULE = PageModule(PAGES, context)
