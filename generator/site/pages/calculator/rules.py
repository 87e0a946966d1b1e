"""The rules of thumb as the calculator's page shows them: each one record (RULES) with the
bytes it gives for a step, its column's header, and what the page says it computes, side by
side, so that the words follow the code (generator/plan/rules_of_thumb.py holds the rules
themselves, as their sources state them). A step's task says whether a rule counts vocabulary
logits (a sequence classifier has none); an FP32 run takes the FP32 form of the activations.
And what the rules read of a model: its shape from the shipped config, its task.

Pure arithmetic on shipped JSON files: no PyTorch (the site renders without it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.experiment.experiment import BUILT_IN_TASKS, is_hf_name, task_of_architectures
from generator.plan import rules_of_thumb as rules
from generator.site.escaping import code
from generator.site.wording import listed, spaced
from generator.words import Words

#: accelerate's dtype row for a precision: AMP reads the 16-bit row (fp32 master weights).
ACCELERATE_DTYPE = {"fp32": "float32", "amp-fp16": "float16", "fp16": "float16",
                    "amp-bf16": "bfloat16", "bf16": "bfloat16"}
#: The tasks whose head gives a score per vocabulary entry at each position (the logits that
#: Korthikanti et al.'s §4.3 counts); a sequence classifier's head gives a few per sample.
VOCABULARY_TASKS = ("causal-lm", "masked-lm", "seq2seq-lm")
TASK_WORDS = {"causal-lm": Words("causal language model", "因果语言模型"),
              "masked-lm": Words("masked language model", "掩码语言模型"),
              "seq2seq-lm": Words("sequence-to-sequence model", "序列到序列模型"),
              "sequence-classification": Words("sequence classifier", "序列分类器")}
#: The configs shipped with the package (generator.measure.models.hf_config.SHIPPED), named
#: here: importing that module imports generator.measure, and so PyTorch.
SHIPPED = Path(__file__).parents[3] / "measure" / "models" / "hf_configs"


# --- what a rule takes of a step ---------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """What the rules take of one training step, and what the page says of it."""

    model: str
    label: str
    parameters: int
    trainable: int
    shape: dict[str, Any]
    task: str | None
    """The model's task head (VOCABULARY_TASKS or another); None where it is not known."""
    task_parameters: int | None
    """The task model's count without adapters (accelerate's size); None: not known."""
    batch: int
    """Per micro-batch: the activations of one forward pass."""
    seq: int
    precision: str
    optimizer: str
    checkpointing: bool
    attention: str | None
    """The estimate's attention ("sdpa", "eager"); None where it is not recorded."""

    @property
    def vocabulary_logits(self) -> bool:
        return self.task in VOCABULARY_TASKS

    @property
    def lora(self) -> bool:
        return self.trainable < self.parameters


def task_of(model: str, hf_task: str = "auto") -> str | None:
    """The task a step trains: its hf_task where set, a built-in model's own, or the one its
    shipped config's architectures name; None where none says."""
    if hf_task != "auto":
        return hf_task
    if not is_hf_name(model):
        return BUILT_IN_TASKS.get(model)
    config = model_config(model)
    return None if config is None else task_of_architectures(config.get("architectures"))


