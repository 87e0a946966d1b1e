"""LoRA estimates held against real runs: a Hugging Face Llama and GPT-2 (transformers' Conv1D
layers) of a few layers, LoRA through PEFT, estimated for the CPU and run for real on it. The
estimate must land within 1 % of the CPU allocator's own peak, as every CPU validation does
(unit/test_lora.py checks the options and the step's categories on fake tensors alone)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers", reason="hf: models need transformers (pip install -e '.[hf]')")
pytest.importorskip("peft", reason="LoRA needs peft (pip install -e '.[lora]')")

from conftest import run_cli

from generator.experiment import Experiment
from generator.measure.backends import measure

CONFIGS = {
    "llama": {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64,
              "intermediate_size": 176, "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2, "vocab_size": 1000, "max_position_embeddings": 256},
    "gpt2": {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_layer": 2,
             "n_embd": 64, "n_head": 2, "vocab_size": 1000, "n_positions": 128,
             "bos_token_id": 0, "eos_token_id": 0},
}
CASES = [
    ("llama", {}),  # PEFT's default targets for llama: q_proj, v_proj
    ("llama", {"lora_dropout": 0.1}),
    ("llama", {"lora_targets": ("all-linear",), "precision": "amp-bf16"}),
    ("llama", {"precision": "bf16"}),  # a 16-bit model with fp32 adapters
    ("llama", {"checkpointing": True}),
    ("gpt2", {}),  # c_attn, a Conv1D
    ("gpt2", {"lora_dropout": 0.1, "precision": "amp-bf16"}),
]


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("lora-models")
    names = {}
    for name, config in CONFIGS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(config), encoding="utf-8")
        names[name] = f"hf:{root / name}"
    return names


def estimated_and_real(model: str, options: dict[str, Any]) -> tuple[dict, dict]:
    """The step estimated for the CPU and run on it for real, LoRA rank 8; the estimate
    within 1 % of the CPU allocator's own peak."""
    fields = {"model": model, "batch_size": 4, "seq_len": 64, "lora_rank": 8, **options}
    estimate = measure(Experiment(**fields, device="cpu"))
    real = measure(Experiment(**fields, backend="cpu"))
    assert estimate.get("error") is None and real.get("error") is None
    truth = real["ground_truth"]["peak_bytes"]
    assert abs(estimate["peak_bytes"] / truth - 1) < 0.01, (estimate["peak_bytes"], truth)
    return estimate, real


@pytest.mark.parametrize(("model", "options"), CASES,
                         ids=[f"{m}-{'-'.join(map(str, o.values())) or 'default'}"
                              for m, o in CASES])
def test_the_estimate_is_within_one_percent_of_the_real_run(
        models: dict[str, str], model: str, options: dict[str, Any]) -> None:
    estimate, real = estimated_and_real(models[model], options)
    assert estimate["trainable_parameter_count"] == real["trainable_parameter_count"]
    assert 0 < real["trainable_parameter_count"] < real["parameter_count"] / 10
    # the frozen weights get no gradient, the adapters' gradients are all there is
    assert estimate["category_max_bytes"]["gradients"] == \
        real["category_max_bytes"]["gradients"]


def test_the_command_says_where_the_adapters_went(models: dict[str, str], tmp_path: Path) -> None:
    proc = run_cli(["estimate", models["llama"], "-b", "2", "-s", "32", "--lora-rank", "16",
                    "--precision", "amp-bf16", "--gpu-memory", "8GiB"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "LoRA, rank 16" in lines[0] and "estimated" in lines[0]
    assert any(line.startswith("LoRA: PEFT ") and "q_proj, v_proj (PEFT's default for llama)"
               in line for line in lines)
    assert "trainable)" in lines[1]


QLORA_CASES = [
    ("llama", {"quantization": "nf4", "precision": "amp-bf16"}),  # QLoRA's usual recipe
    ("llama", {"quantization": "fp4"}),  # computed in fp32
    ("llama", {"quantization": "nf4", "precision": "bf16", "lora_targets": ("all-linear",)}),
    ("gpt2", {"quantization": "nf4", "precision": "amp-bf16"}),  # Conv1D, transposed
]


@pytest.mark.parametrize(("model", "options"), QLORA_CASES,
                         ids=[f"{m}-{'-'.join(map(str, o.values()))}" for m, o in QLORA_CASES])
def test_a_4bit_base_is_estimated_as_bitsandbytes_runs_it(
        models: dict[str, str], model: str, options: dict[str, Any]) -> None:
    """QLoRA: bitsandbytes' own 4-bit layers on the CPU for real, and on fake tensors for the
    estimate; the packed weights and their scales count to the byte."""
    pytest.importorskip("bitsandbytes", reason="QLoRA needs bitsandbytes (pip install -e '.[bnb]')")
    estimate, real = estimated_and_real(models[model], options)
    assert estimate["category_max_bytes"]["parameters"] == \
        real["category_max_bytes"]["parameters"]
    assert estimate["parameter_count"] == real["parameter_count"]
