"""Straight lines through batch sweeps, the largest batch that fits a GPU (by the one rule and
the one search of generator/plan/), and the activation formula of Korthikanti et al. 2022 as a
prediction to set beside them.

The peak of a step is the larger of two moments: early backward, where every activation is
still held (it grows with the batch), and the optimizer step, where gradients, the optimizer
state and foreach intermediates are live but activations are gone (it does not). Small
batches therefore sit on a flat floor; only the points whose peak is not in the optimizer
phase lie on the line, and only they are fitted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator.errors import ResultsError
from generator import gpus
from generator.plan.search import largest_fitting
from generator.results.shapes import CATEGORIES, StepResult
from generator.results.api_types import StepMemory
from generator.site.derived import activation_formula_bytes, peak_phase

Result = StepResult
GIB, MIB = 2 ** 30, 2 ** 20

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


#: The GPUs the largest-batch table is read for (gpus.py): one of each common size.
TABLE_GPUS = ("RTX 3060", "RTX 4090", "A100-SXM4-40GB", "H100 80GB HBM3")


@dataclass(frozen=True)
class LargestBatch:
    """The largest batch of a sweep's step that fits one GPU, by the one rule (plan/fit.py)
    and the one search (plan/search.py), over what the step needs at each batch: the
    calculator's replay of its allocations where the calculator has the step ("replay"),
    else a line through what the sweep's points need ("line")."""

    gpu: str
    """The GPU's short name (gpus.py)."""
    memory_bytes: int
    batch: int
    """0: not even batch 1 fits."""
    needed_bytes: float
    """What the step needs at that batch, by the line (0 when nothing fits)."""
    #: A point of the sweep at exactly that batch: whether it fits (None: no such point).
    measured_fits: bool | None
    #: Points of the sweep whose own verdict contradicts the answer (batch ≤ answer ⇔ fits).
    disagreements: tuple[int, ...]
    checked: int
    extrapolated: bool
    """The answer lies beyond the points the prediction rests on."""
    method: str = "line"
    """How batches between and beyond the points were predicted: "replay" or "line"."""


def needs_on(results: list[Result], gpu: gpus.GPU) -> dict[int, int]:
    """Each point of a sweep (one precision's results by batch): what it needs of `gpu` to
    fit for sure by the one rule, its reserved peak on that GPU's workspaces and the GPU's
    CUDA context (a run on a GPU: its own context); {} where a point lacks the allocator's
    figures for it (a sweep of the CPU, or estimates older than the GPU catalogue)."""
    found = {}
    for result in results:
        step = StepMemory.from_dict(result, copy=False)
        if step.reserved_bytes is None:
            return {}
        try:
            found[result["experiment"]["batch_size"]] = step.fits(gpu.name).needed_bytes
        except ResultsError:
            return {}
    return found


def largest_batch(fit: BatchFit, needs: dict[int, int], gpu: gpus.GPU) -> LargestBatch:
    """The largest batch that fits `gpu`: the one search over a line through what the points
    above the optimizer's floor need (the floor: the most a floor point needs), then held
    against each point's own verdict."""
    on_line = sorted(b for b in needs if b in fit.fitted_batches)
    line = linear_fit(on_line, [needs[b] for b in on_line])
    floor = max((needs[b] for b in needs if b in fit.floor_batches), default=0)

    def needed(batch: int) -> float:
        return max(line(batch), floor)

    found = largest_fitting(needed, gpu.memory_bytes).largest
    return checked(gpu, found, needed(found) if found else 0.0, needs,
                   extrapolated=bool(needs) and found > max(needs), method="line")


def checked(gpu: gpus.GPU, found: int, needed_bytes: float, needs: dict[int, int], *,
            extrapolated: bool, method: str) -> LargestBatch:
    """An answer held against each point of the sweep's own verdict (batch ≤ answer ⇔ it
    fits)."""
    wrong = tuple(b for b, need in sorted(needs.items())
                  if (need <= gpu.memory_bytes) != (b <= found))
    at = needs.get(found)
    return LargestBatch(gpu=gpu.short_name, memory_bytes=gpu.memory_bytes, batch=found,
                        needed_bytes=needed_bytes,
                        measured_fits=None if at is None else at <= gpu.memory_bytes,
                        disagreements=wrong, checked=len(needs), extrapolated=extrapolated,
                        method=method)


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
