"""timeline.summarise and downsample on hand-made storage lives: the peak, what is live at it,
each category's maximum, the phases, and a timeline that keeps the peak when thinned; and
frees_in_order, which gives the frees of autocast's cache one order."""

from __future__ import annotations

import itertools

from generator.measure.tracking.timeline import StorageLife, downsample, frees_in_order, summarise
from generator.results.shapes import CATEGORIES

PHASES = [("forward", 1), ("backward", 5), ("optimizer", 8)]


def step_lives() -> list[StorageLife]:
    """A small step, tick by tick (bytes live after each tick):
    0: parameters 100 and optimizer state 200 exist before the step       300
    2: an activation of 50 for backward                                    350
    3: a temporary of 30                                                   380
    4: the temporary is freed                                              350
    6: a gradient of 100 (backward began at 5)                             450  <- peak
    7: the activation is freed                                             400
    9: an optimizer temporary of 40 (optimizer began at 8), freed at 10    440, 400
    """
    return [
        StorageLife(nbytes=100, category="parameters", born=0),
        StorageLife(nbytes=200, category="optimizer_state", born=0),
        StorageLife(nbytes=50, category="activations", born=2, died=7, module="layers.0"),
        StorageLife(nbytes=30, category="temporaries", born=3, died=4),
        StorageLife(nbytes=100, category="gradients", born=6),
        StorageLife(nbytes=40, category="temporaries", born=9, died=10),
    ]


def test_the_peak_and_what_is_live_at_it() -> None:
    report = summarise(step_lives(), PHASES, end=11)
    assert report.peak_bytes == 450
    assert report.live_at_peak_bytes == {
        "parameters": 100, "gradients": 100, "optimizer_state": 200, "activations": 50,
        "autocast_copies": 0, "comm_buffers": 0, "temporaries": 0, "not_attributed": 0}
    assert sum(report.live_at_peak_bytes.values()) == report.peak_bytes
    assert report.peak_tick() == 6


def test_each_category_has_its_own_maximum() -> None:
    report = summarise(step_lives(), PHASES, end=11)
    # the temporaries' maximum (40, in the optimizer) is not what is live at the peak (0)
    assert report.category_max_bytes == {
        "parameters": 100, "gradients": 100, "optimizer_state": 200, "activations": 50,
        "autocast_copies": 0, "comm_buffers": 0, "temporaries": 40, "not_attributed": 0}
    assert list(report.category_max_bytes) == list(CATEGORIES)


def test_phases_and_the_phase_of_the_peak() -> None:
    report = summarise(step_lives(), PHASES, end=11)
    assert report.phases == [{"name": "forward", "tick": 1}, {"name": "backward", "tick": 5},
                             {"name": "optimizer", "tick": 8}]
    assert report.peak_phase() == "backward"
    assert summarise(step_lives(), [], end=11).peak_phase() is None


def test_the_timeline_lists_every_change_and_the_modules_their_activations() -> None:
    report = summarise(step_lives(), PHASES, end=11)
    timeline = report.timeline
    assert timeline["tick"] == [0, 2, 3, 4, 6, 7, 9, 10]
    assert timeline["end_tick"] == 11
    totals = [sum(point) for point in zip(*timeline["bytes"].values())]
    assert totals == [300, 350, 380, 350, 450, 400, 440, 400]
    assert report.module_activation_bytes == {"layers.0": 50}
    assert report.storages == 6


def test_nothing_tracked() -> None:
    report = summarise([], [("forward", 1)], end=2)
    assert report.peak_bytes == 0
    assert report.live_at_peak_bytes == dict.fromkeys(CATEGORIES, 0)
    assert report.timeline == {"tick": [], "end_tick": 2,
                               "bytes": {name: [] for name in CATEGORIES}}
    assert report.peak_tick() is None and report.peak_phase() is None


def test_a_custom_category_list() -> None:
    categories = CATEGORIES + ("swapped_out",)
    lives = step_lives() + [StorageLife(nbytes=25, category="swapped_out", born=5, died=7)]
    report = summarise(lives, PHASES, end=11, categories=categories)
    assert list(report.live_at_peak_bytes) == list(categories)
    assert list(report.timeline["bytes"]) == list(categories)
    assert report.peak_bytes == 475
    assert report.live_at_peak_bytes["swapped_out"] == 25
    assert report.category_max_bytes["swapped_out"] == 25
    assert sum(report.live_at_peak_bytes.values()) == report.peak_bytes


def test_categories_in_another_order() -> None:
    lives = [StorageLife(nbytes=7, category="b", born=1), StorageLife(nbytes=3, category="a",
                                                                       born=2, died=3)]
    report = summarise(lives, [], end=4, categories=("b", "a"))
    assert report.live_at_peak_bytes == {"b": 7, "a": 3}
    assert report.timeline["bytes"] == {"b": [7, 7, 7], "a": [0, 3, 0]}


