"""AMP fp16 and AMP bf16 on the sweeps page, printed once where they print alike.

The two AMP flavours keep tensors of the same size, and on an estimate they differ by a few
of GradScaler's small tensors, so every figure the page prints of them often comes out the
same: two identical rows, columns and sentences say nothing twice. Where every figure of a
sweep prints alike, the page prints one row, column and line of text, labelled for both, and
says by how many bytes the two differ at most; where any figure differs, both are printed.
tests/unit/test_page_sweeps.py covers both branches of each function.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from generator.site.labels import PRECISION_LABELS
from generator.words import Words

#: The flavour kept where the two print alike (fp16 first, as the article's pages do), and
#: the one folded into it.
KEPT, LEFT_OUT = "amp-fp16", "amp-bf16"
#: How a label joins the two names: in a table's cell, and in a sentence.
EQUALS, AND = Words(" = ", " = "), Words(" and ", " 和 ")


def twins(printed: Mapping[str, Sequence[str]],
          sizes: Mapping[str, Sequence[float]]) -> dict[str, Any]:
    """Whether AMP bf16 prints the same as AMP fp16 in every figure the page shows of them.
    `printed`: per precision, those figures as the page prints them, in one order; `sizes`:
    per precision, the byte figures behind them (peaks and the like), in one order, whose
    largest difference is `gap`. {"same": False} where either flavour is missing."""
    if KEPT not in printed or LEFT_OUT not in printed:
        return {"same": False}
    pairs = list(zip(sizes[KEPT], sizes[LEFT_OUT], strict=True))
    return {"same": list(printed[KEPT]) == list(printed[LEFT_OUT]), "kept": KEPT,
            "left_out": LEFT_OUT, "gap": max((abs(a - b) for a, b in pairs), default=0)}


def shown(series: Mapping[str, Any], said: Mapping[str, Any]) -> dict[str, Any]:
    """The precisions the page prints, in order: AMP bf16 is left out where `twins` found it
    prints the same as AMP fp16 (the row of AMP fp16 then stands for both)."""
    return {p: s for p, s in series.items() if not (said["same"] and p == said["left_out"])}


def label(precision: str, said: Mapping[str, Any], join: Words = EQUALS) -> Words:
    """A precision's name on the page: "AMP fp16 = AMP bf16" (or, with `join` AND, "AMP
    fp16 and AMP bf16") for the row that stands for both, else its own."""
    if said["same"] and precision == said["kept"]:
        kept, left = PRECISION_LABELS[said["kept"]], PRECISION_LABELS[said["left_out"]]
        return Words(kept.en + join.en + left.en, kept.zh + join.zh + left.zh)
    return PRECISION_LABELS[precision]
