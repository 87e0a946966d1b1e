"""The largest batch that fits a memory budget, found with as few estimates as the figures
allow: each estimate takes seconds.

What a batch needs grows almost in a straight line with the batch (weights and optimizer
state fixed, activations per sample), so a line through the batches estimated so far lands
near the edge, and the batch beside that guess usually settles it. The caching allocator's
reserved peak is not strictly monotone in the batch, though (fragmentation can make batch 3
reserve more than batch 4), and a line through two small batches can mislead, so halving
steps between the guesses keep the number of estimates logarithmic. What is found is one
edge: a batch that fits beside the next one, which does not, not a proof that no larger
batch ever fits.

One search for every surface: the command line and the API call it with estimates, the pages
with fitted figures, and the calculator's docs/assets/planning.js mirrors it step for step
(its guesses are computed in floating point, as JavaScript computes them, so that both try the
same batches; a test holds the two against each other).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

#: The search stops here: a million-sample step is no training step.
MAX_BATCH = 1 << 20
#: A line through two batches may grow the next guess this many times at most, so that one
#: noisy slope costs a few halving steps rather than a guess far beyond the edge.
MAX_GROWTH = 16


@dataclass
class Search:
    """largest: the largest batch found to fit (0: not even the smallest one); needed: every
    batch estimated, in the order estimated, with what it needs; capped: the search reached
    its limit, and that batch fits."""

    largest: int = 0
    needed: dict[int, int] = field(default_factory=dict)
    capped: bool = False


def largest_fitting(needed: Callable[[int], int], budget: int, *, first: int = 1,
                    step: int = 1, limit: int = MAX_BATCH) -> Search:
    """The largest batch b, a multiple of `step`, with needed(b) <= budget, starting from
    `first` (rounded down to a multiple of step). needed(b) is called once per batch."""
    search = Search()

    def need(k: int) -> int:  # k: the batch in units of step
        if k * step not in search.needed:
            search.needed[k * step] = needed(k * step)
        return search.needed[k * step]

    def fits(k: int) -> bool:
        return need(k) <= budget

    top = max(1, limit // step)
    start = min(top, max(1, first // step))
    if fits(start):
        low, high = _grow(need, fits, start, top, budget)
        if high is None:
            search.largest, search.capped = top * step, True
            return search
    elif start == 1 or not fits(1):
        return search
    else:
        low, high = 1, start
    search.largest = _narrow(need, fits, low, high, budget) * step
    return search


def _grow(need: Callable[[int], int], fits: Callable[[int], bool], low: int, top: int,
          budget: int) -> tuple[int, int | None]:
    """The last batch found to fit and the first above it found not to (None: everything
    up to top fits).

    Where the need rises in steps larger than a batch's share (the allocator's segments), the
    line through the first batch can keep landing a batch or two short of an edge that is far
    off: each guess fits and the next is a batch or three further. So a guess on the line
    reaches at least `reach` batches, which doubles with each one that fits: a crawl of a
    thousand batches becomes ten guesses (it was one estimate every batch or three)."""
    base = low  # the line runs from the first batch to the latest that fits
    reach = 1
    while low < top:
        rise = need(low) - need(base)
        on_line = low > base and rise > 0
        if on_line:
            guess = max(low + _along(budget - need(low), low - base, rise), low + reach)
        else:
            guess = 2 * low
        guess = min(top, max(low + 1, min(guess, MAX_GROWTH * low)))
        if not fits(guess):
            return low, guess
        if on_line:
            reach *= 2
        low = guess
    return low, None


def _narrow(need: Callable[[int], int], fits: Callable[[int], bool], low: int, high: int,
            budget: int) -> int:
    """Between a batch that fits (low) and one that does not (high): a guess on the line
    between them, then its neighbour, then the middle, until they are neighbours."""
    move, last = "line", low
    while high - low > 1:
        if move == "line":
            rise = need(high) - need(low)
            guess = (low + _along(budget - need(low), high - low, rise) if rise > 0
                     else (low + high) // 2)
            move = "beside"
        elif move == "beside":
            guess = last + 1 if last == low else last - 1
            move = "middle"
        else:
            guess, move = (low + high) // 2, "line"
        guess = min(high - 1, max(low + 1, guess))
        if fits(guess):
            low = guess
        else:
            high = guess
        last = guess
    return low


def _along(room: int, span: int, rise: int) -> int:
    """How far along a line that rises `rise` over `span` batches `room` bytes reach, in
    whole batches: in floating point, as docs/assets/planning.js computes it (every figure is
    a whole number of bytes below 2**53, which a double holds exactly)."""
    return math.floor(float(room) * float(span) / float(rise))


#: The GPU counts --fewest-gpus tries: powers of two, as jobs are laid out, up to 1,024.
GPU_COUNTS = tuple(2**i for i in range(11))


def fewest_fitting(fits: Callable[[int], bool | None], counts: tuple[int, ...] = GPU_COUNTS
                   ) -> int:
    """The smallest count in `counts` (ascending) for which fits(count) is True, by halving:
    a rank's memory does not grow with the GPUs for any strategy (FSDP2 and tensor
    parallelism split more finely, DDP stays the same), so the counts that fit are a tail.
    fits() is None where the model cannot be split so (tensor parallelism past its heads):
    such a count and every larger one count as not fitting. 0: none fits."""
    low, high = 0, len(counts)  # counts[high] fits (high == len: none known to)
    while low < high:
        middle = (low + high) // 2
        if fits(counts[middle]):
            high = middle
        else:
            low = middle + 1
    return counts[high] if high < len(counts) else 0
