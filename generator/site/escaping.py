"""Text from results, made inert on the Markdown pages it lands in.

Results are files anyone can commit, and CI publishes them, so a model name is hostile text.
HTML escaping is not enough on a Markdown page: Python-Markdown, with the extensions mkdocs.yml
enables, reads more than tags. An attribute list (`x {: onfocus=alert(1) }`, attr_list) puts
event handlers on a heading; `[x](javascript:..)`, `![x](data:..)`, a reference `[x]: url`, a
footnote and an abbreviation all start with `[`; raw HTML and autolinks with `<`; code spans,
emphasis, table cells and formulas (pymdownx.arithmatex) with `` ` ``, `*` `_`, `|` and `$`.

Each of those characters becomes a numeric character reference. Markdown reads none as syntax,
and every place a template puts text shows the character itself: Markdown text, a raw HTML
block, an attribute value (the calculator's `<option value="...">`). Backslash escapes would
not do: inside raw HTML they show, and `\\[` or `\\(` open a formula for arithmatex. Text
stays as readable as it can in the committed Markdown: apostrophes, parentheses and a lone `&`
mean nothing to Markdown and are left alone (HTML escaping had printed `&#39;` throughout); a
double quote is escaped, for the templates' attribute values. A line break becomes a space,
so that a value stays inside the heading, cell or paragraph it was put in. A code span is the
one place where references show as written: `code` makes a span that needs none.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from markupsafe import Markup

from generator.words import Words

#: Markdown's syntax (and HTML's), each character as a reference. `&` only where it would
#: start one (`&amp;`, `&#60;`): elsewhere Markdown prints it as it is; `_` only where it
#: could open or close emphasis (between two letters, as in `optimizer_state`, it cannot).
_REFERENCES = {char: f"&#{ord(char)};" for char in "[]{}`*_|$\\"}
_REFERENCES.update({"<": "&lt;", ">": "&gt;", '"': "&quot;", "&": "&amp;"})
_SYNTAX = re.compile(r'[\[\]{}`*|$\\<>"]|&(?=#?\w+;)|(?<!\w)_|_(?!\w)')
#: The same in XML (an SVG drawing), where every `&` starts a reference.
_SYNTAX_XML = re.compile(r'[\[\]{}`*|$\\<>"&]|(?<!\w)_|_(?!\w)')
#: A line break: in a value it would end a heading, a table row or a paragraph, and what
#: follows it would start a block of its own.
_BREAK = re.compile(r"\r\n?|\n")


def markdown(value: Any, *, xml: bool = False) -> Markup:
    """`value` as text that a Markdown page (or an HTML attribute in it) shows as it is;
    Markup (a macro's output, a table the code built) is already safe and passes unchanged.
    `xml`: for an SVG drawing, where every `&` must be a reference."""
    if hasattr(value, "__html__"):
        return Markup(value.__html__())
    return Markup(markdown_text(value, xml=xml))


def markdown_text(value: Any, *, xml: bool = False) -> str:
    """`value` escaped as `markdown` does, as a plain string: for the code that writes
    Markdown itself (the tables), where a Markup would escape the string it is added to."""
    syntax = _SYNTAX_XML if xml else _SYNTAX
    return syntax.sub(lambda m: _REFERENCES[m.group()], _BREAK.sub(" ", str(value)))


def written(words: Words) -> Words:
    """Words this code wrote in Markdown (a code span, bold, a link), to print as written; any
    text from results in them was escaped where it was put in (`markdown_text`, `code`)."""
    return Words(Markup(words.en), Markup(words.zh))


def code(value: Any) -> Markup:
    """`value` as a Markdown code span, shown exactly as written: nothing inside a span is
    syntax, so it only needs a fence of more backticks than any run in the text (CommonMark's
    rule, which Python-Markdown follows), and one line (a blank line would end the paragraph);
    a `|` in it does not split a table's cell."""
    text = _BREAK.sub(" ", str(value))
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return Markup(f"{fence}{padded}{fence}")


def code_block(text: str, lang: str = "text") -> Markup:
    """`text` as a fenced code block, shown exactly as written, line breaks kept: nothing
    inside a fence is syntax (Python-Markdown escapes its HTML), so it only needs a fence of
    more backticks than any run in the text, at least three (CommonMark's rule)."""
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return Markup(f"{fence}{lang}\n{_BREAK.sub(chr(10), text).rstrip(chr(10))}\n{fence}")


def join(parts: Iterable[Any], *, xml: bool = False) -> str | Markup:
    """A template's `a ~ b`: text where every part is text (escaped when printed), else markup
    with each text part escaped for Markdown. Jinja's own join escapes such parts for HTML
    alone, and its result, being markup, would pass the environment's finalize unescaped."""
    parts = list(parts)
    if any(hasattr(part, "__html__") for part in parts):
        return Markup("".join(markdown(part, xml=xml) for part in parts))
    return "".join(str(part) for part in parts)
