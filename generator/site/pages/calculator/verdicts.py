"""What the widget shows for one choice, computed in Python: docs/assets/calculator.js makes
the same computations in the browser, and the browser test holds the two against each other.

A card fits a step when the reserved prediction raised by the fit's spread, plus the card's
CUDA context at its high end, is within the card's nvidia-smi total; it "may fit" when the
plain prediction plus the context's low end is; otherwise it does not fit.
"""

from __future__ import annotations

import math
from typing import Any

from generator.site.pages.calculator.planes import FitRange, predict


def figures(fit: dict[str, Any], batch: int, seq: int) -> dict[str, Any]:
    reserved = predict(fit["reserved"], batch, seq)
    return {"allocated": predict(fit["allocated"], batch, seq), "reserved": reserved,
            "smi": [reserved + fit["context_bytes"][0], reserved + fit["context_bytes"][1]],
            "in_range": FitRange(tuple(fit["range"]["tokens"]),
                                 tuple(fit["range"]["seq"])).contains(batch, seq)}


def verdict(fit: dict[str, Any], card: dict[str, Any], batch: int, seq: int) -> str:
    reserved = predict(fit["reserved"], batch, seq)
    low, high = card["context_bytes"]
    if reserved * (1 + fit["reserved"]["spread"]) + high <= card["total_bytes"]:
        return "fits"
    if reserved + low <= card["total_bytes"]:
        return "may"
    return "no"


def largest_batch(fit: dict[str, Any], card: dict[str, Any], seq: int) -> int:
    """The largest batch that `verdict` calls "fits" at this sequence length (0: none)."""
    c = fit["reserved"]
    room = (card["total_bytes"] - card["context_bytes"][1]) / (1 + c["spread"])
    per_sample = c["per_token"] * seq + c["per_token_sq"] * seq * seq
    if c["floor"] > room or per_sample <= 0:
        return 0
    return max(0, math.floor((room - c["fixed"]) / per_sample))