# --- the rules, each with its words --------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    """One rule of thumb as the page shows it: its bytes for a step, its column's header over
    the steps of a table, and what it computes, over every step the page applies it to."""

    figure: Callable[[Step], int | None]
    header: Callable[[Sequence[Step]], Words]
    describe: Callable[[Sequence[Step]], Words]
    #: How a sentence names it.
    name: Words


def _params_figure(step: Step) -> int:
    return rules.params_times_16(step.parameters, step.trainable)


def params_header(steps: Sequence[Step]) -> Words:
    """"16 B/parameter", or, where a step has frozen parameters, what it charges each kind."""
    if any(step.lora for step in steps):
        return Words("16 B per trainable, 2 B per frozen parameter (GiB, error)",
                     "可训练参数每个 16 字节、冻结参数每个 2 字节（GiB，误差）")
    return Words("16 B/parameter (GiB, error)", "每参数 16 字节（GiB，误差）")


def params_words(steps: Sequence[Step]) -> Words:
    """What the 16-byte column computes, with LoRA's form and what the steps beside it keep
    of a frozen weight (autocast keeps FP32 weights: 4 bytes) where LoRA steps are shown."""
    en = ("**16 B per parameter** (the ZeRO paper, §3.1): an fp16 copy of each weight and of "
          "its gradient, and Adam's fp32 master weight, momentum and variance; the model's "
          "states alone, no activation, logit or temporary")
    zh = ("**每参数 16 字节**（ZeRO 论文 §3.1）：每个权重和它的梯度各有一份 fp16 副本，再加上 Adam "
          "的 fp32 主权重、一阶矩和二阶矩；只算模型状态，不算激活值、logits 和临时张量")
    lora = [step for step in steps if step.lora]
    if lora:
        en += (". For LoRA it charges 16 B per trainable parameter and 2 B per frozen one, its "
               "fp16 copy alone")
        zh += "。LoRA 的行按可训练参数每个 16 字节、冻结参数每个 2 字节（只有 fp16 副本）计算"
        kept = sorted({step.precision for step in lora})
        autocast = [p for p in kept if p.startswith("amp-")]
        if autocast:
            en += (f"; the {' and '.join(p.replace('amp-', 'AMP ') for p in autocast)} steps "
                   f"it stands beside keep their frozen weights in FP32 under autocast, 4 B each")
            zh += spaced("；它旁边的",
                         "和".join(p.replace("amp-", "AMP ") for p in autocast),
                         "步骤在 autocast 下把冻结权重存为 FP32，每个 4 字节")
        if any(not p.startswith("amp-") and p != "fp32" for p in kept):
            en += ("; a step on 16-bit weights keeps its frozen weights at 2 B each, as the "
                   "rule does")
            zh += "；权重为 16 位的步骤，冻结权重每个 2 字节，与公式一致"
    if any(step.optimizer.endswith("8bit") for step in steps):
        en += "; it counts Adam's states in 32 bits also for a run with 8-bit Adam"
        zh += "；对用 8 位 Adam 的运行，它也按 32 位计算 Adam 的状态"
    return Words(en + ".", zh + "。")


def _accelerate_figure(step: Step) -> int | None:
    size = accelerate_size(step.shape, step.task, step.task_parameters)
    return None if size is None else rules.accelerate_training_estimate(
        size, ACCELERATE_DTYPE[step.precision])


def accelerate_words(steps: Sequence[Step]) -> Words:
    """What accelerate's column computes: its rows by the precisions of the steps shown."""
    dtypes = sorted({ACCELERATE_DTYPE[step.precision] for step in steps})
    times = {"float32": ("4×", "float32"), "float16": ("2×", "float16"),
             "bfloat16": ("2×", "bfloat16")}
    rows = [f"{times[d][0]} that size for {d}" for d in dtypes if d in times]
    rows_zh = [f"{d} 取这个大小的 {times[d][0]}" for d in dtypes if d in times]
    return Words(
        "**accelerate's estimate-memory**: the largest of the four training figures it prints "
        "for the model's size, 4 B per parameter of the base model class without its task head "
        f"(an untied LM head or a classifier is not counted): {', '.join(rows)}. Batch, "
        "sequence and LoRA are none of its inputs: a model has one figure for both methods.",
        "**accelerate 的 estimate-memory**：它为训练打印的四个数字中最大的一个，以模型大小为基数，"
        "即基础模型类（不含任务头：不绑定的 LM 头和分类头都不算）每个参数 4 字节："
        f"{'，'.join(rows_zh)}。批大小、序列长度和 LoRA 都不是它的输入：同一个模型两种方法只有一个数字。")


def _korthikanti_figure(step: Step) -> int:
    shape = step.shape
    return rules.states_plus_activations(
        step.parameters, shape["layers"], shape["hidden"], shape["heads"], step.batch, step.seq,
        trainable_parameters=step.trainable, recompute=step.checkpointing,
        vocabulary=shape["vocab"] if step.vocabulary_logits else None,
        fp32=step.precision == "fp32")


