""""Why not a formula" (site/pages/calculator/formulas.py and rules.py): the rows take the
suite's points at the common setting and no other, each rule's bytes and signed error are the
ones worked by hand, LoRA rows use the rules' LoRA forms, a missing estimate gives no row, and
both languages' tables render; each rule's header and words (params_header, params_words,
accelerate_words, korthikanti_words, attention_words) follow the steps it is applied to, each
branch with a case; the published runs' sources are described from held_out.json, and none of
their points is left out. Synthetic results on the shipped configs: no model is built."""

from __future__ import annotations

import pytest

from generator.results.reference_runs import held_out
from generator.site.pages.calculator import formulas, rules

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
    bert = rules.model_shape(BERT)
    assert rules.accelerate_size(bert, "sequence-classification", 109_483_778) == \
        4 * 109_482_240
    untied = {"hidden": 4096, "vocab": 128_256, "tied": False, "labels": 2}
    assert rules.accelerate_size(untied, "auto", 8_030_261_248) == \
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
    ("en", ["16 B per trainable, 2 B per frozen parameter", "accelerate estimate-memory",
            "Korthikanti et al. states + activations", "This estimate (allocated peak",
            "full fine-tuning", "1.24 B / 1.24 B", "1.70 M / 1.24 B"]),
    ("zh", ["可训练参数每个 16 字节、冻结参数每个 2 字节", "accelerate estimate-memory", "Korthikanti 等人", "本站估算（已分配峰值",
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
    # rules.py names the folder itself, so that rendering imports no PyTorch
    from generator.measure.models import hf_config

    assert rules.SHIPPED == hf_config.SHIPPED
    assert rules.model_shape(LLAMA) == {"layers": 16, "hidden": 2048, "heads": 32,
                                           "vocab": 128_256, "tied": True, "labels": 2}


def test_a_model_without_a_shipped_config_has_no_row() -> None:
    assert rules.model_shape("hf:someone/not-shipped") is None
    assert formulas.rows([result("hf:someone/not-shipped"), result()])[0]["model"] == LLAMA
    assert len(formulas.rows([result("hf:someone/not-shipped")])) == 0


def test_the_summary_says_which_way_each_rule_errs():
    from generator.site.pages.calculator.formulas import rule_words, summary

    assert "always falls short" in rule_words("params_times_16", {"min": -0.9, "max": -0.3}).en
    assert "always comes out higher" in rule_words("accelerate", {"min": 0.1, "max": 0.4}).en
    both = rule_words("korthikanti", {"min": -0.4, "max": 0.9})
    assert "both ways" in both.en and "时高时低" in both.zh
    assert summary([]) is None


# --- each rule's words, from the steps it is applied to (issue 45, items 3 to 6) -----------

def step(**changes) -> rules.Step:
    """Llama 3.2 1B's step at the decoder setting, as the rules take it."""
    fields = dict(model=LLAMA, label="meta-llama/Llama-3.2-1B", parameters=P, trainable=P,
                  shape=rules.model_shape(LLAMA), task="causal-lm", task_parameters=P,
                  batch=4, seq=2048, precision="amp-bf16", optimizer="adamw",
                  checkpointing=False, attention="sdpa")
    return rules.Step(**{**fields, **changes})


def test_params_header_says_what_it_charges_only_where_a_step_has_frozen_weights() -> None:
    assert rules.params_header([step()]).en == "16 B/parameter (GiB, error)"
    lora_step = step(trainable=LORA_TRAINABLE, parameters=LORA_PARAMETERS)
    header = rules.params_header([step(), lora_step])
    assert "16 B per trainable, 2 B per frozen parameter" in header.en
    assert "冻结参数每个 2 字节" in header.zh


def test_params_words_say_what_the_steps_beside_keep_of_a_frozen_weight() -> None:
    full = rules.params_words([step()])
    assert "LoRA" not in full.en and "frozen" not in full.en
    amp = rules.params_words([step(trainable=LORA_TRAINABLE)])
    assert "2 B per frozen one" in amp.en and "in FP32 under autocast, 4 B each" in amp.en
    assert "4 字节" in amp.zh
    bf16 = rules.params_words([step(trainable=LORA_TRAINABLE, precision="bf16")])
    assert "FP32" not in bf16.en.split("fp16 copy alone")[1]
    assert "at 2 B each, as the rule does" in bf16.en
    assert "8-bit Adam" in rules.params_words([step(optimizer="adamw-8bit")]).en
    assert "8-bit Adam" not in full.en


def test_accelerate_words_name_the_rows_the_steps_read() -> None:
    amp = rules.accelerate_words([step()])
    assert "2× that size for bfloat16" in amp.en and "float32" not in amp.en
    both = rules.accelerate_words([step(), step(precision="fp32")])
    assert "4× that size for float32" in both.en and "float32 取这个大小的 4×" in both.zh


def test_the_vocabulary_term_only_where_the_task_has_vocabulary_logits() -> None:
    lm = step()
    classifier = step(task="sequence-classification")
    outside = 5 * 2048 * 4 * 2048 + 4 * 2048 * 4 * 128_256
    assert rules.RULES["korthikanti"].figure(lm) - \
        rules.RULES["korthikanti"].figure(classifier) == outside
    # the committed BERT rows are sequence classifiers: bert-base at 16 × 256 has no term
    bert = step(model=BERT, shape=rules.model_shape(BERT), task="sequence-classification",
                parameters=109_483_778, trainable=109_483_778, batch=16, seq=256)
    s, b, h, a = 256, 16, 768, 12
    assert rules.RULES["korthikanti"].figure(bert) == \
        16 * 109_483_778 + 12 * (34 * s * b * h + 5 * a * s * s * b)
    words = rules.korthikanti_words([lm, classifier])
    assert "5sbh + 4sbv" in words.en and "for a sequence classifier" in words.en
    only_lm = rules.korthikanti_words([lm])
    assert "5sbh + 4sbv" in only_lm.en and "classifier" not in only_lm.en
    only_classifier = rules.korthikanti_words([classifier])
    assert "5sbh + 4sbv" not in only_classifier.en
    assert "nothing is added for the logits" in only_classifier.en
    assert "不为 logits 加任何项" in only_classifier.zh


def test_fp32_runs_take_the_fp32_activations() -> None:
    # BERT-large at batch 4, sequence 512 in FP32 (the guide's first run): 11.46 GiB
    large = step(model=LARGE, shape=rules.model_shape(LARGE), task="sequence-classification",
                 parameters=335_143_938, trainable=335_143_938, batch=4, seq=512,
                 precision="fp32")
    figure = rules.RULES["korthikanti"].figure(large)
    s, b, h, a = 512, 4, 1024, 16
    assert figure == 16 * 335_143_938 + 24 * (66 * s * b * h + 9 * a * s * s * b)
    assert round(figure / 2**30, 2) == 11.46
    sixteen = rules.RULES["korthikanti"].figure(
        step(**{**large.__dict__, "precision": "amp-fp16"}))
    assert sixteen == 16 * 335_143_938 + 24 * (34 * s * b * h + 5 * a * s * s * b)
    words = rules.korthikanti_words([large])
    assert "sbhL(66 + 9as/h) for an FP32 run" in words.en
    assert "66 + 9as/h" not in rules.korthikanti_words([step()]).en
    checkpointed = rules.korthikanti_words([step(checkpointing=True)])
    assert "2sbhL for a run that checkpoints" in checkpointed.en and "4sbhL" not in checkpointed.en
    assert "4sbhL in FP32" in rules.korthikanti_words(
        [step(checkpointing=True, precision="fp32")]).en


def test_attention_words_say_which_estimates_keep_the_scores() -> None:
    sdpa, eager = step(), step(label="google/gemma-2-2b", attention="eager")
    assert rules.attention_words([step(attention=None)]) is None
    assert "Every estimate here runs SDPA" in rules.attention_words([sdpa]).en
    only = rules.attention_words([eager, eager])
    assert "`google/gemma-2-2b`" in only.en and "run eager attention" in only.en
    mixed = rules.attention_words([sdpa, eager])
    assert "Every estimate here but that of `google/gemma-2-2b`" in mixed.en
    assert "除 `google/gemma-2-2b` 外" in mixed.zh
    two = rules.attention_words([sdpa, eager, step(label="other", attention="eager")])
    assert "but those of" in two.en and "run eager attention" in two.en


def test_the_task_of_a_step() -> None:
    assert rules.task_of(BERT, "sequence-classification") == "sequence-classification"
    assert rules.task_of(LLAMA) == "causal-lm"           # its config's architectures
    assert rules.task_of("bert-base") == "masked-lm"     # the project's own BERT
    assert rules.task_of("gpt2-small") == "causal-lm"
    assert rules.task_of("hf:someone/not-shipped") is None


def test_every_rule_is_described_once_in_the_tables_order() -> None:
    said = rules.described([step()])
    assert [d["id"] for d in said] == list(rules.RULES) == \
        ["params_times_16", "accelerate", "korthikanti"]
    assert all(d["words"].en and d["words"].zh for d in said)


def test_published_intro_checks_the_settings() -> None:
    table = formulas.rows([result()])
    published = [{"step": step(batch=1, seq=512)}]
    assert "No published real-GPU measurement" in formulas.published_intro(published, table).en
    same = [{"step": step()}]
    assert formulas.published_intro(same, table).en.startswith("1 of the published runs")


def test_published_sources_say_what_each_states_and_what_the_estimate_substitutes() -> None:
    large = result(LARGE, batch=16, seq=256, parameters=335_143_938,
                   hf_task="sequence-classification")
    found = formulas.published([large])
    [said] = formulas.published_sources(found)
    assert f"all {len(found)} of its estimated points" in said.en
    assert "states no versions" in said.en and "没有注明版本" in said.zh
    assert "The catalogue has no V100" in said.en       # the GPU it models in its place
    assert "for-loop AdamW" in said.en                  # the source's notes: the optimizer
    assert "non-reentrant" in said.en                   # and the checkpointing
    [fewer] = formulas.published_sources(found[:2])
    assert f"2 of its {len(found)} estimated points" in fewer.en


def test_no_held_out_point_of_a_source_drawn_on_is_left_out() -> None:
    assert formulas.unlisted_points() == []  # the guide's seventh point (5,363 MiB) included
    measurements = [m for m in formulas.load_measurements()
                    if m.get("held_out_id") != "hf-bert-large-b1x4-amp-ckpt-adam8bit"]
    assert [p.id for p in formulas.unlisted_points(measurements)] == \
        ["hf-bert-large-b1x4-amp-ckpt-adam8bit"]