def test_downsampling_keeps_the_peak() -> None:
    ticks = list(range(1, 2001))
    series = [(i % 97, 1000 - i % 13) for i in range(2000)]
    series[1234] = (5000, 5000)  # a one-tick spike
    thinned = downsample(ticks, series, end=2001, limit=100, categories=("x", "y"))
    assert len(thinned["tick"]) <= 100
    assert thinned["end_tick"] == 2001
    assert 1235 in thinned["tick"]
    at = thinned["tick"].index(1235)
    assert (thinned["bytes"]["x"][at], thinned["bytes"]["y"][at]) == (5000, 5000)
    assert thinned["tick"] == sorted(thinned["tick"])


def test_downsampling_a_short_series_keeps_it_whole() -> None:
    thinned = downsample([3, 5], [(1, 0), (2, 5)], end=6, categories=("a", "b"))
    assert thinned == {"tick": [3, 5], "end_tick": 6, "bytes": {"a": [1, 2], "b": [0, 5]}}
    assert list(downsample([], [], end=1)["bytes"]) == list(CATEGORIES)


def test_a_thinned_timeline_still_gives_the_peak_phase() -> None:
    lives = [StorageLife(nbytes=1, category="temporaries", born=t, died=t + 1)
             for t in range(10, 3000, 2)]
    lives.append(StorageLife(nbytes=10, category="activations", born=2001, died=2002))
    report = summarise(lives, [("forward", 1), ("backward", 2000), ("optimizer", 2500)],
                       end=3001)
    assert len(report.timeline["tick"]) <= 500
    assert report.peak_bytes == 10
    assert report.peak_tick() == 2001
    assert report.peak_phase() == "backward"


def test_phase_maxima_cover_each_phase_from_its_first_tick() -> None:
    """What is live as a phase begins counts for it: an optimizer step that allocates nothing
    still holds the parameters and gradients it began with."""
    from generator.measure.tracking.timeline import StorageLife as Life
    from generator.measure.tracking.timeline import summarise as run

    lives = [Life(100, "parameters", 0), Life(50, "gradients", 3), Life(30, "temporaries", 5, 6)]
    maxima = run(lives, [("forward", 1), ("backward", 2), ("optimizer", 7)], end=9).phase_max_bytes
    assert maxima["forward"]["total"] == 100
    assert maxima["backward"]["total"] == 180 and maxima["backward"]["temporaries"] == 30
    assert maxima["optimizer"]["total"] == 150 and maxima["optimizer"]["gradients"] == 50
    assert maxima["optimizer"]["temporaries"] == 0


def cache_cleared(order: tuple[int, ...]) -> list[StorageLife]:
    """Three weight casts (born 1–3) and a temporary (born 4), then the four are freed at
    ticks 5–8 in `order` (indices into the list), as clearing autocast's cache frees them
    in an order of its own; backward begins at 9, a gradient is born at 10, then two
    temporaries are freed."""
    lives = [StorageLife(nbytes=10 * (i + 1), category="autocast_copies", born=i + 1)
             for i in range(3)]
    lives.append(StorageLife(nbytes=7, category="temporaries", born=4))
    for tick, index in enumerate(order, start=5):
        lives[index].died = tick
    lives.append(StorageLife(nbytes=100, category="gradients", born=10))
    lives += [StorageLife(nbytes=5, category="temporaries", born=11, died=14),
              StorageLife(nbytes=6, category="temporaries", born=12, died=13)]
    return lives


CLEARED_PHASES = [("forward", 0), ("backward", 9)]


def test_frees_of_autocast_copies_take_one_order_whatever_order_they_came_in():
    reports = {str(summarise(frees_in_order(cache_cleared(order)), CLEARED_PHASES, end=15))
               for order in itertools.permutations(range(4))}
    assert len(reports) == 1
    placed = frees_in_order(cache_cleared((3, 1, 0, 2)))
    assert [life.died for life in placed[:4]] == [5, 6, 7, 8]  # first born, first freed


def test_only_the_timeline_inside_the_run_changes():
    recorded = cache_cleared((3, 1, 0, 2))
    before = summarise(recorded, CLEARED_PHASES, end=15)
    after = summarise(frees_in_order(recorded), CLEARED_PHASES, end=15)
    assert after.peak_bytes == before.peak_bytes
    assert after.live_at_peak_bytes == before.live_at_peak_bytes
    assert after.category_max_bytes == before.category_max_bytes
    assert after.phase_max_bytes == before.phase_max_bytes
    assert after.timeline["tick"] == before.timeline["tick"]


def test_a_run_without_autocast_copies_keeps_the_order_it_happened_in():
    recorded = cache_cleared((0, 1, 2, 3))
    placed = frees_in_order(recorded)
    assert [life.died for life in placed[-2:]] == [14, 13]  # the later-born freed first
    assert all(a is b for a, b in zip(placed, recorded))  # nothing changed, nothing copied
