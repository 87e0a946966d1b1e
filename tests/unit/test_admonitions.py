"""Every admonition on the committed pages has a body: Markdown's `!!! note "title"` takes the
indented lines under it, and a body that lost its indent (a template tag that stripped the
leading spaces) renders as a title-only box with the text spilling out below (issue 34: the
claims page's "Why the article's total is so far off")."""

from __future__ import annotations

import re

from conftest import REPO_ROOT

ADMONITION = re.compile(r'^(!!!|\?\?\?\+?) ')


def test_every_admonition_has_an_indented_body():
    empty = []
    for page in sorted((REPO_ROOT / "docs").rglob("*.md")):
        lines = page.read_text(encoding="utf-8").split("\n")
        for i, line in enumerate(lines):
            if ADMONITION.match(line.lstrip()):
                indent = len(line) - len(line.lstrip())
                body = next((x for x in lines[i + 1:] if x.strip()), "")
                if len(body) - len(body.lstrip()) <= indent:
                    empty.append(f"{page.relative_to(REPO_ROOT)}:{i + 1}: {line.strip()}")
    assert not empty, "admonitions without a body:\n" + "\n".join(empty)
