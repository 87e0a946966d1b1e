"""The one lever registry (generator/experiment/levers.py): what `estimate --levers` and the API try
on a user's step (those the step does not use yet and its model has an option for, the best
of each kind together), and what the levers page measures."""

from __future__ import annotations

import dataclasses

import pytest

from generator.experiment import Experiment
from generator.experiment.levers import BY_ID, REGISTRY, Step, offered, together

MLM = Step(("attention", "logits"), "eager")  # the built-in BERT


def changes(exp: Experiment, step: Step) -> list[dict]:
    """What each offered lever sets, as applied to `exp`."""
    return [{name: getattr(lever.apply(exp), name) for name in lever.changes}
            for lever in offered(exp, step)]


def test_a_plain_fp32_step_gets_every_lever() -> None:
    exp = Experiment(model="bert-base", batch_size=32, seq_len=128)
    assert changes(exp, MLM) == [
        {"checkpointing": True}, {"attention": "sdpa"}, {"precision": "amp-bf16"},
        {"precision": "bf16"}, {"optimizer_impl": "fused"},
        {"optimizer": "adamw-8bit", "optimizer_impl": "auto"}, {"micro_batches": 2}, {"micro_batches": 4}, {"logits": "masked"},
        {"expandable_segments": True}]


def test_levers_already_on_are_left_out() -> None:
    exp = Experiment(model="bert-base", batch_size=6, seq_len=128, precision="amp-bf16",
                     checkpointing=True, optimizer="sgd", logits="masked", micro_batches=3,
                     expandable_segments=True, device="cpu")
    # sdpa ran already; SGD has no fused or 8-bit AdamW; 6 samples split into 6 micro-batches
    # (twice 3), not 12; the CPU has no caching allocator to expand
    assert changes(exp, Step(("attention", "logits"), "sdpa")) == [
        {"precision": "bf16"}, {"micro_batches": 6}]
    assert changes(exp, Step(("attention", "logits"), "sdpa")) == changes(exp, Step())


def test_a_model_without_the_options_gets_no_such_lever() -> None:
    exp = Experiment(model="resnet50", batch_size=8, seq_len=224, optimizer_impl="fused")
    found = changes(exp, Step())
    assert {"attention": "sdpa"} not in found and {"logits": "masked"} not in found
    assert {"optimizer_impl": "fused"} not in found  # chosen already
    assert {"checkpointing": True} in found


def test_a_lever_applies_on_top_of_the_step() -> None:
    exp = Experiment(model="bert-base", batch_size=32, seq_len=128, precision="amp-fp16")
    both = BY_ID["checkpointing"].apply(exp, BY_ID["accumulation-x4"])
    assert (both.checkpointing, both.micro_batches, both.precision) == (True, 4, "amp-fp16")
    assert exp.checkpointing is False  # unchanged


def test_a_lever_is_named_on_the_step_it_applies_to() -> None:
    exp = Experiment(model="bert-base", batch_size=32, seq_len=128, micro_batches=2)
    assert BY_ID["accumulation-x2"].title(exp) == \
        "gradient accumulation, 4 micro-batches of 8"
    assert BY_ID["accumulation-x2"].title(exp, "zh") == "梯度累积，4 个微批次，每个 8 个样本"
    assert BY_ID["fused"].title(Experiment(model="bert-base", batch_size=2, seq_len=8,
                                           optimizer="adam")) == "fused Adam kernel"


def test_together_takes_the_best_of_each_kind_in_order() -> None:
    ckpt, amp, pure = BY_ID["checkpointing"], BY_ID["amp-bf16"], BY_ID["bf16"]
    fused, adam8 = BY_ID["fused"], BY_ID["adamw-8bit"]
    two, four = BY_ID["accumulation-x2"], BY_ID["accumulation-x4"]
    saved = [(ckpt, 50), (amp, 30), (pure, 20), (fused, 5), (adam8, 9), (two, 7), (four, 40)]
    assert [lever.id for lever in together(saved)] == \
        ["checkpointing", "amp-bf16", "adamw-8bit", "accumulation-x4"]
    assert together([]) == []


def test_hugging_face_models_also_try_lora_and_qlora_unless_it_is_on() -> None:
    hf = Experiment(model="hf:gpt2", batch_size=4, seq_len=128)
    assert changes(hf, Step(("attention", "hf_task"), "sdpa"))[-3:-1] == \
        [{"lora_rank": 16}, {"lora_rank": 16, "quantization": "nf4"}]
    on = Experiment(model="hf:gpt2", batch_size=4, seq_len=128, lora_rank=8)
    assert all("lora_rank" not in c for c in changes(on, Step(("attention",), "sdpa")))
    # PEFT has no default modules for the built-in models: they are not offered it
    bert = Experiment(model="bert-base", batch_size=32, seq_len=128)
    assert all("lora_rank" not in c for c in changes(bert, MLM))


def test_levers_a_better_one_replaces_are_not_offered_but_known() -> None:
    exp = Experiment(model="bert-base", batch_size=32, seq_len=128)
    ids = [lever.id for lever in offered(exp, MLM)]
    for quiet in ("amp-fp16", "sgd", "for-loop"):
        assert quiet not in ids and BY_ID[quiet].applies(exp, MLM)
    assert BY_ID["set-to-none"].against == {"zero_grad": "zeros"}


@pytest.mark.parametrize("lever", REGISTRY, ids=lambda lever: lever.id)
def test_every_lever_is_declared_whole(lever) -> None:
    exp = Experiment(model="hf:gpt2", batch_size=8, seq_len=64)
    assert lever.name.en and lever.name.zh and lever.cost.en and lever.cost.zh
    assert set(lever.changes) <= {f.name for f in dataclasses.fields(Experiment)}
    assert lever.title(exp) and lever.title(exp, "zh")
    assert list(BY_ID).count(lever.id) == 1
