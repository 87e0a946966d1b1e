"""What the widget shows for one choice, computed in Python: docs/assets/calculator.js makes
the same computations in the browser, and the browser test holds the two against each other.

Where a lever set has a replay template, its peaks are the template replayed through the
allocator at the size asked (replay.py), which is what the estimate gives there; otherwise
they come from the planes, and the reserved one is uncertain by the fit's spread.

A card fits a step when the reserved peak, raised by the spread (none for a replay), plus
the card's CUDA context at its high end is within the card's nvidia-smi total; it "may fit"
when the plain peak plus the context's low end is; otherwise it does not fit.
"""

from __future__ import annotations

import math
from typing import Any

from generator.site.pages.calculator import replay
from generator.site.pages.calculator.planes import FitRange, predict

#: The largest batch is searched up to this (a 2²⁰-sample step is no training step).
MAX_BATCH = 1 << 20


class Predictor:
    """One lever set's peaks at any size, each size replayed at most once."""

    def __init__(self, fit: dict[str, Any], template: dict[str, Any] | None = None) -> None:
        self.fit, self.template = fit, template
        self.spread = 0.0 if template else fit["reserved"]["spread"]
        self._seen: dict[tuple[int, int], tuple[float, float]] = {}

    def peaks(self, batch: int, seq: int) -> tuple[float, float]:
        """(allocated, reserved)."""
        if (batch, seq) not in self._seen:
            fit = self.fit
            self._seen[batch, seq] = (
                replay.peaks(self.template, batch, seq) if self.template else
                (predict(fit["allocated"], batch, seq), predict(fit["reserved"], batch, seq)))
        return self._seen[batch, seq]


def figures(fit: dict[str, Any], batch: int, seq: int,
            template: dict[str, Any] | None = None) -> dict[str, Any]:
    allocated, reserved = Predictor(fit, template).peaks(batch, seq)
    return {"allocated": allocated, "reserved": reserved,
            "smi": [reserved + fit["context_bytes"][0], reserved + fit["context_bytes"][1]],
            "in_range": FitRange(tuple(fit["range"]["tokens"]),
                                 tuple(fit["range"]["seq"])).contains(batch, seq)}


def verdict(fit: dict[str, Any], card: dict[str, Any], batch: int, seq: int,
            template: dict[str, Any] | None = None) -> str:
    return _verdict(Predictor(fit, template), card, batch, seq)


def _verdict(predictor: Predictor, card: dict[str, Any], batch: int, seq: int) -> str:
    reserved = predictor.peaks(batch, seq)[1]
    low, high = card["context_bytes"]
    if reserved * (1 + predictor.spread) + high <= card["total_bytes"]:
        return "fits"
    if reserved + low <= card["total_bytes"]:
        return "may"
    return "no"


def largest_batch(fit: dict[str, Any], card: dict[str, Any], seq: int,
                  template: dict[str, Any] | None = None) -> int:
    """The largest batch that `verdict` calls "fits" at this sequence length (0: none),
    taking the reserved peak to grow with the batch: from the planes' answer, a bracket
    widened by half until it holds the edge, then bisection. Reserved memory can dip a
    little between neighbouring batches; this finds one edge, the one near the planes'."""
    predictor = Predictor(fit, template)

    def fits(batch: int) -> bool:
        return _verdict(predictor, card, batch, seq) == "fits"

    if not fits(1):
        return 0
    low = high = min(MAX_BATCH, max(1, _plane_guess(fit["reserved"], card, seq, predictor.spread)))
    while fits(high) and high < MAX_BATCH:
        low, high = high, min(MAX_BATCH, high + high // 2 + 1)
    if fits(high):
        return high
    while low > 1 and not fits(low):
        high, low = low, max(1, low * 2 // 3)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low


def _plane_guess(c: dict[str, float], card: dict[str, Any], seq: int, spread: float) -> int:
    room = (card["total_bytes"] - card["context_bytes"][1]) / (1 + spread)
    per_sample = c["per_token"] * seq + c["per_token_sq"] * seq * seq
    if c["floor"] > room or per_sample <= 0:
        return 1
    return max(1, math.floor((room - c["fixed"]) / per_sample))