def korthikanti_words(steps: Sequence[Step]) -> Words:
    """What Korthikanti's column computes (rules.korthikanti_activations with the arguments
    _korthikanti_figure gives it): the forms the steps shown take, FP32 and checkpointed ones
    where there are such steps, the out-of-layer term where a task has vocabulary logits."""
    en = ["**Korthikanti et al.**: the first column's states plus the activations of the L "
          "transformer layers, sbhL(34 + 5as/h) bytes (their Eq. 5: 16-bit tensors, 1-byte "
          "dropout masks, an MLP 4h wide, and each layer's a·s² attention scores and softmax "
          "output kept whole)"]
    zh = ["**Korthikanti 等人**：第一列的模型状态，加上 L 个 Transformer 层的激活值 "
          "sbhL(34 + 5as/h) 字节（论文式 5：16 位张量、1 字节 dropout 掩码、4h 宽的 MLP，"
          "每层 a·s² 的注意力分数和 softmax 输出整块保存）"]
    fp32 = [s for s in steps if s.precision == "fp32"]
    if any(not s.checkpointing for s in fp32):
        en.append("sbhL(66 + 9as/h) for an FP32 run, the same tensors in FP32")
        zh.append("FP32 运行用 sbhL(66 + 9as/h)，即同样的张量存为 FP32")
    if any(s.checkpointing for s in steps):
        forms = " (4sbhL in FP32)" if any(s.checkpointing for s in fp32) else ""
        forms_zh = "（FP32 为 4sbhL）" if forms else ""
        en.append(f"2sbhL{forms} for a run that checkpoints every layer (their full "
                  "recomputation)")
        zh.append(f"每层都做激活检查点的运行（论文的完全重算）用 2sbhL{forms_zh}")
    text_en, text_zh = "; ".join(en), "；".join(zh)
    vocab = [s for s in steps if s.vocabulary_logits]
    others = [s for s in steps if not s.vocabulary_logits]
    if vocab:
        text_en += (". Where the task has vocabulary logits, it adds their §4.3 term for what "
                    "lies outside the layers, 5sbh + 4sbv: the embedding dropout's mask, the "
                    "final norm's and the output projection's inputs, and the logits in fp32 "
                    "(v the vocabulary)")
        text_zh += ("。任务有词表 logits 时，再加上论文 §4.3 中层外部分的 5sbh + 4sbv：embedding "
                    "dropout 的掩码、最后一个 norm 和输出投影的输入，以及 fp32 的 logits（v 为词表大小）")
        if any(s.precision == "fp32" for s in vocab):
            text_en += " (9sbh + 4sbv in FP32)"
            text_zh += "（FP32 为 9sbh + 4sbv）"
    if others:
        tasks = listed([TASK_WORDS.get(t, Words(t, t)) for t in
                        dict.fromkeys(s.task or "?" for s in others)])
        if vocab:
            text_en += f"; for a {tasks.en}, whose head sees no vocabulary, nothing is added"
            text_zh += spaced("；", tasks.zh, "的头不经过词表，不加这一项")
        else:
            text_en += (f". The steps here train a {tasks.en}, whose head sees no vocabulary: "
                        "nothing is added for the logits")
            text_zh += spaced("。这里的步骤训练的是", tasks.zh, "，它的头不经过词表：不为 logits 加任何项")
    return Words(text_en + ".", text_zh + "。")


RULES: dict[str, Rule] = {
    "params_times_16": Rule(
        _params_figure, params_header, params_words,
        Words("16 bytes per parameter", "每参数 16 字节")),
    "accelerate": Rule(
        _accelerate_figure,
        lambda steps: Words("accelerate estimate-memory (GiB, error)",
                            "accelerate estimate-memory（GiB，误差）"),
        accelerate_words,
        Words("accelerate's estimate-memory", "accelerate 的 estimate-memory")),
    "korthikanti": Rule(
        _korthikanti_figure,
        lambda steps: Words("Korthikanti et al. states + activations (GiB, error)",
                            "Korthikanti 等人：模型状态 + 激活值（GiB，误差）"),
        korthikanti_words,
        Words("Korthikanti et al.'s states plus activations", "Korthikanti 等人的状态加激活值公式")),
}
#: Each rule as a sentence names it.
RULE_NAMES = {rule_id: rule.name for rule_id, rule in RULES.items()}


def figures(step: Step) -> dict[str, int | None]:
    """Every rule's bytes for one step."""
    return {rule_id: rule.figure(step) for rule_id, rule in RULES.items()}


def described(steps: Sequence[Step]) -> list[dict[str, Any]]:
    """Each rule's description over the steps the page applies it to, in the tables' order."""
    return [{"id": rule_id, "words": rule.describe(steps)} for rule_id, rule in RULES.items()]


