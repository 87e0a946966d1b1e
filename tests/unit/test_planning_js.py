"""docs/assets/planning.js, the browser's copy of the one fit rule (plan/fit.py) and the one
largest-batch search (plan/search.py), answers as the Python does: the same verdicts over a
grid of figures, and the same batches tried and found over made-up steps whose needs grow
with the batch, unevenly and in segments (as reserved memory does), all in one node process. The search's
bounds come to the JavaScript as the render writes them into the calculator's data."""

from __future__ import annotations

import itertools
import math
import random
from pathlib import Path

from node_scripts import run_node

from generator.plan.fit import judge
from generator.plan.search import largest_fitting
from generator.site.pages.calculator import widget_constants

SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "assets" / "planning.js"
MIB, GIB = 2**20, 2**30
DRIVER = """
const planning = require(process.argv[2]);
const cases = JSON.parse(require("fs").readFileSync(process.argv[3], "utf8"));
const verdicts = cases.verdicts.map((c) => {
  const v = planning.judge(c[0], c[1], c[2], c[3]); return [v.word, v.needed, v.spare]; });
const searches = cases.searches.map((c) => {
  const need = (b) => Math.ceil((c.fixed + c.slope * b) / c.granule) * c.granule
    + ((b * 7919) % c.period) * c.jitter;
  const s = planning.largestFitting(need, c.budget, cases.bounds, c.first, c.step, c.limit);
  return [s.largest, s.capped, s.needed.map((p) => p[0])]; });
console.log(JSON.stringify({verdicts, searches}));
"""


def _node(cases: dict, tmp_path: Path) -> dict:
    return run_node(SCRIPT, DRIVER, cases, tmp_path)


def _searches() -> list[dict]:
    rng = random.Random(33)
    cases = []
    for _ in range(300):
        case = {"fixed": rng.randrange(GIB, 60 * GIB), "slope": rng.randrange(MIB, 2**31),
                "period": rng.choice([1, 3, 13, 97]), "jitter": rng.choice([0, MIB, 300 * MIB]),
                "budget": rng.choice([8, 24, 40, 80, 141, 180]) * GIB,
                "first": rng.choice([1, 1, 2, 7, 64, 1000]), "step": rng.choice([1, 1, 2, 4]),
                "limit": rng.choice([1 << 20, 1 << 20, 50]),
                # reserved in segments wider than a sample: where the line search crawled
                "granule": rng.choice([1, 1, 256 * MIB, 4 * GIB])}
        cases.append(case)
    return cases


def test_the_same_verdicts_over_a_grid(tmp_path: Path) -> None:
    grid = [[memory * MIB, allocated * MIB, None if reserved is None else reserved * MIB,
             [low * MIB, high * MIB]]
            for memory, allocated, reserved, (low, high) in itertools.product(
                [0, 10, 13, 14, 20, 23, 24, 27, 28, 100], [0, 9, 10, 11], [None, 10, 20, 21],
                [(0, 0), (4, 8), (250, 800)])]
    found = _node({"verdicts": grid, "searches": [], "bounds": None}, tmp_path)["verdicts"]
    words = {w for w, _, _ in found}
    assert words == {"yes", "maybe", "only just", "no"}  # the grid reaches every word
    for (memory, allocated, reserved, context), js in zip(grid, found):
        py = judge(memory, allocated=allocated, reserved=reserved, context=tuple(context))
        assert [py.word, py.needed_bytes, py.spare_bytes] == js, (memory, allocated, reserved)


def test_the_same_batches_tried_and_found(tmp_path: Path) -> None:
    cases = _searches()
    found = _node({"verdicts": [], "searches": cases,
                   "bounds": widget_constants()["search"]}, tmp_path)["searches"]
    edges = 0
    for case, (largest, capped, tried) in zip(cases, found):
        def need(b: int, c=case) -> int:
            # in floating point, as the JavaScript rounds up to a segment
            return (math.ceil((c["fixed"] + c["slope"] * b) / c["granule"]) * c["granule"]
                    + ((b * 7919) % c["period"]) * c["jitter"])

        py = largest_fitting(need, case["budget"], first=case["first"], step=case["step"],
                             limit=case["limit"])
        assert [py.largest, py.capped, list(py.needed)] == [largest, capped, tried], case
        edges += 0 < largest and not capped
    assert edges > 100  # most cases end at an edge between a batch that fits and one that does not
