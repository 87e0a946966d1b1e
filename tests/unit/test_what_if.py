"""The levers `estimate --levers` tries on a user's step (generator/plan/levers.py): those the
step does not use yet and the model has an option for, and the best of each kind together."""

from __future__ import annotations

from generator.experiment import Experiment
from generator.plan.levers import Lever, levers_for, together

MLM = ("attention", "logits")  # what the built-in BERT takes


def changes(exp: Experiment, **kwargs) -> list[dict]:
    return [lever.changes for lever in levers_for(exp, **kwargs)]


def test_a_plain_fp32_step_gets_every_lever() -> None:
    exp = Experiment(model="bert-base", batch_size=32, seq_len=128)
    assert changes(exp, takes=MLM, attention_ran="eager") == [
        {"checkpointing": True}, {"attention": "sdpa"}, {"precision": "amp-bf16"},
        {"precision": "bf16"}, {"optimizer_impl": "fused"}, {"optimizer": "adamw-8bit"},
        {"micro_batches": 2}, {"micro_batches": 4}, {"logits": "masked"},
        {"expandable_segments": True}]


def test_levers_already_on_are_left_out() -> None:
    exp = Experiment(model="bert-base", batch_size=6, seq_len=128, precision="amp-bf16",
                     checkpointing=True, optimizer="sgd", logits="masked", micro_batches=3,
                     expandable_segments=True, device="cpu")
    # sdpa ran already; SGD has no fused or 8-bit AdamW; 6 samples split into 6 micro-batches
    # (twice 3), not 12; the CPU has no caching allocator to expand
    assert changes(exp, takes=MLM, attention_ran="sdpa") == [{"precision": "bf16"},
                                                             {"micro_batches": 6}]
    assert changes(exp, takes=MLM, attention_ran="sdpa") == \
        changes(exp, takes=(), attention_ran=None)


def test_a_model_without_the_options_gets_no_such_lever() -> None:
    exp = Experiment(model="resnet50", batch_size=8, seq_len=224, optimizer_impl="fused")
    found = changes(exp, takes=(), attention_ran=None)
    assert {"attention": "sdpa"} not in found and {"logits": "masked"} not in found
    assert {"optimizer_impl": "fused"} not in found  # chosen already
    assert {"checkpointing": True} in found


def test_a_lever_applies_on_top_of_the_step() -> None:
    exp = Experiment(model="bert-base", batch_size=32, seq_len=128, precision="amp-fp16")
    lever, more = Lever("a", {"checkpointing": True}, ""), Lever("b", {"micro_batches": 4}, "")
    both = lever.apply(exp, more)
    assert (both.checkpointing, both.micro_batches, both.precision) == (True, 4, "amp-fp16")
    assert exp.checkpointing is False  # unchanged


def test_together_takes_the_best_of_each_kind_in_order() -> None:
    ckpt = Lever("ckpt", {"checkpointing": True}, "")
    amp, pure = Lever("amp", {"precision": "amp-bf16"}, ""), Lever("bf16", {"precision": "bf16"}, "")
    fused = Lever("fused", {"optimizer_impl": "fused"}, "")
    adam8 = Lever("8bit", {"optimizer": "adamw-8bit"}, "")
    two, four = Lever("2", {"micro_batches": 2}, ""), Lever("4", {"micro_batches": 4}, "")
    saved = [(ckpt, 50), (amp, 30), (pure, 20), (fused, 5), (adam8, 9), (two, 7), (four, 40)]
    assert [lever.words for lever in together(saved)] == ["ckpt", "amp", "8bit", "4"]
    assert together([]) == []


def test_hugging_face_models_also_try_lora_and_qlora_unless_it_is_on() -> None:
    hf = Experiment(model="hf:gpt2", batch_size=4, seq_len=128)
    assert changes(hf, takes=("attention", "hf_task"), attention_ran="sdpa")[-3:-1] == \
        [{"lora_rank": 16}, {"lora_rank": 16, "quantization": "nf4"}]
    on = Experiment(model="hf:gpt2", batch_size=4, seq_len=128, lora_rank=8)
    assert all("lora_rank" not in c for c in changes(on, takes=("attention",),
                                                      attention_ran="sdpa"))
    # PEFT has no default modules for the built-in models: they are not offered it
    bert = Experiment(model="bert-base", batch_size=32, seq_len=128)
    assert all("lora_rank" not in c for c in changes(bert, takes=MLM, attention_ran="eager"))
