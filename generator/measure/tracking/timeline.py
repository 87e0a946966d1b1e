"""From the lives of storages to the figures of a step: peak, breakdowns, timeline."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from generator.results.shapes import CATEGORIES

MAX_TIMELINE_POINTS = 500


@dataclass
class StorageLife:
    """One storage: its size, its label, and the clock ticks of its birth and death."""

    nbytes: int
    category: str
    born: int
    died: int | None = None
    module: str | None = None
    key: int = 0
    """Which storage: unique among the storages alive at one moment (its id), so that a
    storage alive across two trackers' steps can be matched (allocator_replay.py)."""
    requested: int = 0
    """The storage's own bytes, before `nbytes` rounded them to the allocator's blocks (0:
    the same as nbytes): the allocator model rounds them itself, and a trace of them can be
    fitted over sizes (allocator_replay.py, the calculator)."""


@dataclass
class TrackerReport:
    """What the tracker saw during one step; all sizes in bytes."""

    peak_bytes: int
    live_at_peak_bytes: dict[str, int]
    category_max_bytes: dict[str, int]
    timeline: dict[str, Any]
    module_activation_bytes: dict[str, int]
    storages: int = 0
    phases: list[dict[str, Any]] = field(default_factory=list)
    phase_max_bytes: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per phase, each category's largest bytes and the largest total ("total") while the
    phase lasts, what was live as it began included."""

    def peak_tick(self) -> int | None:
        """The clock tick of the peak, None if nothing was tracked. The timeline holds it:
        downsampling keeps each bucket's highest point, so its first highest point is the
        peak's."""
        totals = [sum(point) for point in zip(*self.timeline["bytes"].values())]
        return self.timeline["tick"][totals.index(max(totals))] if totals else None

    def peak_phase(self) -> str | None:
        """The phase the peak falls in (the last one begun at or before it), or None."""
        tick = self.peak_tick()
        if tick is None:
            return None
        return next((phase["name"] for phase in reversed(self.phases)
                     if phase["tick"] <= tick), None)


def the_next_step(lives: list[StorageLife]) -> list[StorageLife]:
    """The lives of the step after the one recorded, without running it: what the recorded
    step left alive (the optimizer's state it created, a GradScaler's scale) is there from
    the start, everything else happens again at the same ticks. Exact when the recorded step
    is the first and nothing it leaves alive is used differently the next time. Kept
    gradients are (zero_grad(set_to_none=False): the next backward adds into them), and so
    is GradScaler's state (made lazily in the first step), so for those the estimate runs
    the second step (estimate.py)."""
    return [replace(life, born=0) if life.died is None else replace(life) for life in lives]


def frees_in_order(lives: list[StorageLife]) -> list[StorageLife]:
    """`lives` with each run of frees that holds an autocast copy (frees one after another,
    nothing born in between) in one order: first born, first freed. When autocast exits it
    clears its cache of weight casts by walking a hash map keyed by address, so the order of
    those frees changes from run to run; in one order, an estimate's timeline repeats to the
    byte. Nothing but the timeline's points inside the run can change: every total only
    falls during it. Other runs keep the order they happened in. The lives keep their
    places in the list; the ones whose tick changes are copies."""
    dying = sorted((life.died, index) for index, life in enumerate(lives)
                   if life.died is not None)
    placed = list(lives)
    run: list[tuple[int, int]] = []
    for number, (tick, index) in enumerate(dying):
        run.append((tick, index))
        following = dying[number + 1][0] if number + 1 < len(dying) else None
        if following == tick + 1:
            continue  # the next tick frees too: the run goes on
        if any(lives[i].category == "autocast_copies" for _, i in run):
            order = sorted((i for _, i in run), key=lambda i: (lives[i].born, i))
            for (died, _), index in zip(run, order):
                if lives[index].died != died:
                    placed[index] = replace(lives[index], died=died)
        run = []
    return placed


