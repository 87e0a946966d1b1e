"""The calculator against fresh estimates at sizes its fits never saw (calculator_cases.py):
the replay of a setting's fitted allocation trace gives the allocated and the reserved peak
within 0.5 % of the fresh estimate's (to the byte, in fact, where the replay holds), and the
tensors' peak as the replay counts it within 0.5 % too. The suite keeps one case per
architecture family and method; `python -m generator validate --only calculator` runs every
model, method and size."""

from __future__ import annotations

import pytest
from calculator_cases import all_cases, cases, committed, fresh

from generator.validate.calculator import WITHIN, compare

CASES = cases()


def test_every_model_and_method_has_three_held_out_sizes():
    ctx, _ = committed()
    counted = {}
    for case in all_cases():
        fit = case["fit"]
        counted[(fit["model"], fit["method"])] = counted.get((fit["model"], fit["method"]), 0) + 1
    tuned = {(f["model"], f["method"]) for f in ctx["fits"] if f["model"].startswith("hf:")}
    assert tuned and all(counted.get(pair, 0) >= 3 for pair in tuned), counted


def test_held_out_sizes_are_off_the_grid():
    for case in all_cases():
        own = {(p["batch"], p["seq"]) for p in case["fit"]["points"]}
        assert (case["batch"], case["seq"]) not in own, case["id"]


def test_the_sample_covers_every_family_and_method():
    every = {(c["family"], c["fit"]["method"]) for c in all_cases()}
    assert {(c["family"], c["fit"]["method"]) for c in CASES} == every
    assert len(CASES) < len(all_cases())


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_the_replay_gives_a_fresh_estimate(case):
    ctx, _ = committed()
    row = compare(case, fresh()[case["id"]], ctx)
    assert case["fit"]["replays"], case["fit"]["replay_problem"]
    assert row["in_range"]
    for figure in ("allocated", "reserved", "tensors"):
        assert row[f"{figure}_ratio"] == pytest.approx(1, abs=WITHIN), (figure, row)
    assert row["within"]
