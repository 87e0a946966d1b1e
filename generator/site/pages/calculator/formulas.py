""""Why not a formula": the rules of thumb people use beside this project's estimate.

For each model of the fine-tuning suite at one common setting (decoder LLMs: batch 4,
sequence 2,048; encoders: batch 16, sequence 256; AMP bf16, AdamW, no lever; full fine-tuning
and LoRA rank 16), what each rule of `generator.plan.rules_of_thumb` gives and its signed error
against the estimated allocated peak, (rule − estimate) ÷ estimate. And, where a published
real-GPU measurement exists with a held-out estimate of the same step, the rules at the
measurement's own setting against that measurement.

Each rule is one record (RULES): the bytes it gives for a step, its column's header, and what
the page says it computes, side by side, so that the words follow the code. A step's task says
whether the rule counts vocabulary logits (a sequence classifier has none); an FP32 run takes
the FP32 form of the activations.

Pure arithmetic on results and shipped JSON files: no PyTorch (the site renders without it).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from generator.experiment.experiment import (
    BUILT_IN_TASKS,
    is_hf_name,
    options,
    step_options_of,
    task_of_architectures,
)
from generator.plan import rules_of_thumb as rules
from generator.results.reference_runs import DATA, HeldOutPoint, held_out
from generator.site.escaping import code, markdown_text
from generator.site.pages.accuracy import held_out as accuracy
from generator.site.pages.accuracy.held_out import estimated_figure
from generator.site.pages.accuracy.held_out import label as held_out_label
from generator.site.tables import markdown_table
from generator.site.wording import listed, spaced
from generator.units import gib
from generator.words import Words

#: The table's setting, by kind of model: (batch, sequence, hf_task of the suite).
DECODER = {"batch_size": 4, "seq_len": 2048, "hf_task": "auto"}
ENCODER = {"batch_size": 16, "seq_len": 256, "hf_task": "sequence-classification"}
COMMON = {"precision": "amp-bf16", "optimizer": "adamw", "backend": "estimate", "gpu": ""}
LORA_RANK = 16
METHODS = ("full", "lora")
#: Step options that make the method or the task, not a lever.
NOT_LEVERS = ("lora_rank", "lora_targets", "lora_dropout", "quantization", "hf_task")
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
MEASUREMENTS = DATA / "fine_tune_measurements.json"
#: The configs shipped with the package (generator.measure.models.hf_config.SHIPPED), named
#: here: importing that module imports generator.measure, and so PyTorch.
SHIPPED = Path(__file__).parents[3] / "measure" / "models" / "hf_configs"

TEXT: dict[str, Words] = {
    "model": Words("Model", "模型"),
    "method": Words("Method", "方法"),
    "setting": Words("Batch × sequence", "批大小 × 序列长度"),
    "parameters": Words("Trainable / all parameters", "可训练 / 全部参数"),
    "allocated": Words("This estimate (allocated peak, GiB)", "本站估算（已分配峰值，GiB）"),
    "reserved": Words("This estimate (reserved peak, GiB)", "本站估算（已预留峰值，GiB）"),
    "measurement": Words("Measurement", "测量"),
    "published": Words("Published (GiB)", "公开数字（GiB）"),
    "estimate_vs": Words("This estimate, same kind of figure (GiB, error)",
                         "本站估算，同类数字（GiB，误差）"),
    "full": Words("full fine-tuning", "全参数微调"),
    "lora": Words(f"LoRA (rank {LORA_RANK})", f"LoRA（秩 {LORA_RANK}）"),
}


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


# --- the common setting ------------------------------------------------------------------

def method_at_setting(exp: dict[str, Any]) -> str | None:
    """"full" or "lora" if the experiment is a point of the table's setting, else None."""
    setting = ENCODER if exp.get("hf_task") == ENCODER["hf_task"] else DECODER
    if any(exp.get(k) != v for k, v in {**COMMON, **setting}.items()):
        return None
    skip = {id(options()[name]) for name in NOT_LEVERS}
    if any(id(opt) not in skip for opt, _ in step_options_of(exp)):
        return None  # a lever (checkpointing, fused kernels, accumulation, ...)
    if exp.get("quantization", "none") != "none":
        return None  # QLoRA: no rule of thumb has a form for 4-bit weights
    return {0: "full", LORA_RANK: "lora"}.get(exp.get("lora_rank", 0))


