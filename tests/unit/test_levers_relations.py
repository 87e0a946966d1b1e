"""The levers page's relations (generator/site/lever_results/relations.py), each on small
synthetic data, with the branch where it holds and the one where it does not."""

from __future__ import annotations

import pytest

from generator.site.lever_results import relations as rel

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
    # a change that prints alike in MiB (40 KiB) is none to list, even alone
    assert rel.acts_on(before, {**before, "parameters": 400 * MIB + 40 * 1024}) == []


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
    # a MiB more than the best part alone prints alike in GiB: no better
    assert rel.combination(2**30 + MIB, {"a": 2**30, "b": 40 * MIB},
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


def test_amounts_say_no_change_only_where_there_is_none_to_the_byte() -> None:
    assert rel.amount(0, 100).en == "no change"
    # the fused kernel's +101 KiB on a 5.64 GiB peak: shown, not called "no change", and
    # without a share that would print as −0.0 %
    assert rel.amount(-103_424, 6_052_263_424).en == "−0.1 MiB"
    assert rel.amount(1536).en == "1.5 KiB"  # MiB would print 0.0
    assert rel.amount(-5 * MIB).en == "−5.0 MiB"  # not −0.00 GiB
    assert rel.amount(2**30, 4 * 2**30).en == "1.00 GiB (25.0 %)"
    assert rel.amount(2**30, 4 * 2**30).zh == "1.00 GiB（25.0 %）"


def test_same_is_decided_by_the_printed_precision() -> None:
    gib = 2**30
    # the tensors' peak with and without fused AdamW: 103,424 B apart, both print 5.64 GiB
    assert rel.same(6_052_263_424, 6_052_366_848)
    assert not rel.same(6_052_263_424, 6_052_366_848, "MiB")  # 5,771.9 vs 5,772.0 MiB
    assert not rel.same(int(5.64 * gib), int(5.66 * gib))
    assert rel.same(5 * MIB, 5 * MIB + 1000, "MiB")


def test_from_to_and_went_say_stays_only_where_the_figures_print_alike() -> None:
    assert rel.from_to(5 * MIB, 5 * MIB).en == "stays at 5.0 MiB"
    assert rel.from_to(5 * MIB, 5 * MIB).zh == "保持 5.0 MiB 不变"
    assert rel.from_to(5 * MIB, 2 * MIB).en == "from 5.0 to 2.0 MiB"
    assert rel.from_to(6_052_263_424, 6_052_366_848, "GiB").en == "stays at 5.64 GiB"
    assert rel.from_to(6_052_263_424, 6_052_366_848, "MiB").en == "from 5,771.9 to 5,772.0 MiB"
    # the CPU runs' optimizer step, foreach then fused
    assert rel.went(2_190_000_000, 1_752_000_000).en == "falls from 2.04 to 1.63 GiB"
    assert rel.went(2_190_000_000, 1_752_000_000).zh == "从 2.04 GiB 降到 1.63 GiB"
    assert rel.went(1_752_000_000, 2_190_000_000).en == "rises from 1.63 to 2.04 GiB"
    assert rel.went(3000 * MIB, 700 * MIB, "MiB", plural=True).en == \
        "fall from 3,000.0 to 700.0 MiB"
    assert rel.went(2 * 2**30, 2 * 2**30 + 5).en == "stays at 2.00 GiB"
    assert rel.went(2 * 2**30, 2 * 2**30 + 5, plural=True).en == "stay at 2.00 GiB"


def test_moves_says_which_way_a_peak_goes() -> None:
    gib = 2**30
    assert rel.moves(4 * gib, 3 * gib).en == "falls by 1.00 GiB (25.0 %)"
    assert rel.moves(4 * gib, 5 * gib).en == "rises by 1.00 GiB (25.0 %)"
    assert rel.moves(4 * gib, 4 * gib + 1000).en == "stays at 4.00 GiB"


def _result(peak: int, **live) -> dict:
    cats = {"activations": 0, "temporaries": 0, **live}
    return {"peak_bytes": peak, "allocator": {"peak_reserved_bytes": peak + MIB},
            "live_at_peak_bytes": cats, "category_max_bytes": dict(cats),
            "phase_max_bytes": {"optimizer": {"temporaries": cats["temporaries"]}}}


def test_identical_results_print_alike_in_every_figure() -> None:
    a = _result(10 * MIB, activations=4 * MIB)
    b = _result(10 * MIB + 1536, activations=4 * MIB + 1536)  # AMP fp16 beside bf16
    assert rel.identical(a, b) == {"identical": True, "within": 1536}
    c = _result(10 * MIB, activations=4 * MIB)
    c["phase_max_bytes"]["optimizer"]["temporaries"] = 3 * MIB  # the for-loop beside fused
    assert not rel.identical(a, c)["identical"]
    # 300 KiB apart: below any tolerance of half a MiB, but it prints 4.0 → 4.3 MiB
    d = _result(10 * MIB, activations=4 * MIB + 300 * 1024)
    assert rel.identical(a, d) == {"identical": False, "within": 300 * 1024}


def test_strongest_keeps_ties_and_unmoved_finds_levers_that_do_not_lower_a_peak() -> None:
    gib = 2**30
    rows = [{"id": "a", "s": 3 * gib}, {"id": "b", "s": 3 * gib + 10}, {"id": "c", "s": 0},
            {"id": "d", "s": -MIB}]
    assert [r["id"] for r in rel.strongest(rows, "s")] == ["a", "b"]
    assert [r["id"] for r in rel.strongest(rows[1:], "s")] == ["b"]
    base = 6_052_263_424
    peaks = [{"id": "lower", "ref_peak": base, "peak": base - gib, "reserved": None},
             {"id": "fused", "ref_peak": base, "peak": base + 103_424, "reserved": None},
             {"id": "exact", "ref_peak": base, "peak": base, "reserved": None},
             {"id": "higher", "ref_peak": base, "peak": base + gib, "reserved": None}]
    assert [r["id"] for r in rel.unmoved(peaks, "peak")] == ["fused", "exact", "higher"]
    assert rel.unmoved(peaks, "reserved") == []  # no reserved peak: nothing to say


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
    """A lever's row: what it saves of the tensors' peak and of the reserved peak."""
    ref = 6 * 2**30
    return {"saving_bytes": tensors, "ref_peak": ref, "peak": ref - tensors,
            "reserved_saving_bytes": reserved, "ref_reserved": ref,
            "reserved": None if reserved is None else ref - reserved,
            "gap_before": 100 * MIB, "gap_after": 500 * MIB}


def test_saved_says_what_happens_to_each_peak() -> None:
    gib = 2**30
    both = rel.saved(_row(gib, gib))
    assert both.en == "the reserved peak falls by 1.00 GiB (16.7 %) and the tensors' peak " \
        "by 1.00 GiB (16.7 %)"
    assert both.zh == "已预留峰值降低 1.00 GiB（16.7 %），张量峰值降低 1.00 GiB（16.7 %）"
    kept = rel.saved(_row(gib, 0)).en
    assert "the reserved peak stays at 6.00 GiB" in kept and "from 100.0 to 500.0 MiB" in kept
    assert rel.saved(_row(0, gib)).en.endswith("the tensors' peak stays at 6.00 GiB")
    # the fused kernel: 101 KiB more tensors, the reserved peak exactly as it was
    fused = rel.saved(_row(-103_424, 0))
    assert fused.en == "the reserved peak stays at 6.00 GiB and the tensors' peak stays at " \
        "6.00 GiB"
    assert fused.zh == "已预留峰值保持 6.00 GiB 不变，张量峰值保持 6.00 GiB 不变"
    assert "tensors' peak rises by 1.00 GiB" in rel.saved(_row(-gib, 0)).en
    assert rel.saved(_row(gib, None)).en == "the peak falls by 1.00 GiB (16.7 %)"
    assert rel.saved(_row(0, None)).en == "the peak stays at 6.00 GiB"


def test_phase_peaks_say_where_each_run_peaks() -> None:
    """The CPU runs at batch 1 (phase_max_bytes' totals): foreach peaks in the optimizer
    step; with fused the optimizer step's own peak falls below backward's, and the peak
    moves there."""
    foreach = {"forward": 1_461_000_000, "backward": 1_939_700_000, "optimizer": 2_190_300_000}
    fused = {**foreach, "optimizer": 1_752_200_000}
    found = rel.phase_peaks(foreach, fused)
    assert found["held"] and found["moved"] and found["where"] == ["optimizer", "backward"]
    assert found["own"] == (2_190_300_000, 1_752_200_000)
    assert found["peaks"] == (2_190_300_000, 1_939_700_000)
    # the optimizer step stays the peak where it is still the largest phase
    found = rel.phase_peaks(foreach, {**foreach, "optimizer": 2_000_000_000})
    assert found["held"] and not found["moved"]
    # a run that peaks in backward is not one the kernels can lower
    assert not rel.phase_peaks(fused, fused)["held"]


def test_extra_state_and_unchanged_compare_to_the_byte() -> None:
    # the fused kernel's step counts: 103,424 B more state, all of the peak's change
    found = rel.extra_state((876_114_944, 876_218_368), (6_052_263_424, 6_052_366_848))
    assert found == {"extra": 103_424, "whole_peak": True}
    assert rel.extra_state((10, 20), (100, 130)) == {"extra": 10, "whole_peak": False}
    assert rel.extra_state((10, 10), (100, 100)) == {"extra": 0, "whole_peak": False}
    cats = ("parameters", "optimizer_state")
    assert rel.unchanged({"parameters": 4, "optimizer_state": 8},
                         {"parameters": 4, "optimizer_state": 8, "activations": 1}, cats)
    assert not rel.unchanged({"parameters": 4, "optimizer_state": 8},
                             {"parameters": 4, "optimizer_state": 9}, cats)


def test_differences_name_the_device_of_every_measurement() -> None:
    """实测 never stands without CPU or GPU before it (the honest-words test)."""
    found = rel.differences(_exp(device="cpu", batch_size=1), _exp())
    for words in found:
        assert words.zh.replace("CPU 实测", "").count("实测") == 0, words.zh
    on_gpu = rel.differences(_exp(batch_size=1, optimizer_impl="fused"), _exp())
    assert on_gpu and on_gpu[0].zh.startswith("GPU 实测的那一步")
