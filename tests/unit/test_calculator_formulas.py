""""Why not a formula" (site/pages/calculator/formulas.py): the rows take the suite's points at
the common setting and no other, each rule's bytes and signed error are the ones worked by hand,
LoRA rows use the rules' LoRA forms, a missing estimate gives no row, and both languages'
tables render. Synthetic results on the shipped configs: no model is built."""

from __future__ import annotations

import pytest

from generator.results.reference_runs import held_out
from generator.site.pages.calculator import formulas

LLAMA = "hf:meta-llama/Llama-3.2-1B"
BERT = "hf:bert-base-uncased"
LARGE = "hf:bert-large-uncased"
# Llama 3.2 1B (its shipped config: 16 layers, hidden 2048, 32 heads, vocabulary 128,256, tied
# embeddings) at batch 4, sequence 2,048, worked by hand in tests/unit/test_rules_of_thumb.py:
P = 1_235_814_400
STATES = 19_773_030_400           # 16 · P
ACTIVATIONS = 56_363_057_152      # 16 layers · 3,254,779,904 + outside 4,286,578,688
ACCELERATE = 9_886_515_200        # bfloat16 row: 2 · (4 · P); AutoModel is the whole model (tied)
ALLOCATED = 39_546_060_800        # chosen: twice the 16-byte figure


def result(model=LLAMA, *, batch=4, seq=2048, allocated=ALLOCATED, parameters=P,
           trainable=None, error=None, **experiment) -> dict:
    """A step result with only what the table reads."""
    exp = {"model": model, "batch_size": batch, "seq_len": seq, "precision": "amp-bf16",
           "optimizer": "adamw", "backend": "estimate", "gpu": "", "lora_rank": 0,
           "quantization": "none", "checkpointing": False, "micro_batches": 1,
           "hf_task": "auto", **experiment}
    key = f"{model}-{batch}-{seq}-{sorted(experiment.items())}"
    return {"key": key, "experiment": exp, "error": error,
            "parameter_count": parameters,
            "trainable_parameter_count": parameters if trainable is None else trainable,
            "peak_bytes": allocated - 2**20,
            "allocator": {"peak_allocated_bytes": allocated,
                          "peak_reserved_bytes": allocated + 2**30}}


LORA_TRAINABLE = 1_703_936
LORA_PARAMETERS = P + LORA_TRAINABLE


def lora(**changes) -> dict:
    return result(lora_rank=16, parameters=LORA_PARAMETERS, trainable=LORA_TRAINABLE,
                  allocated=31_135_246_336, **changes)


def test_rows_take_the_common_setting_and_no_lever() -> None:
    others = [result(checkpointing=True), result(optimizer_impl="fused"),
              result(optimizer="adamw-8bit"), result(micro_batches=2), result(batch=8),
              result(seq=4096), result(precision="bf16"), result(gpu="A100 40GB"),
              result(lora_rank=16, quantization="nf4", trainable=LORA_TRAINABLE),
              result(lora_rank=8, trainable=LORA_TRAINABLE), result(backend="cpu")]
    found = formulas.rows([*others, result(), lora()])
    assert [(r["model"], r["method"]) for r in found] == [(LLAMA, "full"), (LLAMA, "lora")]
    assert found[0]["allocated"] == ALLOCATED and found[1]["allocated"] == 31_135_246_336


def test_encoders_are_taken_at_their_own_setting() -> None:
    at_setting = result(BERT, batch=16, seq=256, parameters=109_483_778,
                        hf_task="sequence-classification")
    decoder_setting = result(BERT, parameters=109_483_778, hf_task="sequence-classification")
    found = formulas.rows([decoder_setting, at_setting])
    assert [(r["batch"], r["seq"]) for r in found] == [(16, 256)]


def test_a_full_row_by_hand() -> None:
    [row] = formulas.rows([result()])
    assert row["rules"] == {"params_times_16": STATES, "accelerate": ACCELERATE,
                            "korthikanti": STATES + ACTIVATIONS}
    assert row["errors"]["params_times_16"] == pytest.approx(-0.5)
    assert row["errors"]["accelerate"] == pytest.approx(-0.75)
    assert row["errors"]["korthikanti"] == pytest.approx(76_136_087_552 / ALLOCATED - 1)
    assert (row["reserved"], row["tensors"]) == (ALLOCATED + 2**30, ALLOCATED - 2**20)


def test_lora_rows_use_the_lora_forms() -> None:
    rows = {r["method"]: r for r in formulas.rows([result(), lora()])}
    states = 16 * LORA_TRAINABLE + 2 * P  # frozen: its 16-bit copy only
    assert rows["lora"]["rules"]["params_times_16"] == states
    assert rows["lora"]["rules"]["korthikanti"] == states + ACTIVATIONS
    # accelerate has no LoRA: the model's figure, from the full fine-tune's parameter count
    assert rows["lora"]["rules"]["accelerate"] == rows["full"]["rules"]["accelerate"] == ACCELERATE
    assert rows["lora"]["errors"]["params_times_16"] == pytest.approx(
        states / 31_135_246_336 - 1)


def test_accelerate_sizes_the_base_model() -> None:
    # BERT's AutoModel has no classifier (768 · 2 + 2); an untied LM head (Llama 3.1 8B's
    # vocab · hidden) is not in the base model either
    bert = formulas.model_shape(BERT)
    assert formulas.accelerate_size(bert, "sequence-classification", 109_483_778) == \
        4 * 109_482_240
    untied = {"hidden": 4096, "vocab": 128_256, "tied": False, "labels": 2}
    assert formulas.accelerate_size(untied, "auto", 8_030_261_248) == \
        4 * (8_030_261_248 - 128_256 * 4096)


