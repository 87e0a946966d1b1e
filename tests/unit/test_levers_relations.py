"""The levers page's relations (generator/site/pages/levers/relations.py), each on small
synthetic data, with the branch where it holds and the one where it does not."""

from __future__ import annotations

import pytest

from generator.site.pages.levers import relations as rel

MIB = 2**20


def test_acts_on_lists_the_categories_that_make_up_the_change_biggest_first() -> None:
    # AMP's shape: activations fall most, then the temporaries halve, the copies appear
    before = {"activations": 3000 * MIB, "temporaries": 900 * MIB, "autocast_copies": 0,
              "parameters": 400 * MIB}
    after = {"activations": 2200 * MIB, "temporaries": 450 * MIB,
             "autocast_copies": 200 * MIB, "parameters": 400 * MIB}
    assert [cat for cat, _, _ in rel.acts_on(before, after)] == \
        ["activations", "temporaries", "autocast_copies"]
    # a small change beside a large one is left out
    after = {**before, "activations": 1000 * MIB, "temporaries": 890 * MIB}
    assert rel.acts_on(before, after) == [("activations", 3000 * MIB, 1000 * MIB)]
    # nothing changed: a lever on the allocator
    assert rel.acts_on(before, dict(before)) == []


def test_combination_adds_up_nearly_overlaps_or_is_no_better() -> None:
    shrinks = {"a": ["activations"], "b": ["temporaries"]}
    assert rel.combination(100 * MIB, {"a": 60 * MIB, "b": 40 * MIB},
                           shrinks)["relation"] == "adds_up"
    near = rel.combination(90 * MIB, {"a": 60 * MIB, "b": 40 * MIB},
                           {"a": ["activations"], "b": ["activations"]})
    assert near["relation"] == "nearly" and near["shared"] == ["activations"]
    # the site's case: checkpointing 2.81, AMP 1.03, SDPA 0.63 alone, 3.02 together
    gib = 2**30
    over = rel.combination(int(3.02 * gib), {"ckpt": int(2.81 * gib), "amp": int(1.03 * gib),
                                             "sdpa": int(0.63 * gib)},
                           {"ckpt": ["activations"], "amp": ["activations", "temporaries"],
                            "sdpa": ["activations"]})
    assert over["relation"] == "overlaps" and over["best"] == "ckpt"
    assert over["shared"] == ["activations"]
    assert over["short_of_sum"] == over["sum"] - int(3.02 * gib)
    assert rel.combination(60 * MIB, {"a": 60 * MIB, "b": 40 * MIB},
                           shrinks)["relation"] == "no_better"


def _cost(**changes):
    return {"timed_steps": 10, "spread": 0.02, "batch_size": 32, "seq_len": 128,
            "ratio": 1.3, **changes}


def test_a_timing_is_shown_only_where_it_means_something() -> None:
    assert rel.timing_shown(_cost()) == []
    assert rel.timing_shown(_cost(timed_steps=None, spread=None)) == ["no_count"]
    assert rel.timing_shown(_cost(timed_steps=3)) == ["few_steps"]
    assert rel.timing_shown(_cost(batch_size=1)) == ["small_step"]
    assert rel.timing_shown(_cost(ratio=1.01)) == ["within_spread"]
    # the stored CPU runs: one median at batch 1
    assert rel.timing_shown(_cost(timed_steps=None, spread=None, batch_size=1)) == \
        ["no_count", "small_step"]


def test_recompute_share_is_computed_from_the_config() -> None:
    bert = {"hidden": 768, "intermediate": 3072, "layers": 12, "vocab": 30522}
    flops = rel.transformer_flops(bert, 128)
    assert flops["blocks_forward"] / 1e9 == pytest.approx(22.35, abs=0.01)  # the 22
    assert flops["step"] == 3 * flops["forward"]
    assert 0.25 < flops["recompute_share"] < 0.27
    # without a head worth speaking of, recomputing every block adds a third
    tiny = {"hidden": 8, "intermediate": 32, "layers": 4, "vocab": 1}
    assert rel.transformer_flops(tiny, 4)["recompute_share"] == pytest.approx(1 / 3, abs=0.02)


def test_amounts_say_no_change_and_keep_small_differences() -> None:
    assert rel.amount(0, 100).en == "no change"
    assert rel.amount(100 * 1024, 6 * 2**30).en == "no change"  # below what a reader sees
    assert rel.amount(-5 * MIB).en == "−5.0 MiB"  # not −0.00 GiB
    assert rel.amount(2**30, 4 * 2**30).en == "1.00 GiB (25.0 %)"
    assert rel.from_to(5 * MIB, 5 * MIB).en == "stays at 5.0 MiB"
    assert rel.from_to(5 * MIB, 2 * MIB).en == "from 5.0 to 2.0 MiB"
    assert rel.same(4 * 2**30, 4 * 2**30 + 1000) and not rel.same(0, MIB)