def rows(results: Sequence[dict[str, Any]], order: Sequence[str] | None = None
         ) -> list[dict[str, Any]]:
    """One row per (model, method) at the common setting: the step the rules take, their
    bytes, this estimate's peaks and each rule's signed error against the estimated allocated
    peak. A model or method with no error-free estimate at the setting has no row, nor has a
    model whose config the package does not ship (the formulas need its shape). `order`:
    model ids in the order the calculator lists them (models not in it follow, by kind,
    family and size)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for result in sorted(results, key=lambda r: r.get("key", "")):  # first key wins a tie
        exp = result["experiment"]
        method = method_at_setting(exp)
        if method is None or result.get("error") or not result.get("allocator"):
            continue
        found.setdefault((exp["model"], method), result)
    counts = task_parameter_counts(results)
    table = [_row(result, method, shape, counts.get((r_model(result), r_task(result))))
             for (model, method), result in found.items()
             if (shape := model_shape(model)) is not None]
    return sorted(table, key=_order_key(order))


def step_of(result: dict[str, Any], shape: dict[str, Any], task_parameters: int | None) -> Step:
    """The step a result estimated, as the rules take it."""
    exp = result["experiment"]
    micro = exp.get("micro_batches", 1) or 1
    return Step(model=exp["model"], label=exp["model"].removeprefix("hf:"),
                parameters=result["parameter_count"],
                trainable=result["trainable_parameter_count"], shape=shape,
                task=task_of(exp["model"], r_task(result)), task_parameters=task_parameters,
                batch=exp["batch_size"] // micro, seq=exp["seq_len"],
                precision=exp["precision"], optimizer=exp["optimizer"],
                checkpointing=bool(exp.get("checkpointing")),
                attention=result.get("attention") or (result.get("architecture") or {}).get(
                    "attention"))


def _row(result: dict[str, Any], method: str, shape: dict[str, Any],
         task_parameters: int | None) -> dict[str, Any]:
    exp, allocator = result["experiment"], result["allocator"]
    step = step_of(result, shape, task_parameters)
    allocated = allocator["peak_allocated_bytes"]
    by_rule = figures(step)
    return {"model": exp["model"], "label": step.label, "method": method,
            "task": r_task(result), "batch": step.batch, "seq": step.seq,
            "parameters": step.parameters, "trainable": step.trainable, "step": step,
            "rules": by_rule, "allocated": allocated,
            "reserved": allocator["peak_reserved_bytes"], "tensors": result["peak_bytes"],
            "errors": {k: error(v, allocated) for k, v in by_rule.items()},
            "key": result.get("key")}


def error(rule: int | None, reference: int) -> float | None:
    """Signed relative error: (rule − reference) ÷ reference; None without a rule figure."""
    return None if rule is None else (rule - reference) / reference


def error_ranges(found: Sequence[dict[str, Any]], method: str | None = None
                 ) -> dict[str, dict[str, float]]:
    """Per rule, the smallest and largest error over the rows (of one method if given), as
    data for the sentence the template prints: {"params_times_16": {"min": …, "max": …}, …}.
    A rule with no error in any row is left out."""
    ranges = {}
    for rule in RULES:
        errors = [r["errors"][rule] for r in found
                  if r["errors"][rule] is not None and method in (None, r["method"])]
        if errors:
            ranges[rule] = {"min": min(errors), "max": max(errors)}
    return ranges


# --- what each model is --------------------------------------------------------------------

def r_model(result: dict[str, Any]) -> str:
    return result["experiment"]["model"]


def r_task(result: dict[str, Any]) -> str:
    return result["experiment"].get("hf_task", "auto")


def task_parameter_counts(results: Sequence[dict[str, Any]]) -> dict[tuple[str, str], int]:
    """(model, hf_task) → the task model's parameter count, read off any full fine-tuning
    result (a LoRA result's count includes the adapters)."""
    counts = {}
    for result in results:
        exp = result["experiment"]
        if not exp.get("lora_rank") and result.get("parameter_count") and not result.get("error"):
            counts.setdefault((r_model(result), r_task(result)), result["parameter_count"])
    return counts


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


def _family(model: str) -> str:
    """"hf:meta-llama/Llama-3.2-1B" → "llama": the letters that start the model's name."""
    name = model.removeprefix("hf:").rsplit("/", 1)[-1]
    return re.match(r"[A-Za-z]*", name).group(0).lower()


def _order_key(order: Sequence[str] | None):
    place = {model: i for i, model in enumerate(order or ())}

    def key(row: dict[str, Any]) -> tuple:
        return (place.get(row["model"], len(place)), row["task"] == ENCODER["hf_task"],
                _family(row["model"]), row["parameters"], row["model"],
                METHODS.index(row["method"]))
    return key


# --- published measurements ----------------------------------------------------------------

def _flag(words: list[str], flag: str, default: str | None = None) -> str | None:
    return words[words.index(flag) + 1] if flag in words else default


def published(results: Sequence[dict[str, Any]], measurements: list[dict[str, Any]] | None = None,
              points: list[HeldOutPoint] | None = None) -> list[dict[str, Any]]:
    """The published real-GPU measurements (fine_tune_measurements.json) that are held-out
    points with an estimate (held_out.json): the measurement, this project's estimate as
    recorded there, and the rules at the measurement's own setting, each with its signed
    error against the measurement, (figure − measured) ÷ measured.

    What is comparable: the estimate's figure is the one of the kind the source printed
    (held_out.estimated_figure: for nvidia-smi, the reserved peak plus the CUDA context the
    source read), so its error is like for like. The rules predict no particular figure of a
    real GPU: they are set against what the source printed as a reader deciding "will it fit"
    would set them, so their errors include what they leave out by construction (the CUDA
    context, the allocator's cache). The rules take the step as the estimate's command gives
    it (step_of_point): its micro-batch, task, precision and checkpointing. None of these runs
    is at the table's setting. A measurement whose model has no full fine-tuning result here
    (for the parameter count) or no shipped config has no row."""
    measurements = load_measurements() if measurements is None else measurements
    by_id = {p.id: p for p in (held_out() if points is None else points)}
    counts = task_parameter_counts(results)
    found = []
    for entry in measurements:
        point = by_id.get(entry.get("held_out_id") or "")
        estimate = None if point is None else estimated_figure(point)
        if estimate is None:
            continue
        step = step_of_point(point, counts)
        if step is None:
            continue
        measured = entry["value_bytes"]
        by_rule = figures(step)
        found.append({"id": entry["id"], "model": step.model, "label": held_out_label(point),
                      "point": point, "step": step,
                      "gpu": point.source.gpu, "figure": point.source.figure,
                      "source_url": point.source.url, "measured": measured,
                      "estimate": estimate, "estimate_error": error(estimate, measured),
                      "rules": by_rule,
                      "errors": {k: error(v, measured) for k, v in by_rule.items()}})
    return found


def step_of_point(point: HeldOutPoint, counts: dict[tuple[str, str], int]) -> Step | None:
    """A held-out point's step as its estimate's command gives it; None without the model's
    parameter count (a full fine-tuning result) or shipped config."""
    words = shlex.split(point.command)
    model = next(w for w in words if w.startswith("hf:"))
    hf_task = _flag(words, "--hf-task", "auto")
    parameters, shape = counts.get((model, hf_task)), model_shape(model)
    if parameters is None or shape is None:
        return None
    return Step(model=model, label=model.removeprefix("hf:"), parameters=parameters,
                trainable=parameters, shape=shape, task=task_of(model, hf_task),
                task_parameters=parameters, batch=point.batch_size // point.micro_batches,
                seq=point.seq_len, precision=point.precision,
                optimizer=_flag(words, "--optimizer", "adamw"),
                checkpointing=point.checkpointing, attention=_flag(words, "--attention"))


def published_intro(found: Sequence[dict[str, Any]], table_rows: Sequence[dict[str, Any]]
                    ) -> Words:
    """Whether any published run is at a setting of the table (batch, sequence, precision)."""
    settings = {(r["step"].batch, r["step"].seq, r["step"].precision) for r in table_rows}
    at = [r for r in found if (r["step"].batch, r["step"].seq, r["step"].precision) in settings]
    if not at:
        return Words("No published real-GPU measurement of these models at the table's "
                     "settings was found. The rules and this project's held-out estimates meet "
                     "published runs at the runs' own settings instead:",
                     "没有找到这些模型在上表设置下的公开真实 GPU 测量。下面改在公开运行自己的设置下，"
                     "把各公式和本站的留出估算与它们对照：")
    return Words(f"{len(at)} of the published runs below are at a setting of the table; the "
                 "rules and this project's held-out estimates meet each at its own setting:",
                 f"下面的公开运行中有 {len(at)} 个与上表的某个设置相同；各公式和本站的留出估算"
                 "都在每个运行自己的设置下与它对照：")


def published_sources(found: Sequence[dict[str, Any]],
                      points: list[HeldOutPoint] | None = None) -> list[Words]:
    """One paragraph per source of the published rows, from held_out.json: what it ran and
    printed, how many of its points the table shows, the versions it states (or its date
    says) beside the estimates', the GPU the estimates model, and what else they substitute
    (the source's notes). The accuracy page's own sentences (accuracy/held_out.py)."""
    points = held_out() if points is None else points
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in found:
        groups.setdefault(row["point"].source.id, []).append(row)
    said = []
    for rows_of in groups.values():
        source = rows_of[0]["point"].source
        estimated = [p for p in points if p.source.id == source.id and p.estimated]
        ran = {k: sorted({r["point"].versions[k] for r in rows_of if k in r["point"].versions})
               for k in ("torch", "transformers", "bitsandbytes")}
        shown, of = len(rows_of), len(estimated)
        count = (Words(f"all {of} of its estimated points", f"它估算过的 {of} 个数据点全部列出")
                 if shown == of else
                 Words(f"{shown} of its {of} estimated points",
                       f"列出它估算过的 {of} 个数据点中的 {shown} 个"))
        name = markdown_text(source.label.en), markdown_text(source.label.zh)
        parts = [accuracy.compared(source), accuracy.versions(source, ran),
                 accuracy.modelled(source, sorted({r["point"].modelled_gpu for r in rows_of})),
                 source.notes]
        said.append(Words(
            f"[{name[0]}]({source.url}) ({source.date}), {markdown_text(source.model_name)} on "
            f"a {markdown_text(source.gpu)}: {count.en}. "
            + " ".join(markdown_text(p.en) for p in parts),
            spaced(f"[{name[1]}]({source.url})（{source.date}），", markdown_text(source.gpu),
                   "上的", markdown_text(source.model_name), f"：{count.zh}。")
            + "".join(markdown_text(p.zh) for p in parts)))
    return said


def load_measurements(path: Path = MEASUREMENTS) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))


