"""The rules of thumb (plan/rules_of_thumb.py): each gives the bytes its source gives, checked on
values worked by hand, and accelerate's training figure equals accelerate's own function."""

from __future__ import annotations

import ast
import inspect

import pytest

from generator.plan import rules_of_thumb as rules

# Llama 3.2 1B's shape (its config.json): 16 layers, hidden 2048, 32 attention heads, vocabulary
# 128,256, 1,235,814,400 parameters. At batch 4 and sequence 2,048, by hand:
#   sbh          = 2048 · 4 · 2048                    =     16,777,216
#   34 sbh       = 34 · 16,777,216                    =    570,425,344
#   5 a s² b     = 5 · 32 · 2048 · 2048 · 4           =  2,684,354,560
#   one layer    = 570,425,344 + 2,684,354,560        =  3,254,779,904  (= sbh · (34 + 5·32·2048/2048) = sbh · 194)
#   16 layers    = 16 · 3,254,779,904                 = 52,076,478,464
#   recomputed   = 2 · sbh · 16                       =    536,870,912
#   outside (§4.3) = 5 sbh + 4 s b v = 83,886,080 + 4 · 2048 · 4 · 128,256 = 83,886,080 + 4,202,692,608
#                                                     =  4,286,578,688
#   states       = 16 · 1,235,814,400                 = 19,773,030,400
LLAMA_1B = {"layers": 16, "hidden_size": 2048, "attention_heads": 32, "batch": 4, "sequence": 2048}
LLAMA_1B_PARAMETERS = 1_235_814_400


def test_16_bytes_per_parameter_for_a_full_fine_tune() -> None:
    assert rules.params_times_16(1_000_000) == 16_000_000
    assert rules.params_times_16(LLAMA_1B_PARAMETERS) == 19_773_030_400
    # ZeRO §3.1's own example: GPT-2 with 1.5 billion parameters needs "at least 24 GB".
    assert rules.params_times_16(1_500_000_000) == 24 * 10**9


def test_lora_counts_16_bytes_per_trainable_and_2_per_frozen_parameter() -> None:
    # 1,000 parameters of which 10 train: 16 · 10 + 2 · 990 = 160 + 1,980.
    assert rules.params_times_16(1_000, trainable_parameters=10) == 2_140
    assert rules.params_times_16(1_000, trainable_parameters=1_000) == rules.params_times_16(1_000)
    assert rules.params_times_16(1_000, trainable_parameters=0) == 2_000


@pytest.mark.parametrize("trainable", [-1, 1_001])
def test_trainable_parameters_outside_the_model_are_refused(trainable: int) -> None:
    with pytest.raises(ValueError, match="trainable"):
        rules.params_times_16(1_000, trainable_parameters=trainable)


def test_accelerate_gives_4x_the_fp32_size_for_float32_and_2x_for_16_bit() -> None:
    # float32: max(model 1000, gradients 1000, optimizer 2000, step 4000) = 4000.
    assert rules.accelerate_training_estimate(1_000, "float32") == 4_000
    # float16: max(model 1000, gradients 1000 + 500, optimizer 2000, step 2000) = 2000, the
    # peak of the four and not their sum (6,500).
    assert rules.accelerate_training_estimate(1_000, "float16") == 2_000
    assert rules.accelerate_training_estimate(1_000, "bfloat16") == 2_000
    # An odd size: gradients 1001 + 500 = 1501 stay below the optimizer's 2002.
    assert rules.accelerate_training_estimate(1_001, "bfloat16") == 2_002


@pytest.mark.parametrize("dtype", ["int8", "int4", "bf16"])
def test_accelerate_has_no_training_figure_for_other_dtypes(dtype: str) -> None:
    with pytest.raises(ValueError, match="N/A"):
        rules.accelerate_training_estimate(1_000, dtype)


@pytest.mark.parametrize("size", [0, 1, 999, 4 * 1_235_814_400, 4 * 8_030_261_248 + 131_072])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "fp8"])
def test_accelerate_figure_equals_accelerates_own_function(size: int, dtype: str) -> None:
    estimate = pytest.importorskip(
        "accelerate.commands.estimate",
        reason="accelerate is not installed: its estimate_training_usage cannot be compared")
    # estimate_command prints max(item.values()) of this dict as "Training using Adam".
    theirs = max(estimate.estimate_training_usage(size, dtype).values())
    assert rules.accelerate_training_estimate(size, dtype) == theirs


