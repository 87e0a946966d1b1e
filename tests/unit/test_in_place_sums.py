"""Gradient sums made in place where autograd makes them so in a step nobody watches
(generator/measure/tracking/in_place_sums.py): the folding of lives, and which sums, held against an
untracked step's own ops as the profiler records them."""

from __future__ import annotations

from collections import Counter

import pytest
import torch
from profiled_steps import backward_adds
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.profiler import ProfilerActivity, profile

from generator.measure.tracking.in_place_sums import InPlaceSums, _dense
from generator.measure.tracking.timeline import StorageLife
from generator.measure.tracking.tracker import PRECEDENCE, MemoryTracker
from generator.results.notes import note, text

RANK = {name: i for i, name in enumerate(PRECEDENCE)}


def _sums(*pairs: tuple[StorageLife, StorageLife]) -> InPlaceSums:
    sums = InPlaceSums()
    sums._sums.extend(pairs)
    return sums


def test_a_sum_whose_first_gradient_dies_as_it_is_made_takes_that_storage() -> None:
    first = StorageLife(nbytes=1024, category="temporaries", born=3, died=8, key=1,
                        requested=1000)
    other = StorageLife(nbytes=1024, category="temporaries", born=5, died=9, key=2)
    total = StorageLife(nbytes=1024, category="gradients", born=7, died=None, key=3)
    sums = _sums((total, first))
    lives = sums.fold([first, other, total], RANK)
    assert sums.folded == 1 and len(lives) == 2 and lives[1] is other
    merged = lives[0]
    assert (merged.born, merged.died, merged.key, merged.category, merged.nbytes,
            merged.requested) == (3, None, 3, "gradients", 1024, 1000)
    assert first.died == 8 and total.born == 7  # the lives themselves are not changed


def test_a_first_gradient_still_held_elsewhere_keeps_the_sum_apart() -> None:
    first = StorageLife(nbytes=64, category="temporaries", born=1, died=12, key=1)
    total = StorageLife(nbytes=64, category="temporaries", born=7, died=20, key=2)
    sums = _sums((total, first))
    assert sums.fold([first, total], RANK) == [first, total] and sums.folded == 0


def test_sums_in_a_row_fold_into_one_storage_with_the_higher_label() -> None:
    first = StorageLife(nbytes=64, category="activations", born=1, died=5, key=1, module="b0")
    total = StorageLife(nbytes=64, category="temporaries", born=4, died=10, key=2)
    again = StorageLife(nbytes=64, category="temporaries", born=9, died=15, key=3)
    sums = _sums((total, first), (again, total))
    lives = sums.fold([first, total, again], RANK)
    assert sums.folded == 2
    assert [(life.born, life.died, life.key, life.category, life.module)
            for life in lives] == [(1, 15, 3, "activations", "b0")]
    assert text(note("in_place_sums", count=sums.folded)).startswith(
        "gradient sums: 2 sums of two gradients made in place")


@pytest.mark.parametrize("make", [
    lambda: torch.empty(4, 6), lambda: torch.empty(4, 6).t(), lambda: torch.empty(4, 6)[:, :3],
    lambda: torch.empty(4, 6)[::2], lambda: torch.empty(6).expand(4, 6),
    lambda: torch.empty(1, 6)[:, ::2], lambda: torch.empty(0, 3), lambda: torch.empty(3, 1, 5),
    lambda: torch.empty(2, 3, 4).permute(2, 0, 1), lambda: torch.empty(8)[::3],
], ids=["contiguous", "transposed", "column-slice", "row-step", "expanded", "one-row-step",
        "empty", "size-one-dim", "permuted", "strided-1d"])
def test_dense_agrees_with_pytorch(make) -> None:
    from torch._prims_common import is_non_overlapping_and_dense_or_false

    tensor = make()
    assert _dense(tensor) == is_non_overlapping_and_dense_or_false(tensor)


# Graphs whose gradients meet: each sends two or more gradients to one tensor.
def _two_branches(x, w):  # two fresh gradients: the first goes in place
    h = x @ w
    return (h.sin() + h.cos()).sum()


def _residual(x, w):  # the skip passes its gradient on untouched, held twice
    h = x @ w
    return (h + (h * 3).tanh()).sum()


def _transposed(x, w):  # the first gradient is a view (t()) of its base: never in place
    return (x @ w + x @ w.t()).sum()


def _slices(x, w):  # gradients of slices: views of one zero-filled base
    h = x @ w
    return (h[:, :4].exp().sum() + h[:, 4:].exp().sum() + h.sum())


GRAPHS = [_two_branches, _residual, _transposed, _slices]


def _untracked_sums(graph) -> Counter:
    """The backward's additions in a plain step: 'aten::add' (a new tensor) and 'aten::add_'
    (in place)."""
    x, w = torch.randn(16, 8), torch.randn(8, 8, requires_grad=True)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        graph(x, w).backward()
    return backward_adds(prof)


def _tracked(graph, *, fake: bool) -> tuple[InPlaceSums, int, int]:
    """The sums a tracker folds, and how many lives it keeps with and without folding."""
    with FakeTensorMode() if fake else torch.no_grad():
        x, w = torch.randn(16, 8), torch.randn(8, 8)
    w.requires_grad_(True)
    model = torch.nn.Linear(1, 1)
    with FakeTensorMode(allow_non_fake_inputs=True) if fake else torch.enable_grad():
        tracker = MemoryTracker(model, torch.optim.SGD(model.parameters()), in_place_sums=True)
        with tracker:
            graph(x, w).backward()
        folded = tracker.lives()
    return tracker.sums, len(tracker._storages.all), len(folded)


@pytest.mark.parametrize("graph", GRAPHS, ids=lambda g: g.__name__.strip("_"))
def test_the_sums_made_in_place_are_the_ones_an_untracked_step_makes_in_place(graph) -> None:
    untracked = _untracked_sums(graph)
    sums, seen, kept = _tracked(graph, fake=False)
    assert sums.folded == untracked["aten::add_"]
    assert seen - kept == sums.folded


@pytest.mark.parametrize("graph", GRAPHS, ids=lambda g: g.__name__.strip("_"))
def test_fake_tensors_fold_the_same_sums_as_real_ones(graph) -> None:
    real, *_ = _tracked(graph, fake=False)
    fake, *_ = _tracked(graph, fake=True)
    assert (fake.count, fake.folded) == (real.count, real.folded)


def test_without_the_option_every_sum_keeps_its_own_storage() -> None:
    x, w = torch.randn(16, 8), torch.randn(8, 8, requires_grad=True)
    model = torch.nn.Linear(1, 1)
    tracker = MemoryTracker(model, torch.optim.SGD(model.parameters()))
    with tracker:
        _two_branches(x, w).backward()
    assert tracker.sums is None and len(tracker.lives()) == len(tracker._storages.all)