def unlisted_points(measurements: list[dict[str, Any]] | None = None,
                    points: list[HeldOutPoint] | None = None) -> list[HeldOutPoint]:
    """The held-out points of a source the measurements draw on that no measurement lists:
    a point left out of the published table without a word (none, while the file is whole)."""
    measurements = load_measurements() if measurements is None else measurements
    points = held_out() if points is None else points
    listed_ids = {m.get("held_out_id") for m in measurements}
    sources = {p.source.id for p in points if p.id in listed_ids}
    return [p for p in points if p.source.id in sources and p.id not in listed_ids]


# --- tables ------------------------------------------------------------------------------

def signed_pct(fraction: float | None) -> str:
    """A signed error in whole percent: "−38 %", "+12 %", "0 %"; "–" for none."""
    if fraction is None:
        return "–"
    value = round(fraction * 100)
    return f"{'+' if value > 0 else '−' if value < 0 else ''}{abs(value)} %"


def count(n: int, lang: str) -> str:
    """A parameter count: "1.24 B" / "12.4 亿", "1.70 M" / "170 万"."""
    if lang == "zh":
        return f"{n / 1e8:.1f} 亿" if n >= 1e8 else f"{n / 1e4:,.0f} 万"
    return f"{n / 1e9:.2f} B" if n >= 1e9 else f"{n / 1e6:.2f} M"


