"""The allocation sequence the allocator simulation replays (allocator_replay.py): storages alive
before a step are allocated first, births and deaths keep their order, a storage alive
across steps is one allocation, and the cuBLAS workspaces come as forward and backward begin."""

from __future__ import annotations

from generator.allocator import trace
from generator.allocator.caching import simulate
from generator.measure.emulation.allocator_replay import TrackedSteps, allocation_events, predict
from generator.measure.tracking.timeline import StorageLife

MIB = 2**20


def life(nbytes: int, born: int, died: int | None, key: int, category: str = "temporaries"):
    return StorageLife(nbytes=nbytes, category=category, born=born, died=died, key=key)


def test_parameters_come_first_then_births_and_deaths_in_order() -> None:
    step = TrackedSteps([life(100, 0, None, key=1, category="parameters"),
                         life(200, 5, 9, key=2), life(300, 7, None, key=3)])
    events = allocation_events([step])
    assert [e[0] for e in events] == ["alloc", "alloc", "alloc", "free"]
    assert [e[2] for e in events if e[0] == "alloc"] == [100, 200, 300]
    assert events[3] == ("free", events[1][1])  # the 200-byte storage, freed at tick 9


def test_a_storage_alive_across_steps_is_allocated_once() -> None:
    state = life(MIB, 4, None, key=7, category="optimizer_state")
    warm = TrackedSteps([life(MIB, 0, None, key=1, category="parameters"), state])
    measured = TrackedSteps([life(MIB, 0, None, key=1, category="parameters"),
                             life(MIB, 0, None, key=7, category="optimizer_state"),
                             life(2 * MIB, 3, 6, key=9)])
    events = allocation_events([warm, measured], replays=2)
    allocs = [e for e in events if e[0] == "alloc"]
    # parameters, state, then the measured step's temporary in each of three steps
    assert [e[2] for e in allocs] == [MIB, MIB, 2 * MIB, 2 * MIB, 2 * MIB]
    assert sum(e[0] == "free" for e in events) == 3


def _live_at_the_end(events: list[tuple]) -> set:
    """The allocations still live after the events, failing on a free of one not live."""
    live: set = set()
    for event in events:
        if event[0] == "alloc":
            live.add(event[1])
        else:
            live.remove(event[1])  # never frees what is not live
    return live


def test_a_replaced_survivor_is_matched_by_size_in_a_replay() -> None:
    """A kept gradient (zero_grad(set_to_none=False)) is freed and made anew each step."""
    grad_old = life(MIB, 0, 5, key=1, category="gradients")
    grad_new = life(MIB, 4, None, key=2, category="gradients")
    events = allocation_events([TrackedSteps([grad_old, grad_new])], replays=1)
    assert len(_live_at_the_end(events)) == 1


def test_a_survivor_matched_by_its_key_is_not_taken_again_by_size() -> None:
    """Gradients let go before backward (zero_grad between forward and backward): a new
    gradient may get the key of an old one, freed before it was born. In a replay the old
    gradient of that key is the new one of the step before, and the other old gradient of the
    same size must take the other new one, not free that one a second time; a key matches
    only a storage of its own size."""
    for old in ([1, 2], [2, 1]):  # the one matched by key first in the list, or last
        step = TrackedSteps([life(MIB, 0, 3, key=old[0], category="gradients"),
                             life(MIB, 0, 3, key=old[1], category="gradients"),
                             life(MIB, 5, None, key=1, category="gradients"),
                             life(MIB, 6, None, key=3, category="gradients"),
                             life(2 * MIB, 0, 3, key=4, category="gradients"),
                             life(2 * MIB, 7, None, key=2, category="gradients")])
        events = allocation_events([step], replays=2)
        sizes = {e[1]: e[2] for e in events if e[0] == "alloc"}
        # each old gradient frees a new one of its own size
        assert sorted(sizes[e[1]] for e in events if e[0] == "free") == \
            sorted([MIB, MIB, 2 * MIB] * 3)  # the step and its two replays
        assert len(_live_at_the_end(events)) == 3


def test_workspaces_are_taken_as_forward_and_backward_begin() -> None:
    step = TrackedSteps([life(MIB, 3, 8, key=1)], phases=[("forward", 1), ("backward", 5)])
    events = allocation_events([step], workspace_bytes=32 * MIB)
    assert [(e[0], e[2]) for e in events if e[0] == "alloc"] == \
        [("alloc", 32 * MIB), ("alloc", MIB), ("alloc", 32 * MIB)]


def test_workspaces_wait_for_the_first_step_that_runs_forward() -> None:
    """A leading step without phases (building the model) runs no matmul: no workspace
    there; the step after it takes them, once."""
    building = TrackedSteps([life(MIB, 1, None, key=1, category="parameters"),
                             life(2 * MIB, 2, 3, key=2)])
    step = TrackedSteps([life(MIB, 0, None, key=1, category="parameters")],
                        phases=[("forward", 1), ("backward", 5)])
    events = allocation_events([building, step], replays=2, workspace_bytes=32 * MIB)
    sizes = [e[2] for e in events if e[0] == "alloc"]
    assert sizes == [MIB, 2 * MIB, 32 * MIB, 32 * MIB]


