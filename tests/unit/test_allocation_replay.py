"""Allocation traces (generator/allocator/trace.py) and the calculator's replay of them
(generator/plan/predictor/replay.py): a trace decodes to the events it was made
from, up to the order of frees with no allocation between them, which cannot change what
the allocator reserves; a step whose sizes are polynomials in batch and sequence length is
fitted from six sizes and replays a seventh exactly; traces that differ are refused."""

from __future__ import annotations

import random

import pytest

from generator.allocator import trace
from generator.allocator.caching import simulate
from generator.plan.predictor import replay

GRID = [(32, 64), (4, 512), (2048, 64), (256, 512), (64, 256), (256, 128)]
MIB = 1 << 20


def _step_events(batch: int, seq: int, layers: int = 3,
                 masked: bool = True) -> tuple[list[tuple], list[int]]:
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
                                 ("masked", round(0.15 * batch * seq) * 8 if masked else 0),
                                 ("pos", seq * 8)):
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


def _label_copy_events(batch: int, seq: int) -> tuple[list[tuple], list[int]]:
    """The toy step of a causal LM: with two samples or more, transformers copies the shifted
    labels (b·s·8 bytes); with one, the slice is contiguous already and nothing is copied."""
    events, starts = _step_events(batch, seq)
    if batch > 1:
        events = [("alloc", "labels", batch * seq * 8)] + events + [("free", "labels")]
        starts = [0] + [s + 1 for s in starts[1:]]
    return events, starts


def _result(batch: int, seq: int) -> dict:
    from generator.allocator.caching import simulate as run

    events, starts = _label_copy_events(batch, seq)
    truth = run(events)
    return {"key": f"toy-b{batch}-s{seq}", "experiment": {"batch_size": batch, "seq_len": seq},
            "allocator": {"trace": trace.encode(events, starts),
                          "peak_allocated_bytes": truth.peak_allocated_bytes,
                          "peak_reserved_bytes": truth.peak_reserved_bytes}}


def test_batch_one_gets_a_template_of_its_own() -> None:
    from generator.site.calculator_grid import fits

    group = [_result(1, s) for s in (64, 128, 256, 512)] + [_result(b, s) for b, s in GRID[:5]]
    templates, entries, problem = fits._templates(group, "toy")
    assert problem is None
    assert entries == [{"name": "toy-b1", "batch": [1, 1]}, {"name": "toy-b2", "batch": [4, None]}]
    for batch, seq in ((1, 300), (3, 100), (40, 200)):
        truth = simulate(_label_copy_events(batch, seq)[0])
        template = templates["toy-b1" if batch == 1 else "toy-b2"]
        assert replay.peaks(template, batch, seq) == (truth.peak_allocated_bytes,
                                                      truth.peak_reserved_bytes)


def test_a_template_exact_at_its_points_needs_no_replay_there() -> None:
    traces = [(b, s, trace.encode(*_step_events(b, s, layers=2))) for b, s in GRID]
    template = replay.template(traces)
    # the masked-LM count is rounded: fitted within the slack, so its points must be replayed
    assert not replay.exact_at_its_points(template, GRID)
    exact = replay.template([(b, s, trace.encode(*_step_events(b, s, layers=2, masked=False)))
                             for b, s in GRID])
    assert replay.exact_at_its_points(exact, GRID)
    assert not replay.exact_at_its_points(exact, GRID[:-1])  # other points: replay them