def _with_error(nbytes: int | None, fraction: float | None) -> str:
    return "–" if nbytes is None else f"{gib(nbytes)} ({signed_pct(fraction)})"


def table(found: Sequence[dict[str, Any]], lang: str) -> Markup:
    """The common setting's table in Markdown: the rules beside this estimate's peaks."""
    steps = [r["step"] for r in found]
    headers = [*(TEXT[k][lang] for k in ("model", "method", "setting", "parameters")),
               *(rule.header(steps)[lang] for rule in RULES.values()),
               TEXT["allocated"][lang], TEXT["reserved"][lang]]
    body = [[code(r["label"]), TEXT[r["method"]][lang], f"{r['batch']} × {r['seq']:,}",
             f"{count(r['trainable'], lang)} / {count(r['parameters'], lang)}",
             *[_with_error(r["rules"][k], r["errors"][k]) for k in RULES],
             gib(r["allocated"]), gib(r["reserved"])] for r in found]
    return markdown_table(headers, body, numeric_from=2)


def published_table(found: Sequence[dict[str, Any]], lang: str) -> Markup:
    """The published measurements' table: each rule and this estimate against the run."""
    steps = [r["step"] for r in found]
    headers = [TEXT["measurement"][lang], TEXT["published"][lang], TEXT["estimate_vs"][lang],
               *(rule.header(steps)[lang] for rule in RULES.values())]
    body = [[f"[{markdown_text(r['label'][lang])}]({r['source_url']}) · "
              f"{markdown_text(r['gpu'])} · {markdown_text(r['figure'])}",
             gib(r["measured"]), _with_error(r["estimate"], r["estimate_error"]),
             *[_with_error(r["rules"][k], r["errors"][k]) for k in RULES]] for r in found]
    return markdown_table(headers, body)


