"""The scale page's relation sentences (generator/site/pages/scale/sentences.py), each on small
synthetic rows, both where its relation holds and where it does not; the regimes the scale
study runs its strategies in, and the page's name for them."""

from __future__ import annotations

import pytest

from generator.words import Words
from generator.site.pages.scale import regime_name, sentences

GIB = 2**30
CATS = ("parameters", "gradients", "optimizer_state", "activations", "autocast_copies",
        "comm_buffers", "temporaries")


POLICY = Words("FSDP2's bf16/fp32 mixed-precision policy", "FSDP2 的 bf16/fp32 混合精度策略")


def row(n: int, peak: float | None = None, reserved: float | None = None,
        **live_gib: float) -> dict:
    """A rank's row on `n` GPUs: what is live at its peak (GiB), the peak their sum unless
    given, the reserved peak the tensors' peak unless given."""
    live = {c: int(live_gib.get(c, 0) * GIB) for c in CATS}
    peak_bytes = int(peak * GIB) if peak is not None else sum(live.values())
    return {"world_size": n, "live_at_peak_bytes": live, "peak_bytes": peak_bytes,
            "reserved_bytes": int(reserved * GIB) if reserved is not None else peak_bytes}


def both(words) -> str:
    return words.en + " | " + words.zh


# -- DDP and the GPU count ------------------------------------------------------------------
def test_ddp_rows_the_same_to_the_byte():
    text = both(sentences.ddp_count([row(1, activations=4), row(64, activations=4)]))
    assert "makes no difference" in text and "the same to the byte" in text and "4.00 GiB" in text
    assert "一个字节都不差" in text


def test_ddp_rows_that_differ_say_by_how_much():
    text = both(sentences.ddp_count([row(1, activations=4), row(64, activations=4.5)]))
    assert "makes no difference" not in text and "not the same" in text
    assert "512.0 MiB" in text and "4.50 GiB" in text and "并不完全相同" in text


def test_one_ddp_row_claims_nothing_about_the_count():
    text = both(sentences.ddp_count([row(8, activations=4)]))
    assert "difference" not in text and "8 GPUs only" in text
    assert sentences.ddp_count([]) is None


# -- what sharding divides ------------------------------------------------------------------
def item(cat: str, first: float, last: float, ideal: float = 64) -> dict:
    return {"category": cat, "first": first, "last": last, "ideal": ideal,
            "factor": first / last if last else None}


def test_shrink_as_one_over_n_and_not_at_all():
    text = both(sentences.shrink([item("parameters", 64, 1), item("optimizer_state", 128, 2.001),
                                  item("activations", 10, 10), item("autocast_copies", 3, 3)]))
    assert "Parameters and optimizer state shrink as 1/N" in text
    assert "Activations and autocast weight copies do not shrink at all" in text
    assert "full batch of its own" in text and "gathered weights" in text
    assert "step counters" not in text
    assert "shrink as 1/N" in sentences.shrink([item("parameters", 64, 1)], cpu=True).en
    assert "step counters" in sentences.shrink([item("parameters", 64, 1)], cpu=True).en


def test_shrink_that_is_neither_says_its_factor():
    text = both(sentences.shrink([item("activations", 10, 5), item("gradients", 1, 0)]))
    assert "shrink as 1/N" not in text and "do not shrink" not in text
    assert "Activations shrink by 2.00×, where 1/N would give 64×" in text
    assert "Gradients fall to nothing" in text and "缩小了 2.00×" in text
    assert sentences.shrink([]) is None


# -- what is left on many GPUs --------------------------------------------------------------
def test_floor_share_grows_with_the_gpu_count():
    lo = row(1, parameters=8, optimizer_state=16, activations=4)
    hi = row(64, parameters=0.125, optimizer_state=0.25, activations=4, temporaries=1)
    text = both(sentences.floor(lo, hi))
    assert text.startswith("So the more GPUs, the larger the share")
    assert "activations (4.00 GiB) and temporaries (1.00 GiB)" in text
    assert "所以卡越多" in text


def test_floor_share_that_does_not_grow_is_said():
    lo = row(1, parameters=1, activations=8)
    hi = row(64, parameters=1, activations=4)  # an odd pair: the state did not shrink
    text = both(sentences.floor(lo, hi))
    assert "the larger the share" not in text and "no larger a share" in text
    assert "并不比" in text


def test_stops_falling_where_every_later_doubling_pays_little():
    series = [row(1, reserved=40), row(2, reserved=24), row(4, reserved=16),
              row(8, reserved=15.8), row(16, reserved=15.7)]
    text = both(sentences.stops_falling(series, sentences.FSDP2))
    assert "stops falling at 4 GPUs" in text and "from 16.00 to 15.70 GiB" in text
    assert "4 卡就不再下降" in text
    flat = both(sentences.stops_falling([row(2, reserved=10), row(64, reserved=9.9)], POLICY))
    assert "hardly falls at all" in flat and "几乎不降" in flat
    steep = both(sentences.stops_falling([row(32, reserved=10), row(64, reserved=8)],
                                         sentences.FSDP2))
    assert "still falls from 32 GPUs to 64 GPUs, by 2.00 GiB (20.0 %)" in steep
    assert sentences.stops_falling([row(8, activations=1)], sentences.FSDP2) is None