def test_missing_estimates_give_no_row() -> None:
    assert formulas.rows([]) == []
    assert formulas.rows([result(error="out of memory"), lora(error="x")]) == []
    no_allocator = {**result(), "allocator": None}
    assert formulas.rows([no_allocator]) == []
    # LoRA alone: its row, without accelerate's figure (no full fine-tune gives the size)
    [row] = formulas.rows([lora()])
    assert row["method"] == "lora" and row["rules"]["accelerate"] is None
    assert row["errors"]["accelerate"] is None
    assert "| – |" in formulas.table([row], "en")


def test_rows_follow_the_order_given_else_decoders_then_size() -> None:
    bert = result(BERT, batch=16, seq=256, parameters=109_483_778,
                  hf_task="sequence-classification")
    large = result(LARGE, batch=16, seq=256, parameters=335_143_938,
                   hf_task="sequence-classification")
    results = [large, bert, lora(), result()]
    default = [(r["model"], r["method"]) for r in formulas.rows(results)]
    assert default == [(LLAMA, "full"), (LLAMA, "lora"), (BERT, "full"), (LARGE, "full")]
    given = formulas.rows(results, order=[LARGE, BERT, LLAMA])
    assert [r["model"] for r in given] == [LARGE, BERT, LLAMA, LLAMA]


def test_error_ranges() -> None:
    found = formulas.rows([result(), lora()])
    ranges = formulas.error_ranges(found)
    lora_error = (16 * LORA_TRAINABLE + 2 * P) / 31_135_246_336 - 1
    assert ranges["params_times_16"] == pytest.approx({"min": lora_error, "max": -0.5})
    assert formulas.error_ranges(found, "full")["accelerate"] == pytest.approx(
        {"min": -0.75, "max": -0.75})
    assert formulas.error_ranges([]) == {}


def test_signed_percentages() -> None:
    assert formulas.signed_pct(-0.38) == "−38 %"
    assert formulas.signed_pct(0.124) == "+12 %"
    assert formulas.signed_pct(0.004) == "0 %"
    assert formulas.signed_pct(None) == "–"


@pytest.mark.parametrize("lang, words", [
    ("en", ["16 B/parameter", "accelerate estimate-memory",
            "Korthikanti et al. states + activations", "This estimate (allocated peak",
            "full fine-tuning", "1.24 B / 1.24 B", "1.70 M / 1.24 B"]),
    ("zh", ["每参数 16 字节", "accelerate estimate-memory", "Korthikanti 等人", "本站估算（已分配峰值",
            "全参数微调", "12.4 亿 / 12.4 亿", "170 万 / 12.4 亿"]),
])
def test_tables_render_in_both_languages(lang, words) -> None:
    text = str(formulas.table(formulas.rows([result(), lora()]), lang))
    for word in words:
        assert word in text
    assert "18.42 (−50 %)" in text  # 16 · P bytes in GiB, and its error
    assert "36.83" in text          # the estimated allocated peak in GiB
    assert len(text.strip().splitlines()) == 4  # header, alignment, two rows


def test_published_measurements_beside_the_held_out_estimates() -> None:
    large = result(LARGE, batch=16, seq=256, parameters=335_143_938,
                   hf_task="sequence-classification")
    found = formulas.published([large])
    points = {p.id: p for p in held_out()}
    measurements = [m for m in formulas.load_measurements() if m.get("held_out_id")]
    assert [r["id"] for r in found] == [m["id"] for m in measurements]
    first, entry = found[0], measurements[0]
    point = points[entry["held_out_id"]]
    # nvidia-smi: the estimated reserved peak plus the CUDA context the source read
    assert point.source.figure == "nvidia-smi"
    estimate = point.estimated["reserved"] + point.source.context_bytes
    assert first["estimate"] == estimate
    assert first["estimate_error"] == pytest.approx(estimate / entry["value_bytes"] - 1)
    assert first["rules"]["params_times_16"] == 16 * 335_143_938
    assert first["errors"]["params_times_16"] == pytest.approx(
        16 * 335_143_938 / entry["value_bytes"] - 1)
    # BERT-large without a full fine-tuning result here: no parameter count, so no rows
    assert formulas.published([]) == []
    for lang in ("en", "zh"):
        assert len(str(formulas.published_table(found, lang)).strip().splitlines()) == \
            2 + len(found)


def test_configs_are_read_where_the_package_ships_them() -> None:
    # formulas names the folder itself, so that rendering imports no PyTorch
    from generator.measure.models import hf_config

    assert formulas.SHIPPED == hf_config.SHIPPED
    assert formulas.model_shape(LLAMA) == {"layers": 16, "hidden": 2048, "heads": 32,
                                           "vocab": 128_256, "tied": True, "labels": 2}


def test_a_model_without_a_shipped_config_has_no_row() -> None:
    assert formulas.model_shape("hf:someone/not-shipped") is None
    assert formulas.rows([result("hf:someone/not-shipped"), result()])[0]["model"] == LLAMA
    assert len(formulas.rows([result("hf:someone/not-shipped")])) == 0


def test_the_summary_says_which_way_each_rule_errs():
    from generator.site.pages.calculator.formulas import rule_words, summary

    assert "always falls short" in rule_words("params_times_16", {"min": -0.9, "max": -0.3}).en
    assert "always comes out higher" in rule_words("accelerate", {"min": 0.1, "max": 0.4}).en
    both = rule_words("korthikanti", {"min": -0.4, "max": 0.9})
    assert "both ways" in both.en and "时高时低" in both.zh
    assert summary([]) is None