def test_korthikanti_per_layer_matches_the_papers_gpt3_numbers() -> None:
    # §5: for GPT-3, a = 96, s = 2048, h = 12288, so 5as/h = 80, and one layer at b = 1 stores
    # sbh · (34 + 80) = 2048 · 12288 · 114 = 2,868,903,936 bytes.
    one_layer = rules.korthikanti_activations(1, 12_288, 96, 1, 2_048)
    assert one_layer == 2_868_903_936
    attention_share = one_layer - 34 * 2_048 * 12_288
    assert attention_share == 80 * 2_048 * 12_288


def test_korthikanti_for_llama_3_2_1b_by_hand() -> None:
    assert rules.korthikanti_activations(**LLAMA_1B) == 52_076_478_464
    assert rules.korthikanti_activations(**LLAMA_1B, recompute=True) == 536_870_912


def test_korthikanti_adds_the_outside_activations_only_with_a_vocabulary() -> None:
    outside = 4_286_578_688
    assert rules.korthikanti_activations(**LLAMA_1B, vocabulary=128_256) == 52_076_478_464 + outside
    assert (rules.korthikanti_activations(**LLAMA_1B, recompute=True, vocabulary=128_256)
            == 536_870_912 + outside)


def test_korthikanti_in_fp32_keeps_the_same_tensors_at_4_bytes() -> None:
    # per layer sbh(66 + 9as/h): the explainer's fp32 variant (analysis.activation_formula_bytes
    # with 4-byte elements and a 4h MLP); under recomputation each layer's input in FP32
    from generator.site.derived import activation_formula_bytes

    s, b, h, a = 32, 1, 64, 4
    per_layer = activation_formula_bytes(seq_len=s, batch_size=b, hidden=h, heads=a,
                                         intermediate=4 * h, element_bytes=4)
    assert rules.korthikanti_activations(2, h, a, b, s, fp32=True) == 2 * per_layer == \
        2 * (66 * s * b * h + 9 * a * s * s * b)
    assert rules.korthikanti_activations(2, h, a, b, s, fp32=True, recompute=True) == \
        4 * s * b * h * 2
    assert rules.korthikanti_activations(2, h, a, b, s, fp32=True, vocabulary=100) == \
        2 * per_layer + 9 * s * b * h + 4 * s * b * 100
    sixteen = activation_formula_bytes(seq_len=s, batch_size=b, hidden=h, heads=a,
                                       intermediate=4 * h, element_bytes=2)
    assert rules.korthikanti_activations(2, h, a, b, s) == 2 * sixteen


def test_korthikanti_scales_with_layers_and_batch_and_quadratically_in_the_attention() -> None:
    base = rules.korthikanti_activations(2, 64, 4, 1, 32)
    assert rules.korthikanti_activations(4, 64, 4, 1, 32) == 2 * base
    assert rules.korthikanti_activations(2, 64, 4, 3, 32) == 3 * base
    # Doubling s doubles the 34sbh part and quadruples the 5as²b part.
    linear, quadratic = 2 * 34 * 32 * 64, 2 * 5 * 4 * 32 * 32
    assert base == linear + quadratic
    assert rules.korthikanti_activations(2, 64, 4, 1, 64) == 2 * linear + 4 * quadratic


def test_states_plus_activations_is_the_sum_of_the_two_rules() -> None:
    full = rules.states_plus_activations(LLAMA_1B_PARAMETERS, **LLAMA_1B)
    assert full == 19_773_030_400 + 52_076_478_464 == 71_849_508_864
    lora = rules.states_plus_activations(1_000, 2, 64, 4, 1, 32, trainable_parameters=10,
                                         recompute=True, vocabulary=100)
    # 2,140 bytes of states + 2 · 32 · 64 · 2 = 8,192 recomputed + 5 · 2,048 + 4 · 32 · 100 = 23,040.
    assert lora == 2_140 + 8_192 + 23_040


def test_the_rules_import_no_torch() -> None:
    imported = set()
    for node in ast.walk(ast.parse(inspect.getsource(rules))):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert "torch" not in imported and "accelerate" not in imported
