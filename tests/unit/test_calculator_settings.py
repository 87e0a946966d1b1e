"""The calculator's choices read off an experiment (generator/site/calculator_grid/
settings.py): the method apart from the levers, the task head no lever, accumulation named
for any number of micro-batches."""

from __future__ import annotations

from generator.site.calculator_grid import settings


def _exp(**fields):
    return {"model": "hf:meta-llama/Llama-3.2-1B", "precision": "amp-bf16", "optimizer": "adamw",
            **fields}


def test_the_method_is_read_apart_from_the_levers() -> None:
    assert settings.method_of(_exp()) == "full"
    assert settings.method_of(_exp(lora_rank=16)) == "lora"
    assert settings.method_of(_exp(lora_rank=16, quantization="nf4")) == "qlora"
    qlora = settings.setting(_exp(lora_rank=16, quantization="nf4", checkpointing=True))
    assert (qlora["method"], qlora["levers"]) == ("qlora", "ckpt")


def test_levers_name_the_optimizer_and_its_kernels() -> None:
    assert settings.levers_id(_exp()) == "none"
    assert settings.lever_words(_exp()).en == "none"
    eight = _exp(optimizer="adamw-8bit", checkpointing=True)
    assert settings.levers_id(eight) == "ckpt+adamw-8bit"
    assert settings.lever_words(eight).en == "activation checkpointing + 8-bit AdamW"
    assert settings.levers_id(_exp(optimizer_impl="fused")) == "fused"


def test_accumulation_is_one_lever_for_any_number_of_micro_batches() -> None:
    two = settings.setting(_exp(micro_batches=2, checkpointing=True))
    assert two["micro_batches"] == 2
    assert "2 or more micro-batches" in two["lever_words"]["en"]
    assert settings.setting(_exp())["micro_batches"] == 1


def test_a_task_head_is_no_lever() -> None:
    bert = {"model": "hf:bert-base-uncased", "precision": "amp-bf16", "optimizer": "adamw",
            "hf_task": "sequence-classification"}
    assert settings.levers_id(bert) == "none"
