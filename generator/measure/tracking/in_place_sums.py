"""Gradients added up in place, as autograd does when nothing watches the step.

When two uses of a tensor send it gradients, the autograd engine adds them up in the
buffer of the node they flow to (`accumulate`, torch/csrc/autograd/input_buffer.cpp): into
the first gradient's own memory when the buffer holds the last reference to it and to its
storage and it is a plain dense tensor (`can_accumulate_inplace`), into a new tensor
otherwise. While any TorchDispatchMode is on, every tensor counts as a subclass
(`isTensorSubclassLike`, aten/src/ATen/TensorSubclassLikeUtils.h), so a tracked step, and
every step on fake tensors, takes the new tensor each time: an estimate would count, at
each such sum, a gradient-sized block that the user's own step never allocates.

`InPlaceSums` notes each sum the engine makes (an `aten.add.Tensor` with grad mode off,
while the engine runs a node, of two plain tensors of one shape on two storages, the first
dense and not a view) and, once the step is over, gives the sum the first gradient's
storage where the engine would have reused it: where that storage died the moment the sum
replaced it, which happens exactly when the buffer held its last reference. One storage
then lives from the first gradient's birth to the sum's death, as in the untracked step.

Checked against what an untracked step does, as the profiler records its ops
(tests/unit/test_in_place_sums.py on small graphs, tests/slow/test_in_place_sums_models.py on
the zoo's models): the sums folded are those it makes in place (`aten::add_`), and the rest
those it makes in a new tensor (`aten::add`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import torch

from generator.measure.tracking.timeline import StorageLife

ADD = torch.ops.aten.add.Tensor


def _plain(tensor: object) -> bool:
    """A tensor of the kind the engine may add into: neither a wrapper subclass (DTensor,
    …: their sums stay out of place in a user's step too) nor sparse, nested or a zero
    tensor. Fake tensors stand for plain ones."""
    from torch._subclasses.fake_tensor import FakeTensor

    return (type(tensor) in (torch.Tensor, FakeTensor) and tensor.layout == torch.strided
            and not tensor.is_nested and not tensor._is_zerotensor())


def _dense(tensor: torch.Tensor) -> bool:
    """Non-overlapping and dense: its elements fill a block of memory exactly, in some
    order of its dimensions (TensorImpl::is_non_overlapping_and_dense)."""
    if tensor.numel() < 2:
        return True
    dims = sorted((stride, size) for size, stride in zip(tensor.shape, tensor.stride())
                  if size != 1)
    expected = 1
    for stride, size in dims:
        if stride != expected:
            return False
        expected *= size
    return True


class InPlaceSums:
    """Use from a tracker: `note` every op as it returns, `fold` the lives after the step."""

    def __init__(self) -> None:
        self._sums: list[tuple[StorageLife, StorageLife]] = []  # (the sum, the first)
        self.folded = 0
        """How many sums the last `fold` made in place."""

    @property
    def count(self) -> int:
        """The engine's sums noted so far (each a candidate for `fold`)."""
        return len(self._sums)

    def note(self, func, args: tuple, kwargs: dict | None, out: object,
             life_of: Callable[[torch.Tensor], StorageLife | None]) -> None:
        """Note `out = func(*args)` if it is the engine adding two gradients up; life_of:
        the life the tracker keeps for a tensor's storage (None if it keeps none)."""
        if func is not ADD or kwargs or len(args) != 2 or torch.is_grad_enabled():
            return
        if torch._C._current_autograd_node() is None:  # not inside a backward pass
            return
        first, second = args
        if not (_plain(first) and _plain(second) and _plain(out)):
            return
        # A view shares its storage with its base, which it keeps alive: not the buffer's
        # alone, however soon both go.
        if not (first.shape == second.shape == out.shape and first.dtype == out.dtype
                and _dense(first) and not first._is_view()):
            return
        total, old, other = life_of(out), life_of(first), life_of(second)
        if total is None or old is None or old is other or old is total:
            return
        self._sums.append((total, old))

    def fold(self, lives: list[StorageLife], rank: dict[str, int]) -> list[StorageLife]:
        """`lives` with each sum the engine would have made in place merged into the first
        gradient's life: its place in the list, its birth and bytes; the sum's death, key
        (the storage that outlives it, matched across steps by allocator_replay.py) and the
        higher-ranked label of the two. Lives are not changed; merged ones are copies."""
        placed: list[StorageLife | None] = list(lives)
        where = {id(life): index for index, life in enumerate(lives)}
        self.folded = 0
        for total, old in self._sums:
            if old.died is None or old.died != total.born + 1:
                continue  # still referenced when the sum replaced it: no reuse
            first_at, total_at = where.get(id(old)), where.get(id(total))
            if first_at is None or total_at is None or first_at == total_at:
                continue
            first = placed[first_at]
            kept = first if rank[first.category] >= rank[total.category] else total
            placed[first_at] = replace(total, born=first.born, nbytes=first.nbytes,
                                       requested=first.requested, category=kept.category,
                                       module=kept.module)
            placed[total_at] = None
            where[id(total)] = first_at
            self.folded += 1
        return [life for life in placed if life is not None]
