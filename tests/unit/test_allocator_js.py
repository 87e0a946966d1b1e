"""docs/assets/caching-allocator.js, the browser's copy of the caching allocator model,
gives the same peaks as the Python model (generator/allocator/caching.py) in its
default configuration: random sequences and hand-worked cases, all replayed in one node
process."""

from __future__ import annotations

import random
from pathlib import Path

from node_scripts import run_node

from generator.allocator import trace
from generator.allocator.caching import simulate

MiB, GiB = 1 << 20, 1 << 30
SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "assets" / "caching-allocator.js"
DRIVER = """
const {replayPeaks} = require(process.argv[2]);
const cases = JSON.parse(require("fs").readFileSync(process.argv[3], "utf8"));
console.log(JSON.stringify(cases.map((c) => { const p = replayPeaks(c);
  return [p.allocated, p.reserved]; })));
"""


def replay_js(cases: list[list[int]], tmp_path: Path) -> list[tuple[int, int]]:
    """Peaks (allocated, reserved) of every case, from one node process."""
    return [tuple(peaks) for peaks in run_node(SCRIPT, DRIVER, cases, tmp_path)]


def replay_python(case: list[int]) -> tuple[int, int]:
    """The same events as the JS takes them: v >= 0 allocates v bytes as the next number,
    v < 0 frees number -v - 1 (trace.decode's form)."""
    report = simulate(trace.as_tuples(case))
    return report.peak_allocated_bytes, report.peak_reserved_bytes


def random_case(rng: random.Random, length: int) -> list[int]:
    """Allocations and frees in random order. Each sequence weighs its kinds of size
    differently, so some stay in the small pool and fragment it, others mostly large.
    Some requests are a freed block's size less under 1 MiB, or just under a 2 MiB
    multiple: blocks that are not split, whose slivers count as allocated."""
    weights = [rng.random() for _ in range(6)]
    free_share = rng.uniform(0.2, 0.6)
    case, live, freed_sizes, count = [], [], [], 0
    for _ in range(length):
        if live and rng.random() < free_share:
            number, size = live.pop(rng.randrange(len(live)))
            case.append(-number - 1)
            freed_sizes.append(size)
            continue
        kind = rng.choices(range(6), weights)[0]
        if kind == 0:
            size = 0
        elif kind == 1:  # small pool, up to exactly 1 MiB, sometimes under 512 B
            size = rng.choice([rng.randint(1, 2048), rng.randint(1, MiB)])
        elif kind == 2:  # medium: they share 20 MiB segments
            size = rng.randint(MiB + 1, 10 * MiB - 1)
        elif kind == 3:  # large, up to a few GiB, each in its own segment
            size = rng.randint(10 * MiB, 3 * GiB)
        elif kind == 4:  # a 2 MiB multiple less under 1 MiB: the sliver stays, unsplit
            size = rng.randint(5, 1500) * 2 * MiB - rng.randint(0, MiB)
        else:  # a freed block's size or a little under it: reused whole or split
            base = rng.choice(freed_sizes) if freed_sizes else 30 * MiB
            size = max(0, base - rng.choice([0, rng.randint(0, MiB), rng.randint(0, 4 * MiB)]))
        case.append(size)
        live.append((count, size))
        count += 1
    rng.shuffle(live)
    case.extend(-number - 1 for number, _ in live[: rng.randrange(len(live) + 1)])
    return case


def test_random_sequences_match_python(tmp_path):
    rng = random.Random(20240611)
    cases = [random_case(rng, rng.randint(1, 250)) for _ in range(500)]
    cases.append(random_case(rng, 20_000))  # as long as a real trace
    assert replay_js(cases, tmp_path) == [replay_python(case) for case in cases]


# (events, peak allocated, peak reserved), worked by hand.
HANDCRAFTED = [
    # 19 MiB is >= 10 MiB: its own segment, rounded up to 2 MiB, 20 MiB. The 1 MiB left is
    # not over 1 MiB, so the block is not split and all 20 MiB count as allocated.
    ([19 * MiB], 20 * MiB, 20 * MiB),
    # 100 B rounds to 512 B in a 2 MiB small segment; 1 MiB fits in what is left; a second
    # 1 MiB (1 MiB - 512 B left) takes a second 2 MiB segment.
    ([100, MiB, MiB], 2 * MiB + 512, 4 * MiB),
    # Small blocks split down to 512 B: four 512 KiB requests fill one segment exactly.
    ([512 << 10] * 4 + [1], 2 * MiB + 512, 4 * MiB),
    # 1 MiB + 1 B rounds to 1 MiB + 512 B: the large pool, a shared 20 MiB segment.
    ([MiB + 1], MiB + 512, 20 * MiB),
    # From 10 MiB up a request gets its own segment: 10 MiB exactly reserves 10 MiB, one
    # step under reserves a shared 20 MiB.
    ([10 * MiB], 10 * MiB, 10 * MiB),
    ([10 * MiB - 512], 10 * MiB - 512, 20 * MiB),
    # 5 and 6 MiB share one 20 MiB segment (each split leaves over 1 MiB).
    ([5 * MiB, 6 * MiB], 11 * MiB, 20 * MiB),
    # A freed 100 MiB segment is reused whole by 99.5 MiB (0.5 MiB would be left): no new
    # segment, and 100 MiB allocated again.
    ([100 * MiB, -1, 99 * MiB + 512 * 1024], 100 * MiB, 100 * MiB),
    # ... and split by 60 MiB, whose 40 MiB rest then holds 39 MiB (1 MiB sliver unsplit).
    ([100 * MiB, -1, 60 * MiB, 39 * MiB], 100 * MiB, 100 * MiB),
    # Freed neighbours merge: two freed 5 MiB blocks become one 10 MiB block that a 10 MiB
    # request fits exactly, where the 5 MiB tail of the segment would not.
    ([5 * MiB, 5 * MiB, 5 * MiB, -1, -2, 10 * MiB], 15 * MiB, 20 * MiB),
    # Zero bytes take a number but no block; freeing it frees nothing.
    ([0, 4096, -1, -2, 0], 4096, 2 * MiB),
]


def test_handcrafted_cases(tmp_path):
    cases = [events for events, _, _ in HANDCRAFTED]
    expected = [(allocated, reserved) for _, allocated, reserved in HANDCRAFTED]
    assert [replay_python(case) for case in cases] == expected
    assert replay_js(cases, tmp_path) == expected
