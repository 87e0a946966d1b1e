"""Allocation traces (generator/allocator/trace.py) and the calculator's replay of them
(generator/site/pages/calculator/replay.py): a trace decodes to the events it was made
from, up to the order of frees with no allocation between them, which cannot change what
the allocator reserves; a step whose sizes are polynomials in batch and sequence length is
fitted from six sizes and replays a seventh exactly; traces that differ are refused."""

from __future__ import annotations

import random

import pytest

from generator.allocator import trace
from generator.allocator.caching import simulate
from generator.site.pages.calculator import replay

GRID = [(32, 64), (4, 512), (2048, 64), (256, 512), (64, 256), (256, 128)]
MIB = 1 << 20


def _step_events(batch: int, seq: int, layers: int = 3) -> tuple[list[tuple], list[int]]:
    """Two steps of a toy transformer: weights, then per layer an activation (b·s·768·4),
    scores (b·12·s²·4) and a mask count rounded like masked-LM positions, freed in reverse;
    the second step repeats the first's activations; weights stay."""
    events: list[tuple] = [("alloc", ("w", i), 9 * MIB + 512 * i) for i in range(4)]
    starts = [0]
    for step in range(3):
        if step:
            starts.append(len(events))
        made = []
        for layer in range(layers):
            for name, nbytes in (("act", batch * seq * 768 * 4),
                                 ("scores", batch * 12 * seq * seq * 4),
                                 ("masked", round(0.15 * batch * seq) * 8), ("pos", seq * 8)):
                key = (step, layer, name)
                events.append(("alloc", key, nbytes))
                made.append(key)
        events += [("free", key) for key in reversed(made)]
    return events, starts


def test_a_trace_decodes_to_its_events() -> None:
    events, starts = _step_events(8, 128)
    encoded = trace.encode(events, starts)
    assert encoded["times"] == [1, 2]  # the last two steps read the same
    decoded = trace.as_tuples(trace.decode(encoded))
    assert [e[0] for e in decoded] == [e[0] for e in events]
    assert [e[2] for e in decoded if e[0] == "alloc"] == [e[2] for e in events if e[0] == "alloc"]
    assert simulate(decoded) == simulate(events)


def test_frees_between_allocations_are_sorted_and_peaks_unchanged() -> None:
    rng = random.Random(7)
    events, starts = _step_events(16, 64)
    shuffled, run = [], []
    for event in events + [("alloc", "end", 512)]:  # shuffle each run of frees
        if event[0] == "free":
            run.append(event)
            continue
        rng.shuffle(run)
        shuffled += run + [event]
        run = []
    first, second = trace.encode(events, starts), trace.encode(shuffled[:-1], starts)
    assert first == second
    assert simulate(shuffled[:-1]) == simulate(events)


def test_sizes_are_fitted_over_the_grid_and_replay_off_it() -> None:
    traces = [(b, s, trace.encode(*_step_events(b, s))) for b, s in GRID]
    template = replay.template(traces)
    # weights (4 constants), activation, scores, mask count, positions: no two alike
    assert len(template["sizes"]) == 8
    for batch, seq in GRID + [(48, 96), (3, 77), (100, 300)]:
        events, _ = _step_events(batch, seq)
        truth = simulate(events)
        assert replay.peaks(template, batch, seq) == (truth.peak_allocated_bytes,
                                                      truth.peak_reserved_bytes)


def test_a_size_formula_needs_its_terms() -> None:
    sizes = [(b, s) for b, s in GRID]
    assert replay.fit_size(sizes, [b * s * s * 48 + s * s * 4 for b, s in sizes])[4:] == (4, 48)
    with pytest.raises(replay.NotReplayable, match="no size formula"):
        replay.fit_size(sizes, [b ** 2 * 4 for b, s in sizes])  # b² is no term of a step


def test_traces_that_differ_are_refused() -> None:
    traces = [(b, s, trace.encode(*_step_events(b, s))) for b, s in GRID]
    with pytest.raises(replay.NotReplayable, match="number of events"):
        replay.template(traces[:-1] + [(256, 128, trace.encode(*_step_events(256, 128, layers=4)))])
    with pytest.raises(replay.NotReplayable, match="cannot check"):
        replay.template(traces[:3])
