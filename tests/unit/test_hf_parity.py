"""A built-in model beside its Hugging Face twin (site/derived.py): a gap between their
peaks is explained only where what is live at the two peaks moved by whole
vocabulary-sized tensors, and the explanation names the loss's FP32 upcast only where an
FP32 one joined the temporaries of a mixed-precision step (issue 34)."""

from __future__ import annotations

from generator.site import derived

B, S, V = 8, 1024, 50257
FP32 = B * S * V * 4


def _pair(precision: str, temporaries: int, activations: int) -> dict:
    def result(model: str, temp: int, act: int) -> dict:
        return {"experiment": {"model": model, "batch_size": B, "seq_len": S,
                               "precision": precision, "backend": "estimate"},
                "architecture": {"vocab": V}, "parameter_count": 1, "peak_bytes": temp + act,
                "live_at_peak_bytes": {"temporaries": temp, "activations": act}}
    builtin = result("gpt2-small", 10 * FP32, 100 * FP32)
    hf = result("hf:gpt2", 10 * FP32 + temporaries, 100 * FP32 + activations)
    return {"builtin": builtin, "hf": hf, "same_parameters": True,
            "difference": hf["peak_bytes"] / builtin["peak_bytes"] - 1,
            "gap": derived.parity_gap(builtin, hf)}


def test_an_fp32_tensor_among_amps_temporaries_is_named_the_loss_upcast():
    row = _pair("amp-bf16", FP32, -FP32 // 2 - 10 * 2**20)
    assert [(m["category"], m["count"], m["bits"]) for m in row["gap"]["moved"]] == \
        [("temporaries", 1, 32), ("activations", -1, 16)]
    words = derived.parity_gap_words(row)
    assert "one FP32 vocabulary-sized tensor more among its temporaries" in words.en
    assert "logits.float()" in words.en and "logits.float()" in words.zh


def test_a_gap_of_no_whole_vocabulary_tensor_is_not_explained():
    row = _pair("fp32", 0, -10 * 2**20)
    assert row["gap"] is None and derived.parity_gap_words(row) is None
    notes = derived.parity_notes([row])
    assert notes["explained"] == [] and abs(notes["rest_within"] - abs(row["difference"])) < 1e-12


def test_an_fp32_run_gets_no_upcast_reason():
    words = derived.parity_gap_words(_pair("fp32", FP32, 0))
    assert "more among its temporaries" in words.en and "logits.float()" not in words.en


def test_parity_notes_group_the_precisions_one_explanation_covers():
    rows = [_pair(p, FP32, 0) for p in ("amp-fp16", "amp-bf16")]
    notes = derived.parity_notes(rows)
    assert len(notes["explained"]) == 1 and notes["rest_within"] is None
    assert notes["explained"][0]["head"].en.endswith("AMP bf16 and AMP fp16")


def test_parity_table_merges_pairs_only_where_every_printed_figure_is_alike():
    """The methodology's table (issue 34): AMP bf16 and AMP fp16 pairs that print alike share
    one row naming both; a pair whose peak prints differently keeps its own."""
    fp16, bf16, fp32 = (_pair(p, FP32, 0) for p in ("amp-fp16", "amp-bf16", "fp32"))
    fp32["builtin"]["peak_bytes"] += 2**20  # prints differently (and differs in precision)
    rows = derived.parity_table([bf16, fp16, fp32])
    assert [r["precisions"].en for r in rows] == ["AMP bf16 and AMP fp16", "FP32"]
    assert rows[0]["precisions"].zh == "AMP bf16 和 AMP fp16"
    apart = _pair("amp-fp16", FP32, 0)
    apart["hf"]["peak_bytes"] += 2**20  # a MiB more in print: a row of its own
    apart["difference"] = apart["hf"]["peak_bytes"] / apart["builtin"]["peak_bytes"] - 1
    rows = derived.parity_table([bf16, apart])
    assert [r["precisions"].en for r in rows] == ["AMP bf16", "AMP fp16"]
