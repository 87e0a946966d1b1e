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
    sizes: dict[tuple[Fraction, ...] | str, int] = {}
    fitted: dict[tuple[int, ...], int] = {}
    steps = []
    exact = True
    for i in range(len(texts[0])):
        numbers = [trace.numbers(t[i]) for t in texts]
        if len({len(n) for n in numbers}) != 1:
            raise NotReplayable(f"step {i + 1} has a different number of events at another size")
        ops = []
        for j, values in enumerate(zip(*numbers)):
            if values[0] < 0:  # a free: the same distance at every size
                if len(set(values)) != 1:
                    raise NotReplayable("the frees differ between sizes")
                ops.append(values[0])
            elif (i, j) in workspaces:  # its own size, which a replay may change
                workspace = values[0]
                ops.append(sizes.setdefault("workspace", len(sizes)))
            else:
                if values not in fitted:
                    coefficients = fit_size([(b, s) for b, s, _ in points], values)
                    fitted[values] = sizes.setdefault(coefficients, len(sizes))
                    exact = exact and all(
                        sum(c * term(m, b, s) for m, c in zip(MONOMIALS, coefficients)) == v
                        for (b, s, _), v in zip(points, values))
                ops.append(fitted[values])
        steps.append(",".join(map(str, ops)))
    constant = [1 if m == "1" else 0 for m in MONOMIALS]
    found = {"monomials": list(MONOMIALS),
             "sizes": [[c * workspace for c in constant] if coefficients == "workspace"
                       else [_number(c) for c in coefficients] for coefficients in sizes],
             "steps": steps, "times": list(times)}
    if exact:  # where the replay needs no check (exact_at_its_points)
        found["exact_at"] = [[b, s] for b, s, _ in points]
    return {**found, "workspace": sizes["workspace"]} if "workspace" in sizes else found


def _number(c: Fraction) -> int | float:
    return int(c) if c.denominator == 1 else float(c)


def fit_size(sizes: Sequence[tuple[int, int]], values: Sequence[int]) -> tuple[Fraction, ...]:
    """The fewest terms of MONOMIALS whose exact (rational) combination gives every value;
    a coefficient per monomial, zero for the unused ones."""
    names = list(MONOMIALS)
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
    rows = [[Fraction(term(m, b, s)) for m in subset] for b, s in sizes]
    k = len(subset)
    system = [[sum(r[i] * r[j] for r in rows) for j in range(k)]
              + [sum(r[i] * v for r, v in zip(rows, values))] for i in range(k)]
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
