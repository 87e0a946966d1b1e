"""Straight lines through batch sweeps, the largest batch that fits a GPU, and the activation
formula of Korthikanti et al. 2022 as a prediction to set beside them.

The peak of a step is the larger of two moments: early backward, where every activation is
still held (it grows with the batch), and the optimizer step, where gradients, the optimizer
state and foreach intermediates are live but activations are gone (it does not). Small
batches therefore sit on a flat floor; only the points whose peak is not in the optimizer
phase lie on the line, and only they are fitted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from generator.results.shapes import CATEGORIES, StepResult
from generator.site.analysis import (
    ALLOCATOR_SLACK,
    CONTEXT_ALLOWANCE_BYTES,
    activation_formula_bytes,
)

Result = StepResult
GIB, MIB = 2 ** 30, 2 ** 20

#: GPU sizes of the largest-batch table (GiB).
BUDGETS_GIB = (16, 24, 40, 80)
#: The phase in which a peak does not depend on the batch.
STEP_PHASE = "optimizer"


@dataclass(frozen=True)
class LinearFit:
    """Least squares y = intercept + slope·x, with each point's residual (measured − line)."""

    slope: float
    intercept: float
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    residuals: tuple[float, ...]

    def __call__(self, x: float) -> float:
        return self.intercept + self.slope * x

    @property
    def max_abs_residual(self) -> float:
        return max(abs(r) for r in self.residuals)

    @property
    def max_rel_residual(self) -> float:
        """The largest residual as a share of its point's value."""
        return max(abs(r) / y for r, y in zip(self.residuals, self.ys) if y)


def linear_fit(xs: list[float], ys: list[float]) -> LinearFit:
    """Ordinary least squares; needs two distinct x values."""
    if len(xs) != len(ys) or len(set(xs)) < 2:
        raise ValueError("a line needs at least two points with different x")
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    intercept = my - slope * mx
    residuals = tuple(y - (intercept + slope * x) for x, y in zip(xs, ys))
    return LinearFit(slope, intercept, tuple(xs), tuple(ys), residuals)


def peak_phase(result: Result) -> str | None:
    """The phase (forward, backward, optimizer) in which the step peaks; None if unknown.
    The stored timeline keeps the highest point of each bucket, so its maximum is the peak."""
    timeline, phases = result.get("timeline") or {}, result.get("phases") or []
    ticks = timeline.get("tick") or []
    if not ticks or not phases:
        return None
    series = list((timeline.get("bytes") or {}).values())
    totals = [sum(s[i] for s in series) for i in range(len(ticks))]
    at = ticks[max(range(len(ticks)), key=totals.__getitem__)]
    started = [p for p in sorted(phases, key=lambda p: p["tick"]) if p["tick"] <= at]
    return started[-1]["name"] if started else None


def layer_activation_bytes(result: Result) -> int:
    """Activations saved by the transformer blocks (`layers.N`): what the formula counts."""
    return sum(v for k, v in result["module_activation_bytes"].items() if k.startswith("layers."))


@dataclass(frozen=True)
class BatchFit:
    """One precision's batch sweep: the line through the batch-bound points, and the floor."""

    line: LinearFit
    #: Bytes per sample of each category live at the peak (their sum is line.slope).
    category_slopes: dict[str, float]
    #: Bytes per sample of the transformer blocks' activations (what the formula predicts).
    layer_slope: float
    #: The highest peak among points that peak in the optimizer step; None if there are none.
    floor: int | None
    fitted_batches: tuple[int, ...]
    floor_batches: tuple[int, ...]

    def peak(self, batch_size: float) -> float:
        """The predicted peak: the line, but never below the optimizer step's floor."""
        return max(self.line(batch_size), self.floor or 0)


