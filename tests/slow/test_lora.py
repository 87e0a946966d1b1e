"""LoRA through PEFT (`lora_rank`, `lora_targets`, `lora_dropout`): the options as users give
them, what PEFT does to the step on fake tensors, and every refusal as one line. Estimates
held against real CPU runs: slow/test_lora_runs.py."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

import pytest
from conftest import assert_refused

from generator.errors import ConfigError
from generator.experiment import Experiment, option_words
from generator.measure.models import experiment_unavailable
from generator.measure.training import lora
from generator.results.notes import text

NEEDS_PEFT = pytest.mark.skipif(importlib.util.find_spec("peft") is None,
                                reason="LoRA needs peft (the test extra has it)")
TINY = {"model": "llama-tiny", "batch_size": 2, "seq_len": 16, "device": "cpu"}
#: llama-tiny: 2 layers, hidden 64; rank 8 on q_proj and v_proj (64 → 64 each)
QV_PARAMS = 2 * 2 * 8 * (64 + 64)


@functools.cache
def _estimate(**kw: Any) -> dict[str, Any]:
    from generator.measure.backends import measure

    return measure(Experiment(**{**TINY, **kw}))


# --------------------------------------------------------------------------- the options


def test_the_options_name_the_step_in_keys_labels_and_both_languages() -> None:
    exp = Experiment(**TINY, lora_rank=16, lora_targets=("q_proj", "v_proj"), lora_dropout=0.05)
    assert exp.key.endswith("-lora-r16-lora-on-q_proj_v_proj-lora-drop-0.05")
    assert "LoRA r=16 on q_proj,v_proj LoRA dropout 0.05" in exp.label
    assert option_words(exp.to_dict()) == ["LoRA, rank 16", "adapters on q_proj, v_proj",
                                           "LoRA dropout 0.05"]
    assert option_words(exp.to_dict(), "zh")[:2] == ["LoRA（秩 16）", "适配器加在 q_proj、v_proj"]
    assert Experiment.from_dict(exp.to_dict()) == exp
    assert Experiment.from_dict({**TINY, "lora_rank": 4, "lora_targets": "q_proj, v_proj"}
                                ).lora_targets == ("q_proj", "v_proj")


def test_full_fine_tuning_keeps_its_key() -> None:
    assert Experiment(**TINY).key == Experiment(**TINY, lora_rank=0).key
    assert "lora" not in Experiment(**TINY).key


@pytest.mark.parametrize(("fields", "words"), [
    ({"lora_targets": ("q_proj",)}, "lora_targets needs lora_rank"),
    ({"lora_dropout": 0.1}, "lora_dropout needs lora_rank"),
    ({"lora_targets": ("q_proj",), "lora_dropout": 0.1}, "lora_targets and lora_dropout need"),
    ({"lora_rank": -1}, "lora_rank must be a whole number ≥ 1"),
    ({"lora_rank": 2.5}, "lora_rank must be a whole number"),
    ({"lora_rank": 4, "lora_dropout": 1.0}, "lora_dropout must be a probability in [0, 1)"),
    ({"lora_rank": 4, "lora_targets": ("q-proj",)}, "lora_targets must be module names"),
    ({"lora_rank": 4, "lora_targets": ("all-linear", "q_proj")}, "give it alone"),
])
def test_bad_values_are_one_line(fields: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError, match=None) as caught:
        Experiment(**TINY, **fields)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_without_peft_lora_is_refused_with_the_install_line(monkeypatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "peft" else real(name, *a))
    why = experiment_unavailable(Experiment(**TINY, lora_rank=8, lora_targets=("q_proj",)))
    assert why == "lora_rank needs the peft package: pip install peft"
    assert experiment_unavailable(Experiment(**TINY)) is None


@NEEDS_PEFT
@pytest.mark.parametrize(("args", "words"), [
    (["--lora-targets", "q_proj"], ["lora_targets needs lora_rank"]),
    (["--lora-rank", "x"], ["--lora-rank", "'x'"]),
    (["--lora-rank", "4"], ["no default target modules", "--lora-targets", "q_proj"]),
    (["--lora-rank", "4", "--lora-targets", "nope"], ["nope", "not found", "v_proj"]),
])
def test_the_command_refuses_in_one_line(cli, seeded: Path, args: list[str],
                                         words: list[str]) -> None:
    assert_refused(cli, seeded, ["estimate", "llama-tiny", "-b", "1", "-s", "8", *args], *words)


# --------------------------------------------------------------------------- the step


@NEEDS_PEFT
def test_only_the_adapters_train() -> None:
    full = _estimate()
    adapted = _estimate(lora_rank=8, lora_targets=("q_proj", "v_proj"))
    assert adapted["trainable_parameter_count"] == QV_PARAMS
    assert adapted["parameter_count"] == full["parameter_count"] + QV_PARAMS
    # fp32 gradients of the adapters alone; AdamW's two moments and a step count per tensor
    assert adapted["category_max_bytes"]["gradients"] == 4 * QV_PARAMS
    assert adapted["category_max_bytes"]["optimizer_state"] == 2 * 4 * QV_PARAMS + 4 * 8
    assert adapted["peak_bytes"] < full["peak_bytes"]


@NEEDS_PEFT
def test_dropout_costs_activations_and_cuda_keeps_a_smaller_mask() -> None:
    """Each adapter then saves its own dropped copy of its input and what dropout keeps
    for backward: CUDA's fused kernel a 1-byte mask, the CPU's a noise tensor in fp32. (The
    bytes themselves are checked against real CPU runs: slow/test_lora_runs.py.)"""
    grown = {}
    for device in ("cuda", "cpu"):
        qv = {"lora_rank": 8, "lora_targets": ("q_proj", "v_proj"), "device": device}
        plain, dropped = _estimate(**qv), _estimate(**qv, lora_dropout=0.1)
        grown[device] = (dropped["category_max_bytes"]["activations"]
                         - plain["category_max_bytes"]["activations"])
    assert 0 < grown["cuda"] < grown["cpu"]


@NEEDS_PEFT
def test_adapters_of_a_16_bit_model_stay_in_fp32() -> None:
    result = _estimate(lora_rank=8, lora_targets=("q_proj", "v_proj"), precision="bf16")
    frozen = _estimate(precision="bf16")["parameter_count"]
    assert result["live_at_peak_bytes"]["parameters"] == 2 * frozen + 4 * QV_PARAMS
    assert result["category_max_bytes"]["gradients"] == 4 * QV_PARAMS


@NEEDS_PEFT
def test_the_note_says_where_the_adapters_went_in_both_languages() -> None:
    notes = [n for n in _estimate(lora_rank=8, lora_targets=("all-linear",))["notes"]
             if n["id"].startswith("lora")]
    assert [n["id"] for n in notes] == ["lora_all_linear"]
    assert "on down_proj, gate_proj, k_proj, lm_head, o_proj, q_proj, up_proj, v_proj " \
           "(all-linear, as PEFT reads it)" in text(notes[0])
    assert "适配器，加在 down_proj、gate_proj、k_proj" in text(notes[0], "zh")


@NEEDS_PEFT
def test_a_model_peft_has_no_default_for_must_name_targets() -> None:
    with pytest.raises(ConfigError, match="no default target modules for LlamaForCausalLM"):
        _estimate(lora_rank=8)


def test_unavailable_is_silent_without_lora() -> None:
    assert lora.unavailable(0) is None