def summarise(lives: list[StorageLife], phases: list[tuple[str, int]], end: int, *,
              categories: Sequence[str] = CATEGORIES) -> TrackerReport:
    """Sweep the births and deaths in clock order, keeping per-category totals.

    categories: every label the lives carry, in the order the report lists them."""
    categories = tuple(categories)
    index = {name: i for i, name in enumerate(categories)}
    changes: dict[int, list[int]] = {}
    for life in lives:
        cat = index[life.category]
        changes.setdefault(life.born, [0] * len(categories))[cat] += life.nbytes
        if life.died is not None:
            changes.setdefault(life.died, [0] * len(categories))[cat] -= life.nbytes
    totals = [0] * len(categories)
    maxima = [0] * len(categories)
    ticks: list[int] = []
    series: list[tuple[int, ...]] = []
    peak, peak_at = -1, 0
    for tick in sorted(changes):
        delta = changes[tick]
        totals = [t + d for t, d in zip(totals, delta)]
        maxima = [max(m, t) for m, t in zip(maxima, totals)]
        ticks.append(tick)
        series.append(tuple(totals))
        if sum(totals) > peak:
            peak, peak_at = sum(totals), len(series) - 1
    peak_breakdown = series[peak_at] if series else (0,) * len(categories)
    phase_maxima = _phase_maxima(ticks, series, phases, end, categories)
    modules: dict[str, int] = {}
    for life in lives:
        if life.category == "activations" and life.module:
            modules[life.module] = modules.get(life.module, 0) + life.nbytes
    return TrackerReport(
        peak_bytes=max(peak, 0),
        live_at_peak_bytes=dict(zip(categories, peak_breakdown)),
        category_max_bytes=dict(zip(categories, maxima)),
        timeline=downsample(ticks, series, end, categories=categories),
        module_activation_bytes=modules,
        storages=len(lives),
        phases=[{"name": name, "tick": tick} for name, tick in phases],
        phase_max_bytes=phase_maxima,
    )


def _phase_maxima(ticks: list[int], series: list[tuple[int, ...]],
                  phases: list[tuple[str, int]], end: int,
                  categories: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """Each phase's maxima over its whole interval: a value holds from its tick until the
    next change, so the one in effect as the phase begins counts (a fused optimizer step
    allocates nothing, yet holds the parameters, gradients and state it began with)."""
    found: dict[str, dict[str, int]] = {}
    starts = sorted((tick, name) for name, tick in phases)
    for number, (begin, name) in enumerate(starts):
        stop = starts[number + 1][0] if number + 1 < len(starts) else end + 1
        carried = bisect.bisect_right(ticks, begin) - 1  # the value in effect at `begin`
        inside = range(max(carried, 0), bisect.bisect_left(ticks, stop))
        points = [series[i] for i in inside] or [(0,) * len(categories)]
        maxima = {cat: max(p[c] for p in points) for c, cat in enumerate(categories)}
        maxima["total"] = max(sum(p) for p in points)
        if name in found:  # a phase entered twice (several warm-up steps): the larger
            maxima = {k: max(v, found[name][k]) for k, v in maxima.items()}
        found[name] = maxima
    return found


def downsample(ticks: list[int], series: list[tuple[int, ...]],
               end: int, limit: int = MAX_TIMELINE_POINTS, *,
               categories: Sequence[str] = CATEGORIES) -> dict[str, Any]:
    """At most `limit` points: in each bucket keep the highest total, so no spike (and in
    particular not the peak) is lost. `series` holds one total per name in `categories`."""
    if not series:
        return {"tick": [], "end_tick": end, "bytes": {name: [] for name in categories}}
    bucket = -(-len(series) // limit)
    keep = []
    for start in range(0, len(series), bucket):
        chunk = range(start, min(start + bucket, len(series)))
        keep.append(max(chunk, key=lambda i: sum(series[i])))
    return {
        "tick": [ticks[i] for i in keep],
        "end_tick": end,
        "bytes": {name: [series[i][c] for i in keep] for c, name in enumerate(categories)},
    }