def fit_batch_sweep(results: list[Result]) -> BatchFit:
    """Fit the results of one configuration over batch sizes (one result per batch)."""
    ordered = sorted(results, key=lambda r: r["experiment"]["batch_size"])
    on_line = [r for r in ordered if peak_phase(r) != STEP_PHASE]
    on_floor = [r for r in ordered if peak_phase(r) == STEP_PHASE]
    if len({r["experiment"]["batch_size"] for r in on_line}) < 2:
        raise ValueError("fewer than two batch sizes peak outside the optimizer step")
    batches = [r["experiment"]["batch_size"] for r in on_line]
    line = linear_fit(batches, [r["peak_bytes"] for r in on_line])
    slopes = {c: linear_fit(batches, [r["live_at_peak_bytes"][c] for r in on_line]).slope
              for c in CATEGORIES}
    layers = linear_fit(batches, [layer_activation_bytes(r) for r in on_line]).slope
    return BatchFit(line, slopes, layers,
                    max((r["peak_bytes"] for r in on_floor), default=None),
                    tuple(batches), tuple(r["experiment"]["batch_size"] for r in on_floor))


@dataclass(frozen=True)
class Overhead:
    """What a GPU needs beyond the step's tensors: the CUDA context, and what the caching
    allocator reserves beyond the tensors, as a share of the peak (slack). `kind` says where
    both come from: "measured" (a real GPU run), "simulated" (an estimate's simulation of the
    allocator, with the top of its GPU generation's context range) or "allowance" (round
    figures, for lack of either)."""

    context_bytes: int
    slack: float
    kind: str
    #: The result they were taken from, unless an allowance.
    source: Result | None = None
    #: Simulated: each batch of the source's sweep with its own reserved peak, so that the
    #: sweep's points are checked against what the simulation reserved for them.
    reserved_at: dict[int, int] = field(default_factory=dict)

    def total(self, peak_bytes: float) -> float:
        return self.context_bytes + peak_bytes * (1 + self.slack)

    def total_at(self, batch: int, peak_bytes: float) -> float:
        """What a point of the sweep needs: its own simulated reserve where there is one."""
        if batch in self.reserved_at:
            return self.context_bytes + self.reserved_at[batch]
        return self.total(peak_bytes)


ALLOWANCE = Overhead(CONTEXT_ALLOWANCE_BYTES, ALLOCATOR_SLACK, "allowance")


def overhead_for(results: list[Result], sweep: list[Result], *, model: str, precision: str,
                 batch_size: int, seq_len: int) -> Overhead:
    """From the closest `cuda` result of the same model among `results`: its CUDA context and
    its reserved − allocated as a share of allocated. Else, where the estimates of `sweep`
    (one precision's points) simulated the caching allocator, from its largest batch: the
    reserved peak over the tensors' peak, and the top of its context range. Else the
    allowance."""
    measured = [r for r in results if not r.get("error") and r["backend"] == "cuda"
                and r["experiment"]["model"] == model
                and "context_bytes" in (r.get("ground_truth") or {})
                and r["ground_truth"].get("peak_bytes")]
    if measured:
        def distance(r: Result) -> tuple:
            e = r["experiment"]
            return (e["precision"] != precision, abs(math.log2(e["seq_len"] / seq_len)),
                    abs(math.log2(e["batch_size"] / batch_size)), r["key"])

        best = min(measured, key=distance)
        truth = best["ground_truth"]
        return Overhead(truth["context_bytes"],
                        truth["allocator_overhead_bytes"] / truth["peak_bytes"],
                        "measured", best)
    simulated = [r for r in sweep if r["backend"] == "estimate" and r["peak_bytes"]
                 and r["experiment"]["device"] == "cuda"
                 and (r.get("allocator") or {}).get("peak_reserved_bytes")]
    if not simulated:
        return ALLOWANCE
    best = max(simulated, key=lambda r: r["experiment"]["batch_size"])
    allocator = best["allocator"]
    return Overhead(allocator["context_bytes"][-1],
                    allocator["peak_reserved_bytes"] / best["peak_bytes"] - 1, "simulated", best,
                    {r["experiment"]["batch_size"]: r["allocator"]["peak_reserved_bytes"]
                     for r in simulated})


