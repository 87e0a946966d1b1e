"""Reserved memory at any size: one allocation trace fitted over the sizes of a lever set.

Why not a plane, as for allocated memory: what the caching allocator reserves jumps between
neighbouring sizes (whether a freed segment happens to fit the next request), so no smooth
curve follows it. But the step's allocations are the same at every size, in the same order;
only their sizes change, each a polynomial in batch and sequence length (b·s·hidden·4 for an
activation, b·heads·s²·4 for eager attention's scores, a constant for a weight). So the
calculator fits each allocation's size over the grid's estimates and the widget replays the
whole sequence through the allocator model (docs/assets/caching-allocator.js, the same rules
as generator/allocator/caching.py) at the size a reader picks: the reserved figure the
estimate itself would give, not a fit to it.

A template is {"monomials", "sizes": [coefficients per size], "steps", "times"}: the trace
format of generator/allocator/trace.py, except that an allocation is the index of its size.
The cuBLAS workspaces' allocations have a size of their own, "workspace" (its index), which a
replay for another GPU sets to that GPU's workspace (generator/gpus.py).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy

from generator.allocator import trace
from generator.allocator.caching import simulate

#: The terms a size may have: constant, per sample, per position, per token, and the s² of
#: eager attention (per sample, or once, as a causal mask); each as its powers of the batch
#: and the sequence length, data that the render writes for the widget (calculator.js reads
#: them there rather than keeping a copy).
MONOMIALS: dict[str, tuple[int, int]] = {
    "1": (0, 0), "b": (1, 0), "s": (0, 1), "b*s": (1, 1), "s*s": (0, 2), "b*s*s": (1, 2),
}
#: At most this many terms per size: with six grid points, a fit of three is still checked
#: by three points it did not need.
MAX_TERMS = 3
#: A size that is a whole number of something counted by rounding (masked-LM positions,
#: round(0.15·b·s) of them, each an int64) is no exact polynomial; the fit may miss it by
#: this much, far under the allocator's 512-byte blocks.
ROUNDING_SLACK = 64


def term(name: str, batch: int, seq: int) -> int:
    """A monomial's value at one size (calculator.js computes it from the same powers)."""
    powers_of_batch, powers_of_seq = MONOMIALS[name]
    return batch ** powers_of_batch * seq ** powers_of_seq


class NotReplayable(ValueError):
    """The estimates' traces do not share one sequence, or a size is no polynomial."""


