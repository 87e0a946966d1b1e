"""The lives both trackers record: born when first seen, dead when the last tensor goes."""

from __future__ import annotations

import torch

from generator.measure.tracking.storage_lives import StorageLives


def test_a_life_ends_when_the_storage_is_freed_not_when_a_view_goes() -> None:
    lives = StorageLives()
    x = torch.empty(16)
    view = x[2:]
    life = lives.add(x.untyped_storage(), nbytes=512, category="activations", module="m")
    assert (life.nbytes, life.requested, life.category, life.module) == (512, 64, "activations",
                                                                         "m")
    assert lives.get(view.untyped_storage()) is life  # the same storage, seen through a view
    del x
    assert life.died is None
    del view
    assert life.died is not None and life.died > life.born
    assert lives.all == [life]


def test_end_gives_the_bytes_back_now_and_a_later_add_starts_a_new_life() -> None:
    lives = StorageLives()
    x = torch.empty(4)
    first = lives.add(x.untyped_storage(), nbytes=16, category="temporaries", born=0)
    assert first.born == 0
    lives.end(x.untyped_storage())
    ended = first.died
    assert ended is not None and lives.get(x.untyped_storage()) is None
    second = lives.add(x.untyped_storage(), nbytes=16, category="temporaries")
    del x
    assert first.died == ended  # the first life's reference went with its entry
    assert second.died is not None and second.born > ended
    assert lives.all == [first, second]


def test_after_forget_a_free_is_no_longer_recorded() -> None:
    lives = StorageLives()
    x = torch.empty(4)
    life = lives.add(x.untyped_storage(), nbytes=16, category="parameters")
    lives.forget()
    del x
    assert life.died is None


def test_discard_takes_lives_back_out_as_if_never_seen() -> None:
    lives = StorageLives()
    kept, dropped, unknown = torch.empty(4), torch.empty(8), torch.empty(2)
    life = lives.add(kept.untyped_storage(), nbytes=16, category="temporaries")
    gone = lives.add(dropped.untyped_storage(), nbytes=32, category="temporaries")
    lives.discard([dropped.untyped_storage(), unknown.untyped_storage()])
    assert lives.all == [life]
    assert lives.get(dropped.untyped_storage()) is None
    del dropped
    assert gone.died is None  # no longer watched
