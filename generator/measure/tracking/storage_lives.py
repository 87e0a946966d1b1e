"""When each storage an op made was born and when it died: the core of both trackers.

The step's tracker (tracker.py) and the build's (build_trace.py) see storages as the ops make
them; a weak reference to each says when its memory is given back, which is when the last
tensor on it goes. A storage is known by its id while it lives, which is also how a storage
alive across two trackers is matched (allocator_replay.py): ids are unique among live objects.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from dataclasses import dataclass, field

import torch

from generator.measure.tracking.timeline import StorageLife


@dataclass
class _Live:
    life: StorageLife
    ref: weakref.ref = field(repr=False)


class StorageLives:
    """The lives of the storages seen so far, on one clock. Thread-safe: a free can fire
    from the garbage collector inside a locked section, or on autograd's thread."""

    def __init__(self) -> None:
        self._clock = itertools.count(1)
        self.lock = threading.RLock()
        self._live: dict[int, _Live] = {}
        self.all: list[StorageLife] = []
        """Every life, in the order the storages were first seen."""

    def tick(self) -> int:
        """The next tick of the clock (births, deaths and phase marks share it)."""
        return next(self._clock)

    def get(self, storage: torch.UntypedStorage) -> StorageLife | None:
        """The life of `storage` if it is alive and known."""
        entry = self._live.get(id(storage))
        return None if entry is None else entry.life

    def add(self, storage: torch.UntypedStorage, *, nbytes: int, category: str,
            born: int | None = None, module: str | None = None) -> StorageLife:
        """Start the life of a storage not known yet: born now, or at tick `born`. nbytes:
        what it counts for (its own bytes rounded to the allocator's blocks, say)."""
        key = id(storage)
        with self.lock:
            life = StorageLife(nbytes=nbytes, category=category,
                               born=self.tick() if born is None else born, module=module,
                               key=key, requested=storage.nbytes())
            ref = weakref.ref(storage, lambda _ref: self._died(key, life))
            self._live[key] = _Live(life, ref)
            self.all.append(life)
        return life

    def end(self, storage: torch.UntypedStorage) -> None:
        """The storage gives its bytes back now although the object lives on (e.g. it is
        about to be resized); a later `add` starts a new life. Dropping the entry drops its
        weak reference too, so no callback ends the life a second time."""
        with self.lock:
            entry = self._live.pop(id(storage), None)
            if entry is not None:
                entry.life.died = self.tick()

    def discard(self, storages: list[torch.UntypedStorage]) -> None:
        """Take these storages' lives back out, as if never seen: what they hold is not
        memory the step's device counts (say, a GPU step's host-side scalars)."""
        with self.lock:
            gone = {id(entry.life) for entry in
                    (self._live.pop(id(storage), None) for storage in storages)
                    if entry is not None}
            if gone:
                self.all = [life for life in self.all if id(life) not in gone]

    def forget(self) -> None:
        """Stop watching: the lives still open stay open, whatever happens to them later."""
        with self.lock:
            self._live.clear()

    def _died(self, key: int, life: StorageLife) -> None:
        with self.lock:
            current = self._live.get(key)
            if current is None or current.life is not life:
                return  # already ended (end) or no longer watched (forget)
            life.died = self.tick()
            del self._live[key]
