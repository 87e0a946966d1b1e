"""The levers that lower a step's memory, declared once: what each changes in an experiment,
its name and its cost in both languages, when it applies, and its row in the levers study
(what it acts on is the data's to say: the levers page reads it from the categories that
change). The API and `estimate --levers` try the ones a step does not use yet (`offered`);
the levers suite measures the studied ones on the article's example (`study_settings`, its
`"levers"` setting) and the levers page shows them (`study`); the calculator names an
optimizer as `OPTIMIZER_NAMES` does.

Torch-free, below the planning floor so that the suite files can read it: the API estimates
each lever; this module only says what it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from generator.experiment import Experiment, is_hf_name, options
from generator.experiment.option import resolved_optimizer_impl
from generator.words import Words, same

#: LoRA is tried at this rank, on PEFT's default modules for the model's type.
LORA_RANK = 16
#: The optimizers by the names their papers and PyTorch give them.
OPTIMIZER_NAMES: dict[str, Words] = {
    "adamw": same("AdamW"), "adam": same("Adam"), "sgd": same("SGD"),
    "adamw-8bit": Words("8-bit AdamW", "8 位 AdamW")}


@dataclass(frozen=True)
class Step:
    """What the levers need to know of a step beside its experiment: the experiment fields
    its model takes (its ModelSpec's) and the attention it ran (None: no attention option)."""

    takes: tuple[str, ...] = ()
    attention_ran: str | None = None


@dataclass(frozen=True)
class Lever:
    id: str
    name: Words
    """What it is, in a few words; `{optimizer}`, `{micro_batches}` and `{micro_batch}` are
    filled in from the step it is applied to."""
    changes: Mapping[str, Any]
    """The experiment fields it sets; a callable value is computed from the experiment."""
    cost: Words
    """What it costs beside memory; filled in as `name` is."""
    kind: str
    """Levers of one kind replace each other: one precision, one optimizer, one count of
    micro-batches, one way to fine-tune."""
    applies: Callable[[Experiment, Step], bool] = lambda exp, step: True
    """Whether the lever is one the step does not use yet, and one its model has."""
    suggested: bool = True
    """Whether `offered` tries it: False for levers a better one of their kind replaces
    (AMP fp16 beside AMP bf16, the for-loop optimizer beside the fused one) or that change
    what is trained (SGD for AdamW); the levers page still measures them."""
    against: Mapping[str, Any] = field(default_factory=dict)
    """Where the lever is a default already (set_to_none=True), the fields it is compared
    against; empty: the step without it."""
    phase: str | None = None
    """Where it acts: None, on what is live at the peak; "optimizer", within the optimizer
    step (where the peak may not be)."""
    study: str | None = None
    """Its row in the levers study (the levers suite and page; the id of the page's row):
    None, not studied."""
    section: str | None = None
    """The levers page's section that explains it, where it is not `study`."""
    study_changes: Mapping[str, Any] = field(default_factory=dict)
    """What the study sets beside `changes` on the article's example (LoRA's modules)."""

    def apply(self, exp: Experiment, *more: Lever) -> Experiment:
        """`exp` with this lever, and any more, on."""
        changes: dict[str, Any] = {}
        for lever in (self, *more):
            changes.update({name: value(exp) if callable(value) else value
                            for name, value in lever.changes.items()})
        return replace(exp, **changes)

    def title(self, exp: Experiment, lang: str = "en") -> str:
        """Its name on `exp`: "gradient accumulation, 4 micro-batches of 8"."""
        return self._on(self.name, exp, lang)

    def cost_on(self, exp: Experiment, lang: str = "en") -> str:
        """What it costs on `exp`: "4 forward and backward passes per optimizer step"."""
        return self._on(self.cost, exp, lang)

    def _on(self, words: Words, exp: Experiment, lang: str) -> str:
        changed = self.apply(exp)
        named = OPTIMIZER_NAMES.get(exp.optimizer)
        return words[lang].format(optimizer=named[lang] if named else exp.optimizer,
                                  micro_batches=changed.micro_batches,
                                  micro_batch=changed.batch_size // changed.micro_batches)


def _accumulation(times: int, study: str | None = None) -> Lever:
    def micro_batches(exp: Experiment) -> int:
        return exp.micro_batches * times

    return Lever(
        f"accumulation-x{times}",
        Words("gradient accumulation, {micro_batches} micro-batches of {micro_batch}",
              "梯度累积，{micro_batches} 个微批次，每个 {micro_batch} 个样本"),
        {"micro_batches": micro_batches},
        Words("{micro_batches} forward and backward passes per optimizer step",
              "每次优化器更新要做 {micro_batches} 次前向和反向"),
        "micro_batches",
        lambda exp, step: exp.batch_size % micro_batches(exp) == 0, study=study)


def _adam(exp: Experiment) -> bool:
    return exp.optimizer in ("adamw", "adam")


def _impl(exp: Experiment) -> str:
    return resolved_optimizer_impl(exp.optimizer_impl, exp.device)


def _option_words(name: str, value: Any) -> Words:
    """A lever that sets one option to one value is named as the option names that value
    (experiment.py), so that pages and the levers page say it alike."""
    return options()[name].words(value)


REGISTRY: tuple[Lever, ...] = (
    Lever("checkpointing", _option_words("checkpointing", True),
          {"checkpointing": True},
          Words("backward runs each block's forward again", "反向传播时把每个块的前向再算一遍"),
          "checkpointing",
          lambda exp, step: not exp.checkpointing and not exp.checkpoint_classes,
          study="checkpointing"),
    Lever("sdpa", _option_words("attention", "sdpa"), {"attention": "sdpa"},
          Words("none: a fused kernel in place of eager attention",
                "无：用融合内核代替逐步计算的注意力"),
          "attention",
          lambda exp, step: "attention" in step.takes and step.attention_ran not in
          (None, "sdpa"), study="sdpa"),
    Lever("amp-bf16", Words("AMP bf16", "AMP bf16"), {"precision": "amp-bf16"},
          Words("bf16 matmuls; needs a GPU with bf16 (Ampere or later)",
                "矩阵乘法用 bf16；需要支持 bf16 的 GPU（Ampere 及以后）"),
          "precision", lambda exp, step: exp.precision == "fp32",
          study="amp-bf16", section="amp"),
    Lever("amp-fp16", Words("AMP fp16", "AMP fp16"), {"precision": "amp-fp16"},
          Words("fp16 matmuls and a GradScaler; for GPUs without bf16",
                "矩阵乘法用 fp16，还要 GradScaler；用于不支持 bf16 的 GPU"),
          "precision", lambda exp, step: exp.precision == "fp32",
          suggested=False, study="amp-fp16", section="amp"),
    Lever("bf16", Words("pure bf16", "纯 bf16"), {"precision": "bf16"},
          Words("weights and optimizer state in bf16: small updates can round away",
                "权重和优化器状态都用 bf16：很小的更新可能被舍入掉"),
          "precision", lambda exp, step: exp.precision != "bf16"),
    Lever("sgd", Words("SGD (momentum) for AdamW", "SGD（动量）代替 AdamW"),
          {"optimizer": "sgd"},
          Words("another optimizer: one state tensor per weight instead of two, and training "
                "that may converge differently",
                "换了优化器：每个权重一份状态而不是两份，训练的收敛也可能不同"),
          "optimizer", lambda exp, step: _adam(exp), suggested=False, study="sgd"),
    Lever("set-to-none", Words("`zero_grad(set_to_none=True)`", "`zero_grad(set_to_none=True)`"),
          {"zero_grad": "none"},
          Words("none: PyTorch's default since 2.0", "无：PyTorch 2.0 起的默认做法"),
          "zero_grad", lambda exp, step: exp.zero_grad == "zeros",
          against={"zero_grad": "zeros"}, study="set-to-none"),
    Lever("fused", Words("fused {optimizer} kernel", "fused {optimizer} 内核"),
          {"optimizer_impl": "fused"},
          Words("none (Hugging Face's Trainer picks it with PyTorch 2.8 or later)",
                "无（PyTorch 2.8 起 Hugging Face 的 Trainer 默认就选它）"),
          "optimizer",
          lambda exp, step: _adam(exp) and _impl(exp) != "fused", phase="optimizer",
          study="fused"),
    Lever("for-loop", Words("for-loop {optimizer}", "for-loop {optimizer}"),
          {"optimizer_impl": "for-loop"},
          Words("one parameter at a time: a slower optimizer step on a GPU",
                "逐个参数更新：在 GPU 上优化器这一步更慢"),
          "optimizer",
          lambda exp, step: _adam(exp) and _impl(exp) == "foreach", suggested=False,
          phase="optimizer", study="for-loop", section="fused"),
    Lever("adamw-8bit", Words(f"{OPTIMIZER_NAMES['adamw-8bit'].en} (bitsandbytes)",
                              f"{OPTIMIZER_NAMES['adamw-8bit'].zh}（bitsandbytes）"),
          # bitsandbytes' own kernels: PyTorch's choice of kernels no longer applies
          {"optimizer": "adamw-8bit", "optimizer_impl": "auto"},
          Words("bitsandbytes; the optimizer state quantised to 8 bits",
                "要装 bitsandbytes；优化器状态量化到 8 位"),
          "optimizer", lambda exp, step: exp.optimizer == "adamw",
          study="adamw-8bit"),
    _accumulation(2),
    _accumulation(4, study="accumulation"),
    Lever("masked-logits", _option_words("logits", "masked"),
          {"logits": "masked"}, Words("none: the same loss", "无：损失不变"),
          "logits",
          lambda exp, step: "logits" in step.takes and exp.logits == "all",
          study="masked-logits"),
    Lever("lora", _option_words("lora_rank", LORA_RANK),
          {"lora_rank": LORA_RANK},
          Words("another fine-tune: PEFT's adapters train, the model's own weights stay frozen",
                "另一种微调：只训练 PEFT 的适配器，模型自己的权重冻结"),
          "fine-tune",
          # PEFT knows the module names of transformers' models, not of the built-in ones
          lambda exp, step: is_hf_name(exp.model) and not exp.lora_rank,
          # PEFT's default modules for BERT, whose names the built-in BERT shares
          study="lora", study_changes={"lora_targets": ("query", "value")}),
    Lever("qlora", Words(f"QLoRA: NF4 base, LoRA rank {LORA_RANK}",
                         f"QLoRA：NF4 底座，LoRA 秩 {LORA_RANK}"),
          {"lora_rank": LORA_RANK, "quantization": "nf4"},
          Words("as LoRA, and the frozen weights in 4 bits: dequantized for every matmul "
                "(slower steps), a little precision lost",
                "与 LoRA 相同，冻结的权重再存成 4 位：每次矩阵乘法都要反量化（训练步更慢），"
                "精度略有损失"),
          "fine-tune",
          lambda exp, step: is_hf_name(exp.model) and not exp.lora_rank),
    Lever("expandable-segments", _option_words("expandable_segments", True),
          {"expandable_segments": True},
          Words("none: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; acts on reserved "
                "memory only",
                "无：设 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True；只影响预留的显存"),
          "expandable",
          lambda exp, step: exp.device == "cuda" and not exp.expandable_segments,
          study="expandable-segments"),
)
BY_ID: dict[str, Lever] = {lever.id: lever for lever in REGISTRY}


def study() -> dict[str, Lever]:
    """The studied levers by their row's id, in the registry's order, each as the study
    applies it to the article's example (with its `study_changes`)."""
    return {lever.study: replace(lever, changes={**lever.changes, **lever.study_changes})
            for lever in REGISTRY if lever.study}


def study_settings(exp: Experiment) -> list[dict[str, Any]]:
    """The levers suite's settings, one per studied lever: the fields it sets on `exp`, or,
    where it is a default already, those of what it is compared against."""
    found = []
    for lever in study().values():
        changed = lever.apply(exp)
        found.append(dict(lever.against) or
                     {name: getattr(changed, name) for name in lever.changes})
    return found


def offered(exp: Experiment, step: Step) -> list[Lever]:
    """The levers to try on `exp`, in the registry's order: each one the step does not use
    yet and its model has, where no better one of its kind stands beside it."""
    return [lever for lever in REGISTRY if lever.suggested and lever.applies(exp, step)]


def together(saved: list[tuple[Lever, int]]) -> list[Lever]:
    """Of the levers that saved memory (with the bytes each saved, in the order tried), the
    one of each kind that saved most, in the order tried."""
    best: dict[str, tuple[Lever, int]] = {}
    for lever, saving in saved:
        if lever.kind not in best or saving > best[lever.kind][1]:
            best[lever.kind] = (lever, saving)
    return [lever for lever, _ in saved if best[lever.kind][0] is lever]