def template(points: Sequence[tuple[int, int, dict[str, Any]]]) -> dict[str, Any]:
    """(batch, seq, trace) of each estimate of one lever set → the fitted template."""
    if len(points) <= MAX_TERMS:
        raise NotReplayable(f"{len(points)} traces cannot check a fit of {MAX_TERMS} terms")
    texts = [trace.steps(p[2]) for p in points]
    times = points[0][2]["times"]
    if any(p[2]["times"] != times or len(t) != len(texts[0]) for p, t in zip(points, texts)):
        raise NotReplayable("the traces repeat their steps differently")
    workspaces = {tuple(at) for at in points[0][2].get("workspaces", ())}
    if any({tuple(at) for at in p[2].get("workspaces", ())} != workspaces for p in points):
        raise NotReplayable("the cuBLAS workspaces come at other events at another size")
    at_sizes = [(b, s) for b, s, _ in points]
    sizes: dict[tuple[Fraction, ...] | str, int] = {}  # each size's formula → its number
    fitted: dict[tuple[int, ...], int] = {}  # an allocation's bytes at each size → its number
    steps = []
    exact = True
    workspace = 0
    for i in range(len(texts[0])):
        # a row per estimate, a column per event
        rows = [_events(t[i]) for t in texts]
        if len({len(r) for r in rows}) != 1:
            raise NotReplayable(f"step {i + 1} has a different number of events at another size")
        events = numpy.stack(rows)
        frees = events[0] < 0  # a free: the same distance at every size
        if (events[:, frees] != events[0, frees]).any():
            raise NotReplayable("the frees differ between sizes")
        # a cuBLAS workspace has its own size, which a replay may change
        at_workspace = [j for step, j in sorted(workspaces) if step == i and events[0, j] >= 0]
        allocations = ~frees
        allocations[at_workspace] = False
        columns = numpy.flatnonzero(allocations)
        # each distinct allocation is fitted once; sizes are numbered in the order first met
        distinct, first, inverse = _distinct_columns(events[:, columns])
        met = {int(columns[at]): k for k, at in enumerate(first)}
        if at_workspace:
            workspace = int(events[0, at_workspace[-1]])
            met[at_workspace[0]] = "workspace"
        number = numpy.empty(len(distinct), dtype=numpy.int64)
        for k in (met[j] for j in sorted(met)):
            if k == "workspace":
                sizes.setdefault("workspace", len(sizes))
                continue
            values = tuple(distinct[k].tolist())
            if values not in fitted:
                coefficients = fit_size(at_sizes, values)
                fitted[values] = sizes.setdefault(coefficients, len(sizes))
                exact = exact and all(_bytes(coefficients, b, s) == v
                                      for (b, s), v in zip(at_sizes, values))
            number[k] = fitted[values]
        ops = events[0].copy()  # frees as they are
        ops[columns] = number[inverse]
        ops[at_workspace] = sizes.get("workspace", 0)
        steps.append(",".join(map(str, ops.tolist())))
    constant = [1 if m == "1" else 0 for m in MONOMIALS]
    found = {"monomials": list(MONOMIALS),
             "sizes": [[c * workspace for c in constant] if coefficients == "workspace"
                       else [_number(c) for c in coefficients] for coefficients in sizes],
             "steps": steps, "times": list(times)}
    if exact:  # where the replay needs no check (exact_at_its_points)
        found["exact_at"] = [[b, s] for b, s in at_sizes]
    return {**found, "workspace": sizes["workspace"]} if "workspace" in sizes else found


def _bytes(coefficients: Sequence[Fraction], batch: int, seq: int) -> Fraction:
    """A fitted size's value at one size."""
    return sum(c * term(m, batch, seq) for m, c in zip(MONOMIALS, coefficients) if c)


def _events(text: str) -> numpy.ndarray:
    """One step's events, from its text (trace.numbers' values, as an array)."""
    return numpy.fromstring(text, dtype=numpy.int64, sep=",") if text \
        else numpy.empty(0, dtype=numpy.int64)


