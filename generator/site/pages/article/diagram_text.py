"""Text in the hand-drawn diagrams: how wide a line is, how lines wrap and stack.

There are no font metrics when the diagrams are drawn, so widths are estimated on the wide
side (DejaVu Sans, the widest fallback of FONT_STACK; CJK glyphs 1 em): labels keep their
room in whatever font the reader's browser picks.
"""

from __future__ import annotations

Lines = list[tuple[str, str]]   # (text, style) per line
WRAP = 130.0                    # caption lines wrap at this width
# Muted lines (sub, note) at 0.9: at 0.72 they fell under WCAG AA's 4.5:1 on a coloured room.
STYLES = {  # font size, weight, opacity
    "name": (12.5, 600, 1.0), "size": (12.5, 400, 1.0), "sub": (11.0, 400, 0.9),
    "note": (11.0, 400, 0.9), "title": (14.0, 600, 1.0), "small": (11.0, 600, 1.0),
    "small_size": (11.0, 400, 1.0)}
#: DejaVu Sans advance widths (em), the widest fallback, rounded up; CJK glyphs are 1 em
_EM = {**dict.fromkeys(" .,:;!|'ijlI", 0.34), **dict.fromkeys("()[]rtf", 0.42),
       **dict.fromkeys("0123456789", 0.64), **dict.fromkeys("mwMW", 1.0)}


def text_width(text: str, style: str) -> float:
    size, weight, _ = STYLES[style]
    return sum(_EM.get(c, 1.0 if ord(c) >= 0x2E80 else 0.76 if c.isupper() else 0.62)
               for c in text) * size * (1.1 if weight > 400 else 1)


def wrap(text: str, style: str, width: float = WRAP) -> list[str]:
    """Greedy word wrap; a word wider than `width` keeps a line of its own (the slot widens)."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and text_width(f"{lines[-1]} {word}", style) <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines


def place(items: Lines, x: float, top: float, anchor: str = "middle") -> list[dict]:
    """Text elements for `items`, stacked downwards from `top`."""
    out, y = [], top
    for text, style in items:
        size, weight, opacity = STYLES[style]
        out.append({"x": fmt(x), "y": fmt(y + size), "text": text, "size": f"{size:g}",
                    "weight": weight, "opacity": opacity, "anchor": anchor})
        y += size * 1.32
    return out


def lines_height(items: Lines) -> float:
    return sum(STYLES[style][0] * 1.32 for _, style in items)


def lines_width(items: Lines) -> float:
    return max((text_width(text, style) for text, style in items), default=0.0)


def fmt(x: float) -> str:
    return f"{x:.2f}"  # fixed precision: byte-identical output, areas exact to 0.1 %