def attention_words(steps: Sequence[Step]) -> Words | None:
    """Whether the estimates the rules stand beside keep what Korthikanti's a·s² term counts:
    SDPA's fused kernels keep no attention scores, eager attention keeps them. None where no
    step records its attention."""
    kinds: dict[str, list[str]] = {}
    for step in steps:
        if step.attention:
            names = kinds.setdefault(step.attention, [])
            if step.label not in names:
                names.append(step.label)
    if not kinds:
        return None
    sdpa, eager = kinds.get("sdpa", []), kinds.get("eager", [])

    def names(labels: list[str]) -> Words:
        return listed([Words(str(code(n)), str(code(n))) for n in labels])

    if sdpa and not eager:
        return Words("Every estimate here runs SDPA, whose kernels keep no attention scores: "
                     "Korthikanti's a·s² term counts what these steps do not hold.",
                     "这里的估算都用 SDPA，它的内核不保存注意力分数：Korthikanti 的 a·s² 项算的是"
                     "这些步骤并不持有的张量。")
    if eager and not sdpa:
        return Words(f"The estimates here ({names(eager).en}) run eager attention, which keeps "
                     "the attention scores that Korthikanti's a·s² term counts.",
                     spaced("这里的估算（", names(eager).zh, "）用 eager 注意力，它保存 "
                            "Korthikanti 的 a·s² 项所算的注意力分数。"))
    that, runs = ("that", "runs") if len(eager) == 1 else ("those", "run")
    return Words(f"Every estimate here but {that} of {names(eager).en} runs SDPA, whose kernels "
                 "keep no attention scores, so Korthikanti's a·s² term counts what they do not "
                 f"hold; {names(eager).en} {runs} eager attention, which keeps them.",
                 spaced("除", names(eager).zh, "外，这里的估算都用 SDPA，它的内核不保存注意力分数，"
                        "所以 Korthikanti 的 a·s² 项算的是它们并不持有的张量；",
                        names(eager).zh, "用 eager 注意力，会保存这些分数。"))


# --- what the rules read of a model -------------------------------------------------------

def model_config(model: str) -> dict[str, Any] | None:
    """The model's shipped config.json as a dict, or None where the package ships none (the
    site imports nothing of the measuring layer, so hf_config.find_config is not asked)."""
    if not is_hf_name(model):
        return None
    path = SHIPPED / f"{model.removeprefix('hf:').replace('/', '--')}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _field(config: dict[str, Any], *names: str) -> Any:
    """The first of `names` the config sets, at its top or in a multimodal model's
    text_config (families name fields differently: GPT-2's n_layer is BERT's
    num_hidden_layers)."""
    for part in (config, config.get("text_config") or {}):
        for name in names:
            if part.get(name) is not None:
                return part[name]
    return None


def model_shape(model: str) -> dict[str, Any] | None:
    """Korthikanti's L, h, a and v from the shipped config, plus what accelerate's size
    needs; None for a model without a shipped config."""
    config = model_config(model)
    if config is None:
        return None
    shape = {"layers": _field(config, "num_hidden_layers", "n_layer", "num_layers"),
             "hidden": _field(config, "hidden_size", "n_embd", "d_model"),
             "heads": _field(config, "num_attention_heads", "n_head"),
             "vocab": _field(config, "vocab_size"),
             # transformers' default where a config leaves it out (Gemma's files do)
             "tied": _field(config, "tie_word_embeddings") is not False,
             "labels": len(config.get("id2label") or {}) or 2}
    missing = [k for k in ("layers", "hidden", "heads", "vocab") if shape[k] is None]
    if missing:
        raise ValueError(f"{model}: its config has no {', '.join(missing)} for the formulas")
    return shape


def accelerate_size(shape: dict[str, Any], task: str | None,
                    task_parameters: int | None) -> int | None:
    """What accelerate sizes: 4 bytes per parameter of the *base* model class (AutoModel,
    float32), tied weights once. The task model's count less its head: an untied LM head
    (vocab × hidden, no bias), or a sequence classifier (hidden × labels + labels, BERT's).
    Approximation: the buffers accelerate also counts (rotary inv_freq, BERT's position and
    token-type ids: 256 B to 8 KiB for the models here) are left out, and a head with a bias
    or another shape than these is not recognised. None without a full fine-tuning result."""
    if task_parameters is None:
        return None
    if task == "sequence-classification":
        head = shape["hidden"] * shape["labels"] + shape["labels"]
    else:
        head = 0 if shape["tied"] else shape["vocab"] * shape["hidden"]
    return 4 * (task_parameters - head)
