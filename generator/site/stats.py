"""How far a set of estimates lands from the truth: the accuracy page's one error measure,
and its one rule for an estimate that falls short."""

from __future__ import annotations

import statistics


def errors(ratios: list[float]) -> dict[str, float] | None:
    """Worst and median |estimate ÷ real − 1| and how many ratios, or None for no ratios."""
    found = [abs(r - 1) for r in ratios]
    return {"worst": max(found), "median": statistics.median(found),
            "count": len(found)} if found else None


def falls_short(ratio: float) -> bool:
    """Whether an estimate (estimate ÷ real) is below the real figure: the page counts and
    words every estimate by this one rule."""
    return ratio < 1