def test_a_reserved_peak_that_rises_with_the_gpu_count_is_said():
    text = both(sentences.rises([row(2, reserved=20), row(4, reserved=21), row(8, reserved=19)],
                                sentences.FSDP2))
    assert "rises from 2 GPUs to 4 GPUs, by 1.00 GiB" in text and "反而多了" in text
    assert sentences.rises([row(2, reserved=20), row(4, reserved=20.01)], sentences.FSDP2) is None


def test_floor_levers_name_the_policy_only_where_it_makes_no_copies():
    hi = row(64, activations=4, autocast_copies=2)
    without = [row(64, activations=3)]
    text = both(sentences.floor_levers(hi, 1, without))
    assert "2.00 GiB of bf16 weight copies" in text and "shorter sequence" in text
    assert "fewer samples" not in text and "激活检查点" in text
    with_copies = [row(64, activations=3, autocast_copies=2)]
    assert "weight copies" not in sentences.floor_levers(hi, 1, with_copies).en
    assert "weight copies" not in sentences.floor_levers(hi, 1, []).en
    assert "fewer samples per GPU" in sentences.floor_levers(hi, 8, without).en


# -- one strategy against another, one regime against another ------------------------------
def versus(ddp: dict, fsdp: dict) -> dict:
    def part(cats):
        return sum(ddp["live_at_peak_bytes"][c] - fsdp["live_at_peak_bytes"][c] for c in cats)
    gap = {"total": ddp["peak_bytes"] - fsdp["peak_bytes"],
           "state": part(("parameters", "gradients", "optimizer_state")),
           "buffers": part(("comm_buffers",)),
           "compute": part(("activations", "autocast_copies", "temporaries"))}
    return {"ddp": ddp, "fsdp": fsdp, "gap": gap}


def test_strategy_gap_says_what_is_the_same():
    ddp = row(8, parameters=2, comm_buffers=1, activations=5)
    fsdp = row(8, parameters=0.25, comm_buffers=0.5, activations=5)
    text = both(sentences.strategy_gap(versus(ddp, fsdp)))
    assert "gap of 2.25 GiB: 1.75 GiB model state and 0.50 GiB communication buffers" in text
    assert "what the computation keeps" in text and "is the same in both" in text
    assert "两者相同" in text


def test_strategy_gap_with_every_part_different():
    ddp = row(8, parameters=2, comm_buffers=1, activations=6)
    fsdp = row(8, parameters=0.25, comm_buffers=0.5, activations=5)
    text = both(sentences.strategy_gap(versus(ddp, fsdp)))
    assert "is the same in both" not in text and "两者相同" not in text
    assert "1.00 GiB what the computation keeps" in text


def test_regime_gap_less_more_and_the_same():
    autocast = row(8, activations=10, autocast_copies=8, temporaries=2)
    policy = row(8, activations=7, temporaries=2)
    less = both(sentences.regime_gap(autocast, policy, POLICY))
    assert "11.00 GiB less than FSDP2 under autocast, most of it in autocast weight copies " \
           "(−8.00 GiB) and activations (−3.00 GiB)" in less
    assert "少 11.00 GiB，主要差在 autocast 权重副本" in less
    more = both(sentences.regime_gap(policy, autocast, POLICY))
    assert "11.00 GiB more" in more and "(+8.00 GiB)" in more
    same = both(sentences.regime_gap(autocast, row(8, activations=18, temporaries=2), POLICY))
    assert "the same as under autocast" in same and "相同" in same


def test_regime_gap_spread_over_many_parts_is_not_most_of_it():
    autocast = row(8, **{c: 1 for c in CATS})
    policy = row(8, **{c: 0.5 for c in CATS})  # seven parts of 0.5 GiB each: two are not most
    text = both(sentences.regime_gap(autocast, policy, POLICY))
    assert "3.50 GiB less" in text and "most of it" not in text and "the largest parts" in text


# -- the regimes ---------------------------------------------------------------------------
def test_regime_names():
    assert regime_name("amp-bf16").en == "autocast bf16"
    assert regime_name("fp32").en == "FP32"
    assert "no autocast" in regime_name("fp32", "bf16/fp32").en


def test_floor_levers_leave_out_checkpointing_where_the_step_has_it():
    hi = row(64, activations=4)
    text = both(sentences.floor_levers(hi, 1, [], checkpointing=True))
    assert "already recomputes" in text and "activation checkpointing" not in text
    assert "激活检查点：" not in text
