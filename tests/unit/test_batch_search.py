"""The search for the largest batch that fits (generator/plan/search.py), on made-up needs
whose edge is known: straight lines, the allocator's steps, noise that is not monotone."""

from __future__ import annotations

import math
import random

import pytest

from generator.plan.search import MAX_BATCH, largest_fitting


def line(fixed: int, per_sample: int):
    return lambda batch: fixed + per_sample * batch


def counted(needed):
    """needed, recording every batch asked for."""
    asked: list[int] = []

    def ask(batch: int) -> int:
        asked.append(batch)
        return needed(batch)
    return ask, asked


@pytest.mark.parametrize("edge", [1, 2, 7, 500, 4096, 99_999])
def test_a_straight_line_is_found_to_the_batch(edge: int) -> None:
    needed, asked = counted(line(1000, 37))
    search = largest_fitting(needed, 1000 + 37 * edge + 36)
    assert search.largest == edge and not search.capped
    assert len(asked) == len(set(asked)), "a batch estimated twice"
    assert list(search.needed) == asked
    # two batches to draw the line, a few guesses of growing reach, the edge and its neighbour
    assert len(asked) <= 4 + math.ceil(math.log(edge + 1, 16)), asked


def test_batches_are_multiples_of_the_step() -> None:
    needed, asked = counted(line(1000, 37))
    search = largest_fitting(needed, 1000 + 37 * 501, step=4)
    assert search.largest == 500
    assert all(batch % 4 == 0 for batch in asked)


def test_starting_above_the_edge_searches_down() -> None:
    needed, asked = counted(line(1000, 37))
    search = largest_fitting(needed, 1000 + 37 * 20, first=64)
    assert search.largest == 20 and asked[0] == 64


def test_starting_below_the_edge_starts_there() -> None:
    needed, asked = counted(line(1000, 37))
    assert largest_fitting(needed, 1000 + 37 * 20, first=16).largest == 20
    assert asked[0] == 16


@pytest.mark.parametrize("first", [1, 8])
def test_nothing_fits(first: int) -> None:
    needed, asked = counted(line(1000, 37))
    search = largest_fitting(needed, 999, first=first)
    assert search.largest == 0 and not search.capped
    assert asked[-1] == 1 and len(asked) == (1 if first == 1 else 2)


def test_everything_fits_up_to_the_limit() -> None:
    search = largest_fitting(line(0, 1), 10**12)
    assert search.capped and search.largest == MAX_BATCH
    capped = largest_fitting(line(0, 1), 10**12, limit=100, step=3)
    assert capped.capped and capped.largest == 99


def test_a_flat_need_grows_by_doubling() -> None:
    """No slope to follow (small batches all fit in the same segments): the guesses double."""
    needed, asked = counted(lambda batch: 50 if batch < 40 else 10**6)
    assert largest_fitting(needed, 100).largest == 39
    assert asked[:4] == [1, 2, 4, 8]


def test_a_need_rising_in_steps_wider_than_a_sample_does_not_crawl() -> None:
    """A fixed 539 KiB, 86 B a sample, reserved in segments of 44,867 B (wider than 500
    samples): the line through the first batch kept landing one batch short of an edge 2,400
    batches away, one estimate a batch (429 in all). A guess on the line now reaches twice as
    far as the one before it."""
    def needed(batch: int) -> int:
        return math.ceil((551_856 + 86 * batch) / 44_867) * 44_867

    ask, asked = counted(needed)
    search = largest_fitting(ask, 807_622)
    assert needed(search.largest) <= 807_622 < needed(search.largest + 1)
    assert len(asked) <= 40, asked


@pytest.mark.parametrize("seed", range(40))
def test_an_edge_is_found_whatever_the_noise(seed: int) -> None:
    """Needs that rise with the batch in steps and dips, like the allocator's reserved peak:
    the answer fits and the batch after it does not, in a logarithmic number of estimates."""
    rng = random.Random(seed)
    fixed, per_sample, granule = rng.randint(0, 5000), rng.randint(1, 300), rng.randint(1, 900)
    dips = {rng.randint(1, 3000): rng.randint(0, 3000) for _ in range(30)}

    def needed(batch: int) -> int:
        rounded = math.ceil((fixed + per_sample * batch) / granule) * granule
        return rounded - dips.get(batch, 0)

    budget = rng.randint(fixed + per_sample, fixed + per_sample * 2000)
    step = rng.choice([1, 1, 2, 3])
    ask, asked = counted(needed)
    search = largest_fitting(ask, budget, step=step, first=rng.choice([1, step, 64]))
    if search.largest:
        assert needed(search.largest) <= budget < needed(search.largest + step)
    else:
        assert needed(step) > budget
    assert len(asked) <= 6 + 3 * math.ceil(math.log2(budget / per_sample / step + 2)), asked
