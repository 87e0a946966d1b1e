"""How the site's pages join names and clauses in each language: lists ("a, b and c" /
"a、b和c") and Chinese pieces spaced as the site writes Chinese, with a space only where a
Chinese character meets Latin, a digit or code, never between two Chinese characters or
beside full-width punctuation (tests/unit/test_levers_sentences.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from generator.words import Words

#: Chinese characters: no space between two of them.
_CJK = ("\u4e00", "\u9fff")


def _cjk(char: str) -> bool:
    return _CJK[0] <= char <= _CJK[1]


def _wide(char: str) -> bool:
    """Full-width punctuation and symbols (、，。：；（）“”《》—…), which carry their own space."""
    return "\u3000" <= char <= "\u303f" or "\uff00" <= char <= "\uffef" or \
        char in "“”‘’—…·"


def spaced(*parts: str) -> str:
    """Chinese pieces joined as the site spaces them: "换上" + "fused AdamW 内核" + "和" +
    "for-loop AdamW" → "换上 fused AdamW 内核和 for-loop AdamW"; "比单用" + "激活检查点" +
    "多省" → "比单用激活检查点多省". Each piece's own edges are stripped first."""
    text = ""
    for part in (p.strip() for p in parts):
        if not part:
            continue
        if text:
            left, right = text[-1], part[0]
            tight = _wide(left) or _wide(right) or (_cjk(left) and _cjk(right))
            text += "" if tight else " "
        text += part
    return text


def listed(items: Sequence[Words]) -> Words:
    """Names in a list: "a, b and c" / "a、b和c" (spaced as above)."""
    if not items:
        return Words("", "")
    if len(items) == 1:
        return items[0]
    en = ", ".join(item.en for item in items[:-1]) + " and " + items[-1].en
    zh_parts: list[str] = []
    for i, item in enumerate(items):
        if i:
            zh_parts.append("和" if i == len(items) - 1 else "、")
        zh_parts.append(item.zh)
    return Words(en, spaced(*zh_parts))


def capital(text: str) -> str:
    """A sentence's first letter upper-cased (Chinese is left as it is)."""
    return text[:1].upper() + text[1:]


#: What is not prose within a line: inline code, a link's or image's target, raw HTML tags,
#: attribute lists ({ #id }, {: …}), maths and bare URLs. Their own text stays as written.
_NOT_TEXT = re.compile(r"`[^`]*`|\]\([^)]*\)|<[^>]+>|\{[:.#][^}]*\}|\$[^$]*\$"
                       r"|https?://[^\s)>\]]+")
#: A Chinese character beside a Latin letter or a digit, either way round.
_MEETS = re.compile(r"([\u4e00-\u9fff])(?=[A-Za-z0-9])|([A-Za-z0-9])(?=[\u4e00-\u9fff])")


def text_lines(lines: list[str]) -> Iterator[tuple[int, str]]:
    """(number, line) of a Markdown page's lines outside code fences and raw HTML blocks (a
    block lasts until a blank line, as in Markdown): the lines a page's words stand on."""
    in_fence = in_html = False
    for number, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
        elif in_fence:
            continue
        elif in_html:
            in_html = bool(line.strip())
        elif stripped.startswith("<"):
            in_html = True
        else:
            yield number, line


def chinese_spaced(markdown: str) -> str:
    """A Chinese page as the site spaces Chinese (see spaced): a space wherever a Chinese
    character meets a Latin letter or a digit in prose ("用 FSDP2时" → "用 FSDP2 时",
    "4 × 2,048和16 × 256" → "4 × 2,048 和 16 × 256"). Code (fenced or inline), raw HTML
    blocks and tags, link targets, attribute lists, maths and URLs are left as they are. The
    one place generated Chinese gets its spacing: render.render_page applies it to every
    Chinese page, whatever template, sentence or table cell the text came from."""
    lines = markdown.split("\n")
    for number, line in text_lines(lines):
        pieces, last = [], 0
        for kept in _NOT_TEXT.finditer(line):
            pieces += [_space(line[last:kept.start()]), kept.group()]
            last = kept.end()
        lines[number] = "".join(pieces + [_space(line[last:])])
    return "\n".join(lines)


def _space(text: str) -> str:
    return _MEETS.sub(lambda m: (m.group(1) or m.group(2)) + " ", text)