def _result(peak: int, **live) -> dict:
    cats = {"activations": 0, "temporaries": 0, **live}
    return {"peak_bytes": peak, "allocator": {"peak_reserved_bytes": peak + MIB},
            "live_at_peak_bytes": cats, "category_max_bytes": dict(cats),
            "phase_max_bytes": {"optimizer": {"temporaries": cats["temporaries"]}}}


def test_identical_results_are_found_and_different_ones_are_not() -> None:
    a = _result(10 * MIB, activations=4 * MIB)
    b = _result(10 * MIB + 1536, activations=4 * MIB + 1536)
    assert rel.identical(a, b) == {"identical": True, "within": 1536}
    c = _result(10 * MIB, activations=4 * MIB)
    c["phase_max_bytes"]["optimizer"]["temporaries"] = 3 * MIB  # the for-loop beside fused
    assert not rel.identical(a, c)["identical"]


def test_strongest_keeps_ties_and_unmoved_finds_levers_that_save_nothing() -> None:
    rows = [{"id": "a", "s": 3 * MIB}, {"id": "b", "s": 3 * MIB + 10}, {"id": "c", "s": 0},
            {"id": "d", "s": -MIB}]
    assert [r["id"] for r in rel.strongest(rows, "s")] == ["a", "b"]
    assert [r["id"] for r in rel.strongest(rows[1:], "s")] == ["b"]
    assert [r["id"] for r in rel.unmoved(rows, "s")] == ["c", "d"]


def test_change_names_halving_growing_and_staying() -> None:
    assert rel.change(954 * MIB, 477 * MIB) == "halves"
    assert rel.change(954 * MIB, 143 * MIB) == "shrinks"
    assert rel.change(477 * MIB, 715 * MIB) == "grows"
    assert rel.change(477 * MIB, 477 * MIB) == "same"


def test_largest_parameter_and_its_copies() -> None:
    result = {"architecture": {"vocab": 30522, "hidden": 768, "intermediate": 3072},
              "category_max_bytes": {"parameters": 4 * 110_000_000},
              "parameter_count": 110_000_000}
    largest = rel.largest_parameter(result)
    assert largest["name"] == "word embeddings" and largest["bytes"] == 30522 * 768 * 4
    assert rel.copies(187527680, largest["bytes"])["whole"] == 2  # the site's 178.8 MiB
    assert rel.copies(150 * MIB, largest["bytes"])["whole"] is None
    small_vocab = {**result, "architecture": {"vocab": 100, "hidden": 768, "intermediate": 3072}}
    assert rel.largest_parameter(small_vocab)["name"] == "MLP projection"


def _exp(**changes):
    return {"experiment": {"batch_size": 32, "seq_len": 128, "optimizer_impl": "auto",
                           "device": "cuda", "precision": "fp32", **changes},
            "notes": [{"id": "models_cuda", "values": {"block": 512}}]}


def test_differences_between_a_cpu_run_and_a_cuda_estimate() -> None:
    estimate = _exp()
    assert rel.differences(_exp(), estimate) == []
    found = rel.differences(_exp(device="cpu", batch_size=4, precision="amp-bf16"), estimate)
    text = " ".join(words.en for words in found)
    assert "batch 4" in text and "for-loop" in text and "foreach" in text
    assert "PyTorch's pick on the CPU" in text and "autocast" in text and "512-byte" in text
    # the same kernels named on both: no word on kernels
    same_kernels = rel.differences(_exp(device="cpu", optimizer_impl="foreach"), estimate)
    assert not any("kernels" in words.en for words in same_kernels)


def _row(tensors: int, reserved: int | None) -> dict:
    return {"saving_bytes": tensors, "ref_peak": 6 * 2**30,
            "reserved_saving_bytes": reserved, "ref_reserved": 6 * 2**30,
            "gap_before": 100 * MIB, "gap_after": 500 * MIB}


def test_saved_says_what_happens_to_each_peak() -> None:
    gib = 2**30
    assert rel.saved(_row(gib, gib)).en.startswith("the reserved peak falls by 1.00 GiB")
    kept = rel.saved(_row(gib, 0)).en
    assert "does not move" in kept and "from 100.0 to 500.0 MiB" in kept
    assert "tensors' peak does not move" in rel.saved(_row(0, gib)).en
    assert rel.saved(_row(0, 0)).en.startswith("neither")
    assert rel.saved(_row(gib, None)).en == "the peak falls by 1.00 GiB (16.7 %)"
    assert rel.saved(_row(0, None)).en == "the peak does not move"