def test_predict_counts_workspaces_in_allocated_and_reserved() -> None:
    step = TrackedSteps([life(5 * MIB, 3, 8, key=1)], phases=[("forward", 1), ("backward", 5)])
    without = predict([step], replays=0)
    with_ws = predict([step], replays=0, workspace_bytes=32 * MIB)
    assert without["peak_allocated_bytes"] == 5 * MIB
    assert without["peak_reserved_bytes"] == 20 * MIB  # a 5 MiB request: a 20 MiB segment
    assert with_ws["peak_allocated_bytes"] == 5 * MIB + 2 * 32 * MIB
    assert with_ws["workspace_bytes"] == 64 * MIB
    assert with_ws["peak_reserved_bytes"] == 20 * MIB + 2 * 32 * MIB


def test_a_budget_below_what_the_allocator_needs_is_out_of_memory() -> None:
    from generator.experiment import Experiment
    from generator.measure.backends import measure

    fits = measure(Experiment(model="tiny", batch_size=2, seq_len=16))
    needed = fits["allocator"]["peak_allocated_bytes"] + fits["allocator"]["context_bytes"][0]
    small = measure(Experiment(model="tiny", batch_size=2, seq_len=16, gpu_memory=needed - MIB))
    assert small["error"] == "out_of_memory" and "out of memory" in small["error_detail"]
    roomy = measure(Experiment(model="tiny", batch_size=2, seq_len=16, gpu_memory=needed + 64 * MIB))
    assert roomy.get("error") is None


def test_the_allocator_is_given_the_bytes_asked_for_and_can_keep_its_trace() -> None:
    """Lives count rounded bytes; the allocator rounds by itself, and a trace keeps the
    bytes asked for, which are what a size formula gives (the calculator's replay)."""
    asked = StorageLife(nbytes=1536, category="activations", born=2, died=5, key=3,
                        requested=1100)
    step = TrackedSteps([life(MIB, 0, None, key=1, category="parameters"), asked])
    events = allocation_events([step])
    assert [e[2] for e in events if e[0] == "alloc"] == [MIB, 1100]
    kept = predict([step], replays=2, keep_trace=True)
    assert kept["trace"]["times"] == [1, 2]  # the replays read like the step they repeat
    again = simulate(trace.as_tuples(trace.decode(kept["trace"])))
    assert (again.peak_allocated_bytes, again.peak_reserved_bytes) == \
        (kept["peak_allocated_bytes"], kept["peak_reserved_bytes"])
    assert "trace" not in predict([step])


def test_what_building_frees_stays_cached_and_the_peaks_count_from_the_first_step() -> None:
    """A model built on the GPU: its untied output weight (30 MiB) is allocated and freed
    while it is built. The step's 30 MiB activation then reuses that cached segment instead
    of taking one of its own, and building's peak (weights + the untied copy) is not the
    step's: the peaks start again, as after torch.cuda.reset_peak_memory_stats()."""
    weights = life(40 * MIB, 1, None, key=1, category="parameters")
    building = TrackedSteps([weights, life(30 * MIB, 2, 3, key=2)])
    step = TrackedSteps([life(40 * MIB, 0, None, key=1, category="parameters"),
                         life(30 * MIB, 3, 6, key=3), life(MIB // 2, 4, 5, key=4)])
    moved = predict([step], replays=0)
    built = predict([step], replays=0, building=building)
    assert moved["peak_reserved_bytes"] == (40 + 30 + 2) * MIB and "freed_while_building_bytes" \
        not in moved
    assert built["freed_while_building_bytes"] == 30 * MIB
    assert built["peak_reserved_bytes"] == moved["peak_reserved_bytes"]  # the same segment
    assert built["peak_allocated_bytes"] == moved["peak_allocated_bytes"] == 70 * MIB + 512 * 1024
    # a building that leaves a segment the step cannot use adds it to reserved
    wide = TrackedSteps([weights, life(25 * MIB, 2, 3, key=2)])
    assert predict([step], replays=0, building=wide)["peak_reserved_bytes"] == \
        moved["peak_reserved_bytes"] + 26 * MIB


def test_a_building_that_does_not_fit_is_out_of_memory_before_any_step() -> None:
    building = TrackedSteps([life(40 * MIB, 1, None, key=1, category="parameters"),
                             life(40 * MIB, 2, 3, key=2)])
    step = TrackedSteps([life(40 * MIB, 0, None, key=1, category="parameters")])
    report = predict([step], replays=0, building=building, capacity=60 * MIB)
    assert report["out_of_memory"] and report["peak_allocated_bytes"] == 40 * MIB
