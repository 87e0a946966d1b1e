"""The calculator against fresh estimates at sizes its fits never saw (calculator_cases.py):
for every model and method, its replay of the setting's fitted allocation trace gives the
allocated and the reserved peak within 0.5 % of the fresh estimate's (to the byte, in fact,
where the replay holds), and the tensors' peak as the replay counts it within 0.5 % too.
Runs the cases' estimates, in parallel workers (a few minutes)."""

from __future__ import annotations

import pytest
from calculator_cases import cases, committed, fresh

from generator.site.pages.calculator import replay, verdicts

#: The issue's bound; the replay is exact where its size formulas are.
WITHIN = 0.005
CASES = cases()


def test_every_model_and_method_has_three_held_out_sizes():
    ctx, _ = committed()
    counted = {}
    for case in CASES:
        fit = case["fit"]
        counted[(fit["model"], fit["method"])] = counted.get((fit["model"], fit["method"]), 0) + 1
    tuned = {(f["model"], f["method"]) for f in ctx["fits"] if f["model"].startswith("hf:")}
    assert tuned and all(counted.get(pair, 0) >= 3 for pair in tuned), counted


def test_held_out_sizes_are_off_the_grid():
    for case in CASES:
        own = {(p["batch"], p["seq"]) for p in case["fit"]["points"]}
        assert (case["batch"], case["seq"]) not in own, case["id"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_the_replay_gives_a_fresh_estimate(case):
    ctx, _ = committed()
    fit, batch, seq = case["fit"], case["batch"], case["seq"]
    result = fresh()[case["id"]]
    assert fit["replays"], fit["replay_problem"]
    gpu = next(g for g in ctx["gpus"] if g["name"] == ctx["start"]["gpu"])
    shown = verdicts.figures(fit, gpu, batch, seq, ctx["replays"])
    assert shown["in_range"]
    truth = result["allocator"]
    assert shown["allocated"] == pytest.approx(truth["peak_allocated_bytes"], rel=WITHIN)
    assert shown["reserved"] == pytest.approx(truth["peak_reserved_bytes"], rel=WITHIN)
    template = verdicts.Predictor(fit, ctx["replays"]).template(batch)
    tensors = replay.tensors_peak(template, batch * fit["micro_batches"], seq)
    assert tensors == pytest.approx(result["peak_bytes"], rel=WITHIN)
