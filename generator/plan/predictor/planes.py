"""Fit a step's peak over its size: fixed + per_token·(batch·seq) + per_token_sq·(batch·seq²).

Activations and the loss's temporaries grow with the tokens of a step (batch × sequence);
eager attention keeps a·s² scores per layer, which grow with batch × sequence². The fit is
least squares on relative error (each point weighted by 1/its value), so that a 2 GiB step
counts as much as a 200 GiB one. Pure Python, three unknowns: the render needs no numpy.

The peak of a small step is the optimizer step's, which does not grow with the size (a floor,
as on the sweeps page); points that peak there are kept out of the plane and give the floor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Point:
    batch: int
    seq: int
    value: float
    #: The step peaks in the optimizer step: on the floor, not on the plane.
    floor: bool = False

    @property
    def tokens(self) -> int:
        return self.batch * self.seq


@dataclass(frozen=True)
class PlaneFit:
    fixed: float
    per_token: float
    per_token_sq: float
    #: The highest value among floor points; 0 when there is none.
    floor: float
    points: tuple[Point, ...]
    #: Leave-one-out: the largest |error| / value when each plane point is predicted by the
    #: plane through the others; how far the fit may miss at sizes it has not seen.
    spread: float

    def __call__(self, batch: float, seq: float) -> float:
        return predict(self.coefficients(), batch, seq)

    def coefficients(self) -> dict[str, float]:
        return {"fixed": self.fixed, "per_token": self.per_token,
                "per_token_sq": self.per_token_sq, "floor": self.floor}

    @property
    def max_rel_residual(self) -> float:
        return max(abs(self(p.batch, p.seq) - p.value) / p.value for p in self.points)


def predict(coefficients: dict[str, float], batch: float, seq: float) -> float:
    """The prediction both the page and the widget make (calculator.js computes the same);
    coefficients without a floor (a category's plane) give the plane alone."""
    plane = (coefficients["fixed"] + coefficients["per_token"] * batch * seq
             + coefficients["per_token_sq"] * batch * seq * seq)
    return max(plane, coefficients.get("floor", -math.inf))


def fit_plane(points: list[Point], *, use_floor: bool = True) -> PlaneFit:
    """The relative least-squares plane through the points not on the floor. `use_floor`
    False fits every point (reserved memory has no clean floor: segments cached during
    backward stay reserved through the optimizer step)."""
    on_plane = [p for p in points if not (use_floor and p.floor)]
    if len({(p.tokens, p.seq) for p in on_plane}) < 3:  # too few grow: one plane through all
        on_plane, use_floor = list(points), False
    floor = max((p.value for p in points if use_floor and p.floor), default=0.0)
    fixed, per_token, per_token_sq = _solve(on_plane)
    errors = [_loo_error(on_plane, i) for i in range(len(on_plane))] if len(on_plane) > 3 else []
    # nan where leaving a point out leaves too few sizes to fit: no spread to state
    spread = max(errors) if errors and not any(math.isnan(e) for e in errors) else float("nan")
    return PlaneFit(fixed, per_token, per_token_sq, floor, tuple(points), spread)


def _loo_error(points: list[Point], left_out: int) -> float:
    p = points[left_out]
    try:
        fixed, a, b = _solve(points[:left_out] + points[left_out + 1:])
    except ValueError:
        return float("nan")
    return abs(fixed + a * p.tokens + b * p.tokens * p.seq - p.value) / p.value


def fit_share(points: list[Point]) -> dict[str, float]:
    """A plane by plain least squares, for a part of the peak that may be zero at some
    sizes (a category of it: what fills the peak), where relative error means nothing."""
    fixed, per_token, per_token_sq = _solve(points, relative=False)
    return {"fixed": fixed, "per_token": per_token, "per_token_sq": per_token_sq}


def _solve(points: list[Point], relative: bool = True) -> tuple[float, float, float]:
    """Normal equations of the rows divided by their values (`relative`), columns then
    scaled to order one before elimination (tokens reach 1e5, batch·seq² 1e8, values 1e11:
    unscaled, the 3×3 system would lose most of its digits)."""
    rows = [(1.0, float(p.tokens), float(p.tokens) * p.seq) for p in points]
    if len(points) < 3 or len({(p.tokens, p.seq) for p in points}) < 3:
        raise ValueError("a plane needs at least three points of different sizes")
    if relative:  # y/y = 1
        weighted_rows = [([x / p.value for x in r], 1.0) for r, p in zip(rows, points)]
    else:
        weighted_rows = [(list(r), float(p.value)) for r, p in zip(rows, points)]
    scale = [max(abs(r[j]) for r, _ in weighted_rows) or 1.0 for j in range(3)]
    weighted = [([x / s for x, s in zip(r, scale)], y) for r, y in weighted_rows]
    normal = [[sum(w[i] * w[j] for w, _ in weighted) for j in range(3)]
              + [sum(w[i] * y for w, y in weighted)] for i in range(3)]
    for col in range(3):  # Gaussian elimination with partial pivoting
        pivot = max(range(col, 3), key=lambda r: abs(normal[r][col]))
        normal[col], normal[pivot] = normal[pivot], normal[col]
        if abs(normal[col][col]) < 1e-12:
            raise ValueError("the sizes are collinear in (batch·seq, batch·seq²): vary the "
                             "sequence length as well as the batch")
        for row in range(col + 1, 3):
            factor = normal[row][col] / normal[col][col]
            normal[row] = [a - factor * b for a, b in zip(normal[row], normal[col])]
    solution = [0.0, 0.0, 0.0]
    for row in (2, 1, 0):
        rest = sum(normal[row][j] * solution[j] for j in range(row + 1, 3))
        solution[row] = (normal[row][3] - rest) / normal[row][row]
    fixed, a, b = (x / s for x, s in zip(solution, scale))
    return fixed, a, b


@dataclass(frozen=True)
class FitRange:
    """Where a fit has points: tokens (batch × seq) and sequence lengths, each [low, high]."""

    tokens: tuple[int, int]
    seq: tuple[int, int]

    @classmethod
    def of(cls, points: list[Point] | tuple[Point, ...]) -> FitRange:
        return cls((min(p.tokens for p in points), max(p.tokens for p in points)),
                   (min(p.seq for p in points), max(p.seq for p in points)))

    def contains(self, batch: int, seq: int) -> bool:
        """Inside both intervals (verdicts.in_range, and calculator.js's inRange, ask this)."""
        return (self.tokens[0] <= batch * seq <= self.tokens[1]
                and self.seq[0] <= seq <= self.seq[1])
