"""The scale page's relation sentences (generator/site/pages/scale/sentences.py and
tensor_parallel.py), each on small
synthetic rows, both where its relation holds and where it does not; the regimes the scale
study runs its strategies in, and the page's name for them."""

from __future__ import annotations

import pytest

from generator.words import Words
from generator.site.pages.scale import regime_name, sentences, tensor_parallel

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
    series = [row(1, peak=40), row(2, peak=24), row(4, peak=16), row(8, peak=15.8),
              row(16, peak=15.7)]
    text = both(sentences.stops_falling(series, sentences.FSDP2))
    assert "tensors' peak per GPU stops falling at 4 GPUs" in text
    assert "from 16.00 to 15.70 GiB" in text and "4 卡就不再下降" in text
    flat = both(sentences.stops_falling([row(2, peak=10), row(64, peak=9.9)], POLICY))
    assert "hardly falls at all" in flat and "几乎不降" in flat
    steep = both(sentences.stops_falling([row(32, peak=10), row(64, peak=8)],
                                         sentences.FSDP2))
    assert "still falls from 32 GPUs to 64 GPUs, by 2.00 GiB (20.0 %)" in steep
    assert sentences.stops_falling([row(8, activations=1)], sentences.FSDP2) is None


def test_stops_falling_reads_the_tensors_peak_not_the_reserved_one():
    # the reserved peak drops 20 % from 8 to 16 GPUs, the tensors' peak 2 %: placement
    series = [row(8, peak=10, reserved=15), row(16, peak=9.8, reserved=12)]
    text = both(sentences.stops_falling(series, sentences.FSDP2))
    assert "hardly falls at all" in text and "from 10.00 to 9.80 GiB" in text
    assert "12.00" not in text


def test_a_reserved_peak_that_rises_with_the_tensors_peak_is_said_on_the_tensors():
    text = both(sentences.reserved_moves([row(2, peak=18, reserved=20),
                                          row(4, peak=19, reserved=21),
                                          row(8, peak=17, reserved=19)], sentences.FSDP2))
    assert "tensors' peak per GPU rises from 2 GPUs to 4 GPUs, by 1.00 GiB" in text
    assert "(the reserved peak by 1.00 GiB)" in text and "反而多了" in text
    assert sentences.reserved_moves([row(2, reserved=20), row(4, reserved=20.01)],
                                    sentences.FSDP2) is None


def test_a_reserved_peak_that_rises_alone_is_placement():
    def placed(n, reserved, other):
        r = row(n, peak=25.82, reserved=reserved)
        return {**r, "workspace_bytes": 64 * 2**20, "replays": {16 * 2**20: int(other * GIB)}}

    series = [placed(2, 33.78, 31.81), placed(8, 29.65, 29.64), placed(64, 33.55, 29.62)]
    text = both(sentences.reserved_moves(series, sentences.FSDP2))
    assert "tensors' peak per GPU is the same on 2, 8 and 64 GPUs (25.82 GiB)" in text
    assert "moves between 29.65 and 33.78 GiB (from 8 GPUs to 64 GPUs it rises by 3.90 GiB)" \
        in text
    assert "where the simulated caching allocator places its blocks" in text
    assert "workspace of 16.0 MiB instead of 64.0 MiB, the same ranks reserve between 29.62 " \
           "and 31.81 GiB" in text
    assert "单卡张量峰值都一样" in text and "摆放内存块" in text
    # without replays: no figures of them; a tensors' peak that differs but does not rise
    bare = both(sentences.reserved_moves([row(2, peak=26, reserved=30),
                                          row(4, peak=25, reserved=33)], sentences.FSDP2))
    assert "does not rise from 2 GPUs to 4 GPUs (26.00 and 25.00 GiB)" in bare
    assert "places its blocks" in bare and "replayed" not in bare and "并没有增加" in bare


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
# -- tensor parallelism ------------------------------------------------------------------
def tp_row(n: int, t: int | None = None, **maxima: float) -> dict:
    """A rank's row with each category's own maximum (GiB) and its TP group."""
    r = row(n, **maxima)
    return {**r, "category_max_bytes": dict(r["live_at_peak_bytes"]), "tp_size": t}


TP = Words("TP", "TP")


