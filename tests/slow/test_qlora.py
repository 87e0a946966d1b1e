"""QLoRA's 4-bit base (`quantization`, with `lora_rank`): bitsandbytes' Linear4bit in the
layers transformers converts, on fake tensors; the option as users give it, what the weights
cost, and every refusal as one line. Held against real CPU runs: slow/test_lora_runs.py."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers", reason="hf: models need transformers (pip install -e '.[hf]')")
pytest.importorskip("peft", reason="QLoRA needs peft (the test extra has it)")
pytest.importorskip("bitsandbytes", reason="QLoRA needs bitsandbytes (the test extra has it)")

from conftest import assert_refused
from hf_offline import write_config

from generator.errors import ConfigError
from generator.experiment import Experiment, option_words
from generator.measure.models import experiment_unavailable
from generator.results.notes import text

#: Two layers, hidden 64, MLP 128, 2 of 4 heads for keys and values: per layer q and o
#: 64×64, k and v 64×32, gate and up 64×128, down 128×64
TINY_LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64,
              "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2, "vocab_size": 1000, "max_position_embeddings": 256}
LINEARS = 2 * 7
QUANTIZED_WEIGHTS = 2 * (2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 128)


@pytest.fixture(scope="module")
def estimate(tmp_path_factory: pytest.TempPathFactory):
    """Estimates of TINY_LLAMA, AMP bf16 with LoRA rank 8 on the CPU, by the options given,
    each made once; the config is written to a folder of the module's own (per worker)."""
    config = write_config(tmp_path_factory.mktemp("qlora") / "config.json", TINY_LLAMA)

    @functools.cache
    def estimated(**kw: Any) -> dict[str, Any]:
        from generator.measure.backends import measure

        return measure(Experiment(model=f"hf:{config.parent}", batch_size=2, seq_len=16,
                                  device="cpu", precision="amp-bf16", lora_rank=8, **kw))
    return estimated


def test_the_option_names_the_step_in_keys_labels_and_both_languages() -> None:
    exp = Experiment(model="hf:gpt2", batch_size=2, seq_len=16, lora_rank=8,
                     quantization="nf4")
    assert exp.key.endswith("-lora-r8-nf4")
    assert "LoRA r=8 nf4 weights" in exp.label
    assert option_words(exp.to_dict())[-1] == "nf4 4-bit weights (QLoRA)"
    assert option_words(exp.to_dict(), "zh")[-1] == "nf4 4 位权重（QLoRA）"
    assert Experiment.from_dict(exp.to_dict()) == exp


def test_each_4bit_weight_takes_half_a_byte_and_its_block_a_byte_of_scale(estimate) -> None:
    full, four_bit = estimate(), estimate(quantization="nf4")
    saved = full["category_max_bytes"]["parameters"] - four_bit["category_max_bytes"]["parameters"]
    packed = QUANTIZED_WEIGHTS // 2 + QUANTIZED_WEIGHTS // 64  # the weights, their scales
    tables = saved - (4 * QUANTIZED_WEIGHTS - packed)
    # what is left is each layer's small tables: the 16 levels of the 4-bit type, the 256 of
    # the scales' 8-bit type, the scales' own scale and offset (about 1.1 KiB a layer)
    assert 0 < -tables <= LINEARS * 1200


def test_the_weights_count_as_weights_and_only_the_adapters_train(estimate) -> None:
    full, four_bit = estimate(), estimate(quantization="nf4")
    assert four_bit["parameter_count"] == full["parameter_count"]
    assert four_bit["trainable_parameter_count"] == full["trainable_parameter_count"] == \
        2 * 8 * ((64 + 64) + (64 + 32))  # rank 8 on q_proj (64→64) and v_proj (64→32)
    assert four_bit["peak_bytes"] < full["peak_bytes"]


def test_the_note_says_what_was_quantized_in_both_languages(estimate) -> None:
    [note] = [n for n in estimate(quantization="nf4")["notes"] if n["id"] == "qlora"]
    assert (note["values"]["quant_type"], note["values"]["layers"]) == ("nf4", LINEARS)
    assert f"nf4 weights in {LINEARS} linear layers" in text(note)
    assert text(note).endswith("bnb_4bit_compute_dtype=bfloat16; linear layers not quantized: lm_head")
    assert text(note, "zh").endswith("bnb_4bit_compute_dtype=bfloat16；没有量化的线性层：lm_head")


def test_bitsandbytes_quantizes_for_real_after_an_estimate(estimate) -> None:
    """The estimate lends bitsandbytes a fake copy of its 8-bit code table, and gives the
    real one back."""
    import torch
    from bitsandbytes import functional

    estimate(quantization="fp4")
    packed, state = functional.quantize_4bit(torch.randn(64, 64), blocksize=64,
                                             compress_statistics=True, quant_type="fp4")
    assert functional.dequantize_4bit(packed, state).shape == (64, 64)


def test_4bit_weights_without_adapters_are_refused() -> None:
    with pytest.raises(ConfigError, match="quantization needs lora_rank"):
        Experiment(model="hf:gpt2", batch_size=2, seq_len=16, quantization="nf4")


def test_a_built_in_model_is_refused_in_one_line(cli, project: Path) -> None:
    assert_refused(cli, project, ["estimate", "llama-tiny", "--batch-size", 2, "--seq-len", 16,
                                  "--lora-rank", 8, "--lora-targets", "q_proj",
                                  "--quantization", "nf4"],
                   "quantization", "hf: model")


def test_without_bitsandbytes_the_reason_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "bitsandbytes" else real(name, *a))
    exp = Experiment(model="hf:gpt2", batch_size=2, seq_len=16, lora_rank=8,
                     quantization="nf4")
    assert experiment_unavailable(exp) == ("quantization needs the bitsandbytes package: "
                                           "pip install bitsandbytes")
    from generator.measure.backends import measure

    with pytest.raises(ConfigError, match="quantization needs the bitsandbytes package"):
        measure(exp)  # a lever or a single estimate: the same line, before anything runs
