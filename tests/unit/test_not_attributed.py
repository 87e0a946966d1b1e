"""The not_attributed category: its place, names and colour; older results read it as 0; the
cpu backend's labelling of the allocator's blocks (cpu_allocator_blocks.py) on made-up events,
which sums to the allocator's peak; tables list it only where it has bytes. On a real step:
slow/test_kernel_estimates.py and slow/test_measure_cpu.py."""

from __future__ import annotations

import json
from pathlib import Path

from made_results import hand_made_result

from generator.measure.tracking.cpu_allocator_blocks import Block, aligned_report, label_blocks
from generator.measure.tracking.timeline import StorageLife
from generator.results import store
from generator.results.shapes import CATEGORIES
from generator.site import tables
from generator.site.labels import CATEGORY_LABELS
from generator.site.palette import CATEGORY_COLORS


def test_the_category_comes_last_named_in_both_languages_in_its_own_grey() -> None:
    assert CATEGORIES[-1] == "not_attributed"
    assert CATEGORY_LABELS["not_attributed"]["en"] == "Not attributed"
    assert CATEGORY_LABELS["not_attributed"]["zh"] == "未归属"
    colour = CATEGORY_COLORS["not_attributed"]
    assert colour not in [CATEGORY_COLORS[c] for c in CATEGORIES[:-1]]
    red, green, blue = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    assert red == green == blue  # neutral: it says nothing about what the bytes are


def test_a_result_stored_before_the_category_reads_it_as_zero(tmp_path: Path) -> None:
    data = hand_made_result()
    for name in ("live_at_peak_bytes", "category_max_bytes"):
        del data[name]["not_attributed"]
    del data["timeline"]["bytes"]["not_attributed"]
    path = tmp_path / "machine" / f"{data['key']}.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data), encoding="utf-8")
    loaded = store.load(path)
    assert loaded["live_at_peak_bytes"]["not_attributed"] == 0
    assert loaded["category_max_bytes"]["not_attributed"] == 0
    assert loaded["timeline"]["bytes"]["not_attributed"] == [0, 0, 0]


class _Tracker:
    """What label_blocks and aligned_report read from a TimedTracker."""

    def __init__(self, lives: list[tuple[StorageLife, int, int]], phases) -> None:
        self._lives = [life for life, _, _ in lives]
        self.births = [(ptr, when) for _, ptr, when in lives]
        self._phases = [(name, i) for i, (name, _) in enumerate(phases)]
        self.phase_times = [when for _, when in phases]

    def lives(self):
        return self._lives

    def phases(self):
        return self._phases


def test_blocks_take_the_tracker_labels_the_rest_is_temporary_or_not_attributed() -> None:
    step = (100, 200)
    op = (150, 160)  # a kernel: what it allocates and frees inside is its buffer
    blocks = [
        Block(ptr=1, nbytes=1000, allocated=10, ops=[], order=(0, None)),       # a parameter
        Block(ptr=2, nbytes=300, allocated=110, ops=[], order=(1, 8), freed=190),
        Block(ptr=2, nbytes=300, allocated=195, ops=[], order=(9, None)),      # address reused
        Block(ptr=3, nbytes=50, allocated=151, ops=[op], order=(2, 3), freed=155),
        Block(ptr=4, nbytes=7, allocated=152, ops=[op], order=(4, None)),      # outlives the op
    ]
    tracker = _Tracker([(StorageLife(1000, "parameters", 0), 1, 120),
                        (StorageLife(300, "activations", 1, module="layers.0"), 2, 112),
                        (StorageLife(300, "gradients", 5), 2, 196)],
                       phases=[("forward", 105), ("backward", 150)])
    label_blocks(blocks, tracker)
    assert [b.category for b in blocks] == ["parameters", "activations", "gradients",
                                            "temporaries", "not_attributed"]
    report = aligned_report(blocks, step, tracker, CATEGORIES)
    # the allocator's peak: parameter + activation + kernel buffer + the unexplained block
    assert report.peak_bytes == 1000 + 300 + 50 + 7 == sum(report.live_at_peak_bytes.values())
    assert report.live_at_peak_bytes["not_attributed"] == 7
    assert report.live_at_peak_bytes["temporaries"] == 50
    assert [p["name"] for p in report.phases] == ["forward", "backward"]
    assert report.module_activation_bytes == {"layers.0": 300}


def test_tables_list_the_category_only_where_it_has_bytes() -> None:
    seen = hand_made_result()
    unseen = hand_made_result()  # a hand-made result has no bytes there
    for name in ("live_at_peak_bytes", "category_max_bytes"):
        seen[name]["not_attributed"] = 2**20
    label = CATEGORY_LABELS["not_attributed"]["en"]
    assert label in tables.breakdown(seen, "en")
    assert label not in tables.breakdown(unseen, "en")
    assert label not in tables.precisions({"fp32": unseen}, "en")
    assert label in tables.precisions({"fp32": unseen, "amp-bf16": seen}, "en")
