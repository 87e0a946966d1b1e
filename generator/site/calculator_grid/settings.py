"""What the calculator's reader picks, read off an experiment: the training method (full
fine-tuning, LoRA, QLoRA), the precision, and the levers on top (checkpointing, the
optimizer's kind and kernels, gradient accumulation), each with its words in both languages.

One experiment's step options (experiment.step_options_of) mix the method (LoRA's rank, the
4-bit weights) with the levers; the widget offers them as separate choices, so they are
parted here, once, for the context and the widget alike.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from generator.experiment import Experiment, step_options_of
from generator.experiment.experiment import options
from generator.experiment.levers import OPTIMIZER_NAMES
from generator.site.labels import PRECISION_LABELS
from generator.words import Words, same

METHODS = {
    "full": Words(en="full fine-tuning", zh="全参数微调"),
    "lora": Words(en="LoRA", zh="LoRA"),
    "qlora": Words(en="QLoRA (NF4 4-bit weights)", zh="QLoRA（NF4 4 位权重）"),
}
#: Step options that make the method, or the model's task (BERT's classifier head), not a
#: lever.
METHOD_OPTIONS = ("lora_rank", "lora_targets", "lora_dropout", "quantization", "hf_task")
#: The optimizer a step takes unless told (AdamW): not a lever, so not named.
DEFAULT_OPTIMIZER = next(f.default for f in fields(Experiment) if f.name == "optimizer")
#: Estimated with two micro-batches; from the second on, each micro-batch runs with the
#: gradients of the others held, so the peak is the same for any number from two.
ACCUMULATION = Words(en="gradient accumulation (2 or more micro-batches)",
                     zh="梯度累积（2 个及以上微批次）")
NO_LEVERS = Words(en="none", zh="无")
#: Each precision as the widget offers it with a method, named by what it keeps (a frozen
#: weight in FP32 under autocast, or in bf16), and what the page says of it. A pair not here
#: takes the site's own label (labels.PRECISION_LABELS) and says nothing more.
PRECISIONS: dict[tuple[str, str], tuple[Words, Words]] = {
    ("full", "fp32"): (
        Words("FP32", "FP32"),
        Words("weights, gradients, AdamW's state and activations all in FP32",
              "权重、梯度、AdamW 状态和激活值都是 FP32")),
    ("full", "amp-fp16"): (
        Words("AMP fp16: FP32 weights, fp16 compute", "AMP fp16：FP32 权重，fp16 计算"),
        Words("FP32 weights, gradients and AdamW state; matrix products in fp16 under "
              "autocast, with a GradScaler",
              "权重、梯度和 AdamW 状态都是 FP32；矩阵乘法在 autocast 下用 fp16，配合 GradScaler")),
    ("full", "amp-bf16"): (
        Words("AMP bf16: FP32 weights, bf16 compute", "AMP bf16：FP32 权重，bf16 计算"),
        Words("FP32 weights, gradients and AdamW state; matrix products in bf16 under autocast",
              "权重、梯度和 AdamW 状态都是 FP32；矩阵乘法在 autocast 下用 bf16")),
    ("full", "bf16"): (
        Words("bf16 weights, gradients and AdamW state", "bf16 权重、梯度和 AdamW 状态"),
        Words("the model loaded in bf16 and trained in bf16: weights, gradients and AdamW's two "
              "states at 2 B each",
              "模型以 bf16 加载、以 bf16 训练：权重、梯度和 AdamW 的两个状态每个都是 2 字节")),
    ("lora", "amp-bf16"): (
        Words("AMP bf16: FP32 frozen weights, bf16 compute",
              "AMP bf16：FP32 冻结权重，bf16 计算"),
        Words("the model loaded in FP32: each frozen weight stays in FP32 (4 B) and autocast "
              "casts it to bf16 for its matrix product",
              "模型以 FP32 加载：每个冻结权重保持 FP32（4 字节），autocast 在矩阵乘法前把它转成 bf16")),
    ("lora", "bf16"): (
        Words("bf16 weights (adapters in FP32)", "bf16 权重（适配器为 FP32）"),
        Words("the model loaded in bf16 (`torch_dtype=torch.bfloat16`): each frozen weight at "
              "2 B; PEFT keeps the adapters in FP32",
              "模型以 bf16 加载（`torch_dtype=torch.bfloat16`）：每个冻结权重 2 字节；PEFT 把适配器"
              "保持为 FP32")),
    ("qlora", "bf16"): (
        Words("NF4 weights, bf16 compute (adapters in FP32)",
              "NF4 权重，bf16 计算（适配器为 FP32）"),
        Words("the frozen weights stored in 4-bit NF4 by bitsandbytes and dequantized to bf16 for "
              "each product; the adapters in FP32",
              "冻结权重由 bitsandbytes 以 4 位 NF4 存储，每次矩阵乘法前反量化为 bf16；适配器为 FP32")),
}


def precision_label(method: str, precision: str) -> Words:
    """A precision as the widget names it beside `method`."""
    found = PRECISIONS.get((method, precision))
    return found[0] if found else PRECISION_LABELS[precision]


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
    optimizer = exp.get("optimizer", DEFAULT_OPTIMIZER)
    if optimizer != DEFAULT_OPTIMIZER:  # named as the lever registry names it
        found.append((optimizer, OPTIMIZER_NAMES.get(optimizer, same(optimizer))))
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
