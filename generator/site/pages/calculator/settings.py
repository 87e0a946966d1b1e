"""What the calculator's reader picks, read off an experiment: the training method (full
fine-tuning, LoRA, QLoRA), the precision, and the levers on top (checkpointing, the
optimizer's kind and kernels, gradient accumulation), each with its words in both languages.

One experiment's step options (experiment.step_options_of) mix the method (LoRA's rank, the
4-bit weights) with the levers; the widget offers them as separate choices, so they are
parted here, once, for the context and the widget alike.
"""

from __future__ import annotations

from typing import Any

from generator.experiment import step_options_of
from generator.experiment.experiment import options
from generator.words import Words

METHODS = {
    "full": Words(en="full fine-tuning", zh="全参数微调"),
    "lora": Words(en="LoRA", zh="LoRA"),
    "qlora": Words(en="QLoRA (NF4 4-bit weights)", zh="QLoRA（NF4 4 位权重）"),
}
#: Step options that make the method, or the model's task (BERT's classifier head), not a
#: lever.
METHOD_OPTIONS = ("lora_rank", "lora_targets", "lora_dropout", "quantization", "hf_task")
OPTIMIZER_WORDS = {"adamw-8bit": Words(en="8-bit AdamW", zh="8 位 AdamW")}
#: Estimated with two micro-batches; from the second on, each micro-batch runs with the
#: gradients of the others held, so the peak is the same for any number from two.
ACCUMULATION = Words(en="gradient accumulation (2 or more micro-batches)",
                     zh="梯度累积（2 个及以上微批次）")
NO_LEVERS = Words(en="none", zh="无")


def method_of(exp: dict[str, Any]) -> str:
    if not exp.get("lora_rank"):
        return "full"
    return "qlora" if exp.get("quantization", "none") != "none" else "lora"


def _levers(exp: dict[str, Any]) -> list[tuple[str, Words]]:
    """(tag, words) of each lever, in the order step_options_of gives them."""
    method = {id(options()[name]) for name in METHOD_OPTIONS}
    accumulation = options()["micro_batches"]
    found = [(opt.tag(value), ACCUMULATION if opt is accumulation else opt.words(value))
             for opt, value in step_options_of(exp) if id(opt) not in method]
    if exp.get("optimizer") in OPTIMIZER_WORDS:
        found.append((exp["optimizer"], OPTIMIZER_WORDS[exp["optimizer"]]))
    return found


def levers_id(exp: dict[str, Any]) -> str:
    """The levers on top of the method: "ckpt+adamw-8bit", or "none"."""
    return "+".join(tag for tag, _ in _levers(exp)) or "none"


def lever_words(exp: dict[str, Any]) -> Words:
    levers = [words for _, words in _levers(exp)]
    if not levers:
        return NO_LEVERS
    return Words(en=" + ".join(w.en for w in levers), zh=" + ".join(w.zh for w in levers))


def setting(exp: dict[str, Any]) -> dict[str, Any]:
    """A fit's choices as the widget offers them."""
    return {"method": method_of(exp), "precision": exp["precision"],
            "levers": levers_id(exp), "lever_words": dict(zip(("en", "zh"), lever_words(exp))),
            "micro_batches": exp.get("micro_batches", 1) or 1}
