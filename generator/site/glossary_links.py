"""Each page's first use of a glossary term links to its entry (glossary.md#<id>).

Applied to every rendered page but the glossary itself, in prose only: headings, tables,
HTML blocks (figures, the calculator), code, maths, admonition titles and existing links are
left alone, so a link never lands where Markdown would not render it. One link per term and
page: the first place a reader meets it.
"""

from __future__ import annotations

import re

from generator.site.pages.glossary import ENTRIES
from generator.site.wording import text_lines

#: Per language: (the term's forms, as a regular expression; its glossary id).
TERMS: dict[str, list[tuple[str, str]]] = {
    "en": [
        (r"\b(?:fake tensors?|FakeTensor(?:Mode)?)\b", "fake-tensor"),
        (r"\bactivations\b", "activations"),
        (r"\b(?:autocast(?:'s)? (?:weight )?copies|16-bit (?:weight )?copies)\b",
         "autocast-copies"),
        (r"\btemporaries\b", "temporaries"),
        (r"\bactivation checkpointing\b", "activation-checkpointing"),
        (r"\bSDPA\b", "sdpa"),
        (r"\bforeach\b", "optimizer-kernels"),
        (r"\breserved (?:memory|peak)\b", "reserved-vs-allocated"),
        (r"\bCUDA context\b", "cuda-context"),
        (r"\bcuBLAS(?:'s)? workspaces?\b", "cublas-workspace"),
        (r"\beps\b", "eps"),
        (r"\b(?:GradScaler|loss scaling)\b", "loss-scaling"),
        (r"\bDTensors?\b", "dtensor"),
    ],
    "zh": [
        (r"假张量|FakeTensor(?:Mode)?", "fake-tensor"),
        (r"激活值", "activations"),
        (r"autocast 权重副本|16 位(?:权重)?副本", "autocast-copies"),
        (r"临时张量", "temporaries"),
        (r"激活检查点", "activation-checkpointing"),
        (r"SDPA", "sdpa"),
        (r"\bforeach\b", "optimizer-kernels"),
        (r"已预留|预留的显存|预留（reserved）", "reserved-vs-allocated"),
        (r"CUDA 上下文", "cuda-context"),
        (r"cuBLAS 工作区", "cublas-workspace"),
        (r"\beps\b", "eps"),
        (r"GradScaler|损失缩放", "loss-scaling"),
        (r"DTensor", "dtensor"),
    ],
}
#: Inside a prose line, what must not be touched: code, links and images, inline HTML
#: elements with their text (verdict badges), maths, attribute lists, footnote marks.
_PROTECTED = re.compile(r"`[^`]*`|!?\[[^\]]*\]\([^)]*\)|\[[^\]]*\]\[[^\]]*\]"
                        r"|<(\w+)\b[^>]*>.*?</\1>|<[^>]+>"
                        r"|\$[^$]*\$|\{[:.#][^}]*\}|\[\^[^\]]*\]")
#: Lines that are not prose: headings, tables, HTML, admonition titles, list-free markup.
_NOT_PROSE = re.compile(r"^\s*(?:#|\||<|!!!|\?\?\?|```|~~~|\[\^|\{)")


def link_first_uses(markdown: str, lang: str, page_path: str) -> str:
    """`markdown` with the first prose use of each term linked to its glossary entry."""
    prefix = "../" * page_path.count("/")
    flags = re.I if lang == "en" else 0  # "Activations" opens a sentence
    terms = [(re.compile(pattern, flags), anchor) for pattern, anchor in TERMS[lang]]
    assert all(anchor in ENTRIES for _, anchor in terms)
    done: set[str] = set()
    lines = markdown.split("\n")
    for number, line in text_lines(lines):
        if _NOT_PROSE.match(line):
            continue
        lines[number] = _link_line(line, terms, done, prefix)
    return "\n".join(lines)


def _link_line(line: str, terms: list[tuple[re.Pattern[str], str]], done: set[str],
               prefix: str) -> str:
    pieces, last = [], 0
    for protected in _PROTECTED.finditer(line):
        pieces += [_link_text(line[last:protected.start()], terms, done, prefix),
                   protected.group(0)]
        last = protected.end()
    return "".join(pieces + [_link_text(line[last:], terms, done, prefix)])


def _link_text(text: str, terms: list[tuple[re.Pattern[str], str]], done: set[str],
               prefix: str) -> str:
    """Plain text with the first match of each term not linked yet made a link; matches
    never overlap, and a link's own text is not searched again."""
    matches = sorted((found.start(), found.end(), anchor) for pattern, anchor in terms
                     if anchor not in done and (found := pattern.search(text)))
    out, last = [], 0
    for begin, end, anchor in matches:
        if begin < last:
            continue
        done.add(anchor)
        out += [text[last:begin], f"[{text[begin:end]}]({prefix}glossary.md#{anchor})"]
        last = end
    return "".join(out + [text[last:]])