def _distinct_columns(sizes: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """The distinct columns of `sizes` (as rows), the first column of each, and the distinct
    one of every column, as numpy.unique(sizes.T, axis=0) gives them; each column compared
    as one run of bytes, which sorts faster than rows of numbers."""
    rows = numpy.ascontiguousarray(sizes.T)
    as_bytes = rows.view(numpy.dtype((numpy.void, rows.itemsize * rows.shape[1])))
    _, first, inverse = numpy.unique(as_bytes.reshape(-1), return_index=True,
                                     return_inverse=True)
    return rows[first], first, inverse.reshape(-1)


def _number(c: Fraction) -> int | float:
    return int(c) if c.denominator == 1 else float(c)


def fit_size(sizes: Sequence[tuple[int, int]], values: Sequence[int]) -> tuple[Fraction, ...]:
    """The fewest terms of MONOMIALS whose exact (rational) combination gives every value;
    a coefficient per monomial, zero for the unused ones."""
    names = list(MONOMIALS)
    if len(set(values)) == 1:  # a weight's or a state's size: the same at every size
        return tuple(Fraction(values[0]) if name == "1" else Fraction(0) for name in names)
    for slack in (0, ROUNDING_SLACK):
        for count in range(1, MAX_TERMS + 1):
            for subset in itertools.combinations(names, count):
                solution = _solve(subset, sizes, values, slack)
                if solution is not None:
                    return tuple(solution.get(name, Fraction(0)) for name in names)
    raise NotReplayable(f"no size formula of up to {MAX_TERMS} terms gives {list(values)}")


def exact_at_its_points(tmpl: dict[str, Any], sizes: Sequence[tuple[int, int]]) -> bool:
    """Whether every fitted size gives back, to the byte, the allocation it was fitted to
    at each of the estimates' own sizes. Then the replay there is the estimate's own event
    sequence, and so gives its peaks without replaying it; a size fitted within
    ROUNDING_SLACK needs the replay to say so."""
    return tmpl.get("exact_at", []) == [list(size) for size in sizes]


def _solve(subset, sizes, values, slack: int) -> dict[str, Fraction] | None:
    """Least squares in exact arithmetic, accepted only if it misses no size by more than
    `slack` bytes."""
    rows = [[term(m, b, s) for m in subset] for b, s in sizes]
    k = len(subset)
    # the normal equations, whole numbers; the elimination then divides exactly
    system = [[Fraction(sum(r[i] * r[j] for r in rows)) for j in range(k)]
              + [Fraction(sum(r[i] * v for r, v in zip(rows, values)))] for i in range(k)]
    for col in range(k):  # Gauss-Jordan; exact, so any non-zero pivot will do
        pivot = next((r for r in range(col, k) if system[r][col] != 0), None)
        if pivot is None:
            return None
        system[col], system[pivot] = system[pivot], system[col]
        for r in range(k):
            if r != col and system[r][col] != 0:
                factor = system[r][col] / system[col][col]
                system[r] = [a - factor * c for a, c in zip(system[r], system[col])]
    solution = {m: system[i][k] / system[i][i] for i, m in enumerate(subset)}
    close = all(abs(sum(c * term(m, b, s) for m, c in solution.items()) - v) <= slack
                for (b, s), v in zip(sizes, values))
    return solution if close else None


def events_at(tmpl: dict[str, Any], batch: int, seq: int,
              workspace: int | None = None) -> list[int]:
    """The template at one size as absolute events (trace.decode's form), with each cuBLAS
    workspace of `workspace` bytes (None: the estimates' own); what the widget's
    calculator.js computes before it replays them."""
    terms = [term(m, batch, seq) for m in tmpl["monomials"]]
    nbytes = [max(0, math.floor(sum(c * t for c, t in zip(coefficients, terms)) + 0.5))
              for coefficients in tmpl["sizes"]]
    if workspace is not None and "workspace" in tmpl:
        nbytes[tmpl["workspace"]] = workspace
    return trace.absolute([[nbytes[v] if v >= 0 else v for v in trace.numbers(text)]
                           for text in tmpl["steps"]], tmpl["times"])


def peaks(tmpl: dict[str, Any], batch: int, seq: int,
          workspace: int | None = None) -> tuple[int, int]:
    """(peak allocated, peak reserved) of the template replayed at one size (with cuBLAS
    workspaces of `workspace` bytes: another GPU's)."""
    report = simulate(trace.as_tuples(events_at(tmpl, batch, seq, workspace)))
    return report.peak_allocated_bytes, report.peak_reserved_bytes


def tensors_peak(tmpl: dict[str, Any], batch: int, seq: int) -> int:
    """The most bytes the step's tensors ask for at once in the template replayed at one
    size: the requests as made, the cuBLAS workspaces (as zero bytes) and the allocator's
    rounding left out (calculator.js counts the same). Within a few KiB of the estimate's
    own tensors' peak, which its tracker takes between operations."""
    sizes: list[int] = []
    live = peak = 0
    for v in events_at(tmpl, batch, seq, workspace=0):
        if v >= 0:
            sizes.append(v)
            live += v
            peak = max(peak, live)
        else:
            live -= sizes[-v - 1]
    return peak
