"""The calculator's fitting (generator/site/pages/calculator/): a plane in batch·seq and
batch·seq² recovered from synthetic points, the floor of small steps, the fitted range, and
the verdicts the widget prints."""

from __future__ import annotations

import pytest

from generator.plan.predictor import verdicts
from generator.site.pages.calculator import gpu_data
from generator.plan.predictor.planes import FitRange, Point, fit_plane, predict

SIZES = [(32, 64), (4, 512), (2048, 64), (256, 512), (64, 256), (256, 128)]
TRUE = {"fixed": 2.1e9, "per_token": 7.5e5, "per_token_sq": 1.3e3}


def _value(batch: int, seq: int) -> float:
    return (TRUE["fixed"] + TRUE["per_token"] * batch * seq
            + TRUE["per_token_sq"] * batch * seq * seq)


def test_coefficients_recovered_from_exact_points():
    fit = fit_plane([Point(b, s, _value(b, s)) for b, s in SIZES])
    assert fit.fixed == pytest.approx(TRUE["fixed"], rel=1e-9)
    assert fit.per_token == pytest.approx(TRUE["per_token"], rel=1e-9)
    assert fit.per_token_sq == pytest.approx(TRUE["per_token_sq"], rel=1e-9)
    assert fit.max_rel_residual < 1e-9 and fit.spread < 1e-9
    assert fit(100, 300) == pytest.approx(_value(100, 300), rel=1e-9)


def test_noise_shows_in_the_spread():
    noise = [1.03, 0.98, 1.0, 1.01, 0.97, 1.02]
    fit = fit_plane([Point(b, s, _value(b, s) * n) for (b, s), n in zip(SIZES, noise)])
    assert 0.01 < fit.max_rel_residual < 0.05
    assert fit.spread >= fit.max_rel_residual  # leave-one-out is the harder test


def test_floor_points_stay_off_the_plane():
    floor = 5e9  # the optimizer step's peak, above the plane at the smallest size
    points = [Point(b, s, _value(b, s)) for b, s in SIZES[1:]] + [Point(1, 64, floor, floor=True)]
    fit = fit_plane(points)
    assert fit.per_token == pytest.approx(TRUE["per_token"], rel=1e-9)
    assert fit.floor == floor
    assert fit(1, 64) == floor and fit(256, 512) == pytest.approx(_value(256, 512))
    assert fit_plane(points, use_floor=False).floor == 0


def test_one_sequence_length_is_refused():
    with pytest.raises(ValueError, match="collinear|three points"):
        fit_plane([Point(b, 128, _value(b, 128)) for b in (8, 16, 32, 64)])


def test_out_of_range_is_flagged():
    fitted = FitRange.of([Point(b, s, _value(b, s)) for b, s in SIZES])
    assert fitted.tokens == (2048, 131072) and fitted.seq == (64, 512)
    assert fitted.contains(64, 256)
    assert not fitted.contains(1, 128)        # too few tokens
    assert not fitted.contains(32, 1024)      # sequence beyond the fitted ones
    assert not fitted.contains(4096, 64)      # too many tokens


def _fit_dict(spread: float = 0.1) -> dict:
    coefficients = {**TRUE, "floor": 0.0}
    return {"allocated": coefficients, "reserved": {**coefficients, "spread": spread},
            "context_bytes": [450 * 2**20, 1024 * 2**20],
            "range": {"tokens": [2048, 131072], "seq": [64, 512]}}


def test_verdicts_and_largest_batch_agree():
    fit = _fit_dict()
    gpu = next(g for g in gpu_data() if g["short_name"] == "RTX 4090")
    most = verdicts.largest_batch(fit, gpu, 128)
    assert most > 0
    assert verdicts.verdict(fit, gpu, most, 128).word == "yes"
    assert verdicts.verdict(fit, gpu, most + 1, 128).word != "yes"
    huge = most * 10
    assert verdicts.verdict(fit, gpu, huge, 128).word == "no"
    shown = verdicts.figures(fit, gpu, 64, 256)
    assert shown["allocated"] == predict(fit["allocated"], 64, 256) and shown["in_range"]
    assert shown["smi"][1] - shown["smi"][0] == (900 - 250) * 2**20  # Ada's context range
    assert not verdicts.figures(fit, gpu, 1, 64)["in_range"]


def test_every_gpu_of_the_catalogue_with_what_the_rule_needs():
    data = gpu_data()
    assert [g["short_name"] for g in data][:3] == ["RTX 3060", "RTX 3070", "RTX 3090"]
    for gpu in data:
        assert gpu["memory_bytes"] < gpu["smi_total_mib"] * 2**20  # the driver keeps some
        assert gpu["workspace_bytes"] in (8_519_680, 32 * 2**20)
        assert 0 < gpu["context_bytes"][0] < gpu["context_bytes"][1]


def _fit_with(replays, micro=1):
    return {"replays": replays, "micro_batches": micro,
            "allocated": {**TRUE, "floor": 0.0}, "reserved": {**TRUE, "floor": 0.0}}


def test_batch_one_replays_its_own_template(monkeypatch):
    """One sample and more are different steps for a causal LM: the predictor picks the
    template whose batches hold the batch asked, and replays a setting of micro-batches at
    their whole batch."""
    seen = []
    monkeypatch.setattr(verdicts.replay, "peaks",
                        lambda t, b, s, w=None: seen.append((t["id"], b, s)) or (1, 2))
    fit = _fit_with([{"name": "one", "batch": [1, 1]}, {"name": "more", "batch": [2, None]}],
                    micro=2)
    pred = verdicts.Predictor(fit, {"one": {"id": "one"}, "more": {"id": "more"}})
    pred.peaks(1, 512)
    pred.peaks(7, 512)
    assert seen == [("one", 2, 512), ("more", 14, 512)]
    assert verdicts.Predictor(fit, {"more": {"id": "more"}}).template(1) is None


def test_without_a_template_the_planes_answer():
    fit = _fit_with([])
    allocated, reserved = verdicts.Predictor(fit, {}).peaks(64, 256)
    assert allocated == pytest.approx(_value(64, 256)) and reserved == allocated


def test_a_share_of_the_peak_may_be_zero():
    """Categories are fitted by plain least squares: a category that is zero at some sizes
    (gradients before backward) has no relative error to weigh."""
    from generator.plan.predictor.planes import fit_share

    flat = fit_share([Point(b, s, 0.0) for b, s in SIZES])
    assert all(abs(v) < 1e-6 for v in flat.values())
    grow = fit_share([Point(b, s, 5.0 + 2.0 * b * s) for b, s in SIZES])
    assert grow["fixed"] == pytest.approx(5.0, abs=1e-3)
    assert grow["per_token"] == pytest.approx(2.0, rel=1e-9)