def test_tensor_parallel_splits_as_one_over_the_group_and_not_at_all_under_checkpointing():
    fsdp = [tp_row(8, activations=4.11, autocast_copies=13.98)]
    tp = [tp_row(8, 8, activations=4.11, autocast_copies=13.98 / 8)]
    text = both(tensor_parallel.tensor_parallel(fsdp, tp, TP, checkpointing=True))
    assert "autocast weight copies shrink as a TP group of 8 splits them, 1.75 GiB against " \
           "13.98" in text
    assert "activations are the same, 4.11 GiB against 4.11: under activation checkpointing" \
        in text and "sequence parallelism does not split" in text
    assert "按 8 卡的 TP 组等分缩小" in text and "激活检查点" in text
    plain = both(tensor_parallel.tensor_parallel(fsdp, tp, TP))
    assert "activations are the same, 4.11 GiB against 4.11;" in plain
    assert "checkpointing" not in plain and "激活检查点" not in plain
    # FSDP2 × TP: the group is the mesh's tp, not the GPU count
    two_d = both(tensor_parallel.tensor_parallel([tp_row(64, autocast_copies=16)],
                                           [tp_row(64, 8, autocast_copies=2)], TP))
    assert "shrink as a TP group of 8" in two_d


def test_tensor_parallel_that_splits_in_part_says_what_stays_whole():
    fsdp = [tp_row(4, activations=16.27, autocast_copies=0.23)]
    tp = [tp_row(4, 4, activations=6.57, autocast_copies=0.115)]
    text = both(tensor_parallel.tensor_parallel(fsdp, tp, TP))
    assert "activations shrink by 2.48×, where a TP group of 4 splitting them all would give " \
           "4×, 6.57 GiB against 16.27: without sequence parallelism TP splits only what is " \
           "inside attention and the MLP" in text
    assert "autocast weight copies shrink by 2.00×" in text
    assert "the weights the plan leaves whole are cast whole" in text
    assert "缩小了 2.48×" in text
    grew = both(tensor_parallel.tensor_parallel([tp_row(4, activations=1)],
                                          [tp_row(4, 4, activations=2)], TP))
    assert "activations: 2.00 GiB against 1.00" in grew and "shrink" not in grew
    assert tensor_parallel.tensor_parallel([tp_row(2, activations=1)], [tp_row(4, 4)], TP) is None
    assert "computes with" not in tensor_parallel.tensor_parallel(
        [tp_row(4, temporaries=1)], [tp_row(4, 4, temporaries=1)], TP).en


def test_tp_gradients_beyond_the_parameters_are_the_embeddings():
    emb = 2 * GIB
    tp = [row(2, parameters=15, gradients=16), row(4, parameters=7.5, gradients=9)]
    text = both(tensor_parallel.tp_gradients(tp, TP, emb))
    assert "more gradients than parameters at the tensors' peak: 16.00 against 15.00 GiB on " \
           "2 GPUs and 9.00 against 7.50 GiB on 4 GPUs" in text
    assert "(t−1)/t of the token embeddings' 2.00 GiB" in text and "gloo" in text
    assert "词嵌入 2.00 GiB 的 (t−1)/t" in text
    # an excess that is not the embeddings' is said without a cause
    other = both(tensor_parallel.tp_gradients([row(2, parameters=15, gradients=15.5)], TP, emb))
    assert "16.00" not in other and "15.50 against 15.00 GiB" in other
    assert "embeddings" not in other and "词嵌入" not in other
    assert tensor_parallel.tp_gradients([row(2, parameters=15, gradients=15)], TP, emb) is None


def test_trained_says_every_weight_only_where_every_weight_is_trained():
    assert both(sentences.trained(100, 100)) == ("fully fine-tuned (every weight trained) | "
                                                  "全参数微调（每个权重都训练）")
    assert "fully" in sentences.trained(100, None).en
    part = both(sentences.trained(8_000, 40))
    assert "40 of its 8,000 parameters trained" in part and "训练 40 个" in part
    assert "every weight" not in part


# -- DDP's model state ---------------------------------------------------------------------
def test_ddp_state_buckets_a_second_copy_of_the_gradients_or_not():
    first = tp_row(8, parameters=2, gradients=2, optimizer_state=4, comm_buffers=2)
    text = both(sentences.ddp_state(first, 2**29))
    assert "take 8.00 GiB, 16 bytes for each of the 536,870,912 parameters" in text
    assert "hold the gradients a second time (2.00 GiB" in text and "又存了一份梯度" in text
    other = both(sentences.ddp_state({**first, "category_max_bytes": {
        **first["category_max_bytes"], "comm_buffers": GIB // 4}}, 0))
    assert "second time" not in other and "hold 0.25 GiB beside the gradients' 2.00 GiB" in other
    assert "bytes for each" not in other and "另占 0.25 GiB" in other


def test_regime_names():
    assert regime_name("amp-bf16").en == "autocast bf16"
    assert regime_name("fp32").en == "FP32"
    assert "no autocast" in regime_name("fp32", "bf16/fp32").en


def test_floor_levers_leave_out_checkpointing_where_the_step_has_it():
    hi = row(64, activations=4)
    text = both(sentences.floor_levers(hi, 1, [], checkpointing=True))
    assert "already recomputes" in text and "activation checkpointing" not in text
    assert "激活检查点：" not in text