@dataclass(frozen=True)
class LargestBatch:
    """The largest batch whose predicted peak, with the overhead, fits a GPU of budget_bytes."""

    budget_bytes: int
    batch: int
    #: The predicted peak at that batch (0 when nothing fits), without the overhead.
    predicted_peak: float
    #: A measured point at exactly that batch: its peak and whether it fits too.
    measured_peak: int | None
    measured_fits: bool | None
    #: Measured points whose fit or misfit contradicts the prediction (batch ≤ answer ⇔ fits).
    disagreements: tuple[int, ...]
    checked: int
    extrapolated: bool


def largest_batch(fit: BatchFit, budget_bytes: int, overhead: Overhead = ALLOWANCE,
                  measured: dict[int, int] | None = None) -> LargestBatch:
    """Solve context + (1 + slack)·max(floor, a + b·B) ≤ budget for the largest whole B, then
    hold it against the measured peaks (`measured`: batch → peak bytes)."""
    if fit.line.slope <= 0:
        raise ValueError("the peak does not grow with the batch: no largest batch")
    measured = measured or {}

    def fits(batch: int) -> bool:
        return overhead.total(fit.peak(batch)) <= budget_bytes

    room = (budget_bytes - overhead.context_bytes) / (1 + overhead.slack)
    batch = max(0, math.floor((room - fit.line.intercept) / fit.line.slope))
    # Floating point may put the answer one off; settle it with the same test as the check.
    while fits(batch + 1):
        batch += 1
    while batch > 0 and not fits(batch):
        batch -= 1
    wrong = tuple(b for b, peak in sorted(measured.items())
                  if (overhead.total_at(b, peak) <= budget_bytes) != (b <= batch))
    at = measured.get(batch)
    return LargestBatch(
        budget_bytes=budget_bytes, batch=batch,
        predicted_peak=fit.peak(batch) if batch else 0.0,
        measured_peak=at,
        measured_fits=None if at is None else overhead.total_at(batch, at) <= budget_bytes,
        disagreements=wrong, checked=len(measured),
        extrapolated=bool(measured) and batch > max(measured))


def _element_bytes(precision: str) -> int:
    """The formula's element size: 16-bit tensors under AMP, its fp32 variant otherwise."""
    return 4 if precision == "fp32" else 2


def formula_variant(precision: str) -> str:
    return "fp32" if precision == "fp32" else "16-bit"


def formula_coefficients(precision: str) -> tuple[int, int]:
    """The per-layer formula as s·b·h·(linear + quadratic·a·s/h): (34, 5) in 16-bit,
    (66, 9) in fp32; read off the formula itself so that page and code cannot disagree."""
    e = _element_bytes(precision)
    linear = activation_formula_bytes(seq_len=1, batch_size=1, hidden=1, heads=0,
                                      intermediate=4, element_bytes=e)
    quadratic = activation_formula_bytes(seq_len=1, batch_size=1, hidden=0, heads=1,
                                         intermediate=0, element_bytes=e)
    return int(linear), int(quadratic)


def formula_activations(arch: dict[str, Any], *, precision: str, batch_size: float,
                        seq_len: int) -> dict[str, float]:
    """The formula summed over the layers: all of it, and its attention-score part (the
    a·s²·b tensors of eager attention), which grows with the square of the sequence."""
    shape = dict(seq_len=seq_len, batch_size=batch_size, hidden=arch["hidden"],
                 intermediate=arch["intermediate"], element_bytes=_element_bytes(precision))
    total = activation_formula_bytes(heads=arch["heads"], **shape) * arch["layers"]
    linear = activation_formula_bytes(heads=0, **shape) * arch["layers"]
    return {"bytes": total, "quadratic": total - linear, "variant": formula_variant(precision)}


def formula_applies(result: Result) -> bool:
    """The formula models transformer layers with eager attention (s² scores kept)."""
    arch = result.get("architecture") or {}
    return arch.get("attention") == "eager" and bool(layer_activation_bytes(result))