def rule_words(rule: str, span: dict[str, float]) -> Words:
    """One rule's errors over the rows, and which way they go: always under the estimate,
    always over, or either way (the sign read off the range, never assumed)."""
    low, high = signed_pct(span["min"]), signed_pct(span["max"])
    name = RULE_NAMES[rule]
    if span["max"] < 0:
        return Words(f"{name.en} always falls short, by {low} to {high}",
                     spaced(name.zh, f"总是偏低，偏差 {low} 到 {high}"))
    if span["min"] > 0:
        return Words(f"{name.en} always comes out higher, by {low} to {high}",
                     spaced(name.zh, f"总是偏高，偏差 {low} 到 {high}"))
    return Words(f"{name.en} errs both ways, from {low} to {high}",
                 spaced(name.zh, f"时高时低，偏差从 {low} 到 {high}"))


def summary(found: Sequence[dict[str, Any]]) -> Words | None:
    """What the table shows, rule by rule, from the rows' own errors; None without rows."""
    ranges = error_ranges(found)
    if not ranges:
        return None
    parts = [rule_words(rule, span) for rule, span in ranges.items()]
    return Words("Against this estimate's allocated peak, " + "; ".join(p.en for p in parts) + ".",
                 "与本站估算的已分配峰值相比，" + "；".join(p.zh for p in parts) + "。")
