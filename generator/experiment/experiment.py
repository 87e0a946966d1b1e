"""What one experiment is: a typed, validated description that every stage shares. Each
field is declared once, with its Option (options.py): the `estimate` command's flags, the key,
the progress label, the words pages use and the levers' baseline all derive from it."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
from pathlib import Path
from dataclasses import asdict, dataclass, fields
from typing import Any

from generator.errors import ConfigError
from generator.experiment.option import (
    Option,
    budget_words,
    count,
    decay,
    experiment_problems,
    gpu_name,
    gpu_tag,
    names,
    option,
    option_of,
    parse_size,
    share,
    size_tag,
    size_text,
)
from generator.experiment.strategies import NONE, STRATEGIES, parallel_help
from generator.words import Words, same

#: amp-*: fp32 weights under autocast; fp16 / bf16: the whole model and optimizer in 16 bits.
PRECISIONS = ("fp32", "amp-fp16", "amp-bf16", "fp16", "bf16")
#: adamw-8bit: bitsandbytes' AdamW8bit (optimizer state in 8 bits), where it is installed.
OPTIMIZERS = ("adamw", "adam", "sgd", "adamw-8bit")
LOGITS = ("all", "masked")
BACKENDS = ("estimate", "cpu", "cuda")
DEVICES = ("cuda", "cpu")
ATTENTIONS = ("auto", "eager", "sdpa")
#: How a model name says Hugging Face builds it (generator/measure/models/hf.py).
HF_PREFIX = "hf:"
#: When and how the gradients are let go: none, set to None after the optimizer step
#: (PyTorch's default); zeros, zeroed there and kept; before-backward, set to None after the
#: next forward pass, as a loop that calls zero_grad() between forward and backward does.
ZERO_GRADS = ("none", "zeros", "before-backward")
LOSS_SCALINGS = ("auto", "off")
OPTIMIZER_IMPLS = ("auto", "for-loop", "foreach", "fused")
#: 4-bit base weights (bitsandbytes' Linear4bit, QLoRA); none: the weights as built.
QUANTIZATIONS = ("none", "nf4", "fp4")
#: How a step is spread over several GPUs: the strategies' records (strategies.py); none: one
#: GPU.
PARALLEL = (NONE, *STRATEGIES)
#: FSDP2's MixedPrecisionPolicy as param_dtype/reduce_dtype; none: the parameters' own dtype.
FSDP_MIXED_PRECISIONS = ("none", "bf16/fp32", "bf16/bf16", "fp16/fp32", "fp16/fp16")
#: What a checkpointed block keeps for backward: full, its inputs alone; selective-op,
#: the outputs of the ops torchtitan's op policy names (measure/training/selective_checkpoint.py).
CHECKPOINT_POLICIES = ("full", "selective-op")
#: Hugging Face task heads (generator/measure/models/hf.py); auto: from the config.
HF_TASKS = ("auto", "causal-lm", "masked-lm", "seq2seq-lm", "sequence-classification",
            "image-classification", "contrastive")
#: How a config's `architectures` names each task head (…ForCausalLM): hf.py builds "auto" by
#: it, and the site reads a shipped config's task by it without importing PyTorch.
HF_TASK_HEADS = {
    "causal-lm": ("ForCausalLM", "LMHeadModel"),
    "masked-lm": ("ForMaskedLM",),
    "seq2seq-lm": ("ForConditionalGeneration", "ForSeq2SeqLM"),
    "sequence-classification": ("ForSequenceClassification",),
    "image-classification": ("ForImageClassification",),
    # CLIP-style image-text pairs: the model's own contrastive loss (return_loss=True)
    "contrastive": ("CLIPModel",),
}
#: The task of each built-in transformer (generator/measure/models/: bert.py's
#: BertForMaskedLM, gpt2.py's GPT2LMHeadModel), for what reads it without building them
#: (tests/unit/test_model_tasks.py holds it against the classes built).
BUILT_IN_TASKS = {"bert-base": "masked-lm", "tiny": "masked-lm", "gpt2-small": "causal-lm"}

_KEY_UNSAFE = re.compile(r"[^a-z0-9.-]+")
#: A name the key holds as it is: the fold below leaves it unchanged.
_KEY_PLAIN = re.compile(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?")
#: A tag of the key that needs no fold (tags' own characters: "ckpt-llamamlp_llamarmsnorm").
_TAG_PLAIN = re.compile(r"[a-z0-9][a-z0-9._-]*")
#: How a step that does not free its gradients after the optimizer step is named.
_ZERO_GRAD_WORDS = {
    "zeros": same("zero_grad(set_to_none=False)"),
    "before-backward": Words("zero_grad() between forward and backward",
                             "zero_grad() 在前向和反向之间"),
}
#: How an attention other than the model's own is named ("auto" is never named: a default).
_ATTENTION_WORDS = {"sdpa": Words("SDPA attention", "融合注意力 SDPA"),
                    "eager": Words("eager attention", "eager 注意力（逐个算子计算）")}
#: The Hub configs that ship with the tool (measure/models/hf_configs/, "org--name.json"),
#: read here without importing the measuring code (it imports PyTorch).
_SHIPPED_HF = Path(__file__).resolve().parent.parent / "measure" / "models" / "hf_configs"
_REQUIRED = ("model", "batch_size", "seq_len")


@dataclass(frozen=True, kw_only=True)
class Experiment:
    """One training step to measure; the same experiment always has the same key."""

    model: str = option(cli=False, help="a model from `models`, or package.module:function")
    """A name from the model zoo (`python -m generator models`) or `package.module:function`."""
    batch_size: int = option(help="samples per step", short="-b")
    """Samples per step."""
    seq_len: int = option(help="tokens per sample (image models: the image side; CLIP-style "
                               "models: the text's tokens)", short="-s")
    """Tokens per sample."""
    precision: str = option(
        "fp32", choices=PRECISIONS, lever="fp32",
        help="fp32, amp-fp16 (autocast + GradScaler), amp-bf16 (autocast only), or fp16 / "
             "bf16 (model and optimizer state in 16 bits)")
    """One of PRECISIONS; fp16 / bf16: model, gradients and optimizer state in 16 bits."""
    optimizer: str = option("adamw", choices=OPTIMIZERS, lever="adamw",
                            help="adamw, adam, sgd (with momentum 0.9) or adamw-8bit (bitsandbytes)")
    """One of OPTIMIZERS; sgd means SGD with momentum 0.9, adamw-8bit bitsandbytes' AdamW8bit."""
    backend: str = option("estimate", choices=BACKENDS, cli=False,
                          help="estimate (fake tensors), cpu or cuda (real runs)")
    """One of BACKENDS: estimate (fake tensors), cpu or cuda (real runs)."""
    device: str = option("", choices=DEVICES, help="the device to model (default: cuda)")
    """The device modelled: a real backend's own; the estimate's cuda unless told otherwise."""
    attention: str = option(
        "", choices=ATTENTIONS, step_option=True, lever="eager",
        tag=str, label=str, words=lambda v: _ATTENTION_WORDS.get(v) or same(v),
        help="transformers: eager, sdpa, or auto (default): hf: models as transformers "
             "builds them (sdpa where the model has it), the built-in ones eager")
    """eager (matmul, softmax, dropout), sdpa (fused attention), or the model's own: auto."""
    checkpointing: bool = option(
        False, step_option=True, lever=False,
        tag=lambda v: "ckpt", label=lambda v: "checkpointing",
        words=lambda v: Words("activation checkpointing", "激活检查点"),
        help="recompute each block of model.layers in backward")
    """Recompute each block of `model.layers` in backward instead of keeping its activations."""
    checkpoint_policy: str = option(
        "full", choices=CHECKPOINT_POLICIES, step_option=True,
        tag=lambda v: "sac-op", label=lambda v: "selective op checkpointing",
        words=lambda v: Words("selective checkpointing by op (torchtitan's policy)",
                              "按算子的选择性激活检查点（torchtitan 的策略）"),
        help="with --checkpointing: full recomputes each block whole (default); "
             "selective-op keeps the outputs of the ops torchtitan's policy names (every "
             "other matmul, fused attention) and recomputes the rest")
    """With checkpointing: what each checkpointed block keeps (selective_checkpoint.py)."""
    checkpoint_classes: tuple[str, ...] = option(
        (), step_option=True, metavar="CLASS,…", parse=names,
        tag=lambda v: "ckpt-" + "_".join(v).lower(),
        label=lambda v: f"checkpointing {','.join(v)}",
        words=lambda v: Words(f"checkpointing {', '.join(v)}", f"激活检查点（{'、'.join(v)}）"),
        help="recompute every module of these classes in backward, e.g. LlamaMLP,LlamaRMSNorm")
    """Recompute modules of these classes in backward (`_composable.checkpoint` per class)."""
    loss_scaling: str = option(
        "auto", choices=LOSS_SCALINGS, step_option=True,
        tag=lambda v: "no-scaler", label=lambda v: "no GradScaler",
        words=lambda v: Words("no loss scaling", "不做损失缩放"),
        help="auto: a GradScaler for amp-fp16 (default); off: autocast without one")
    """auto: amp-fp16 scales the loss with a GradScaler; off: no loss scaler at all."""
    weight_decay: float | None = option(
        None, step_option=True, metavar="RATE", parse=decay,
        tag=lambda v: f"wd-{exact_number(v)}", label=lambda v: f"weight decay {v:g}",
        words=lambda v: Words(f"weight decay {v:g}", f"权重衰减 {v:g}"),
        help="the optimizer's weight decay (default: its own default, 0.01 for AdamW, 0 "
             "otherwise); Adam's adds a gradient-sized temporary")
    """The optimizer's weight decay; None: PyTorch's default (Adam's costs a temporary)."""
    expandable_segments: bool = option(
        False, step_option=True, lever=False,
        tag=lambda v: "expandable", label=lambda v: "expandable segments",
        words=lambda v: Words("expandable segments", "可扩展段（expandable segments）"),
        help="PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: the allocator grows segments "
             "instead of taking new ones")
    """The CUDA caching allocator's expandable segments (changes reserved memory only)."""
    built_on_device: bool = option(
        False, step_option=True, tag=lambda v: "on-device", label=lambda v: "built on the GPU",
        words=lambda v: Words("model built on the GPU", "模型直接在 GPU 上构建"),
        help="the model is built on the GPU in its training dtype, so what building frees (an "
             "output weight that tying replaces) stays cached; default: it arrives built")
    """Built on the GPU: the allocator starts with what building freed (reserved only)."""
    zero_grad: str = option(
        "none", choices=ZERO_GRADS, step_option=True, lever="none",
        tag=lambda v: f"grad-{v}", label=lambda v: _ZERO_GRAD_WORDS[v].en,
        words=lambda v: _ZERO_GRAD_WORDS[v],
        help="none: zero_grad(set_to_none=True) after the optimizer step (default); zeros: "
             "set_to_none=False; before-backward: zero_grad() after the forward pass, so the "
             "last step's gradients live through it")
    """none: zero_grad(set_to_none=True) frees .grad; zeros: set_to_none=False keeps it;
    before-backward: freed only between the next forward and backward."""
    optimizer_impl: str = option(
        "auto", choices=OPTIMIZER_IMPLS, step_option=True, lever="foreach",
        tag=str, label=str, words=lambda v: Words(f"{v} optimizer", f"{v} 优化器实现"),
        help="auto (PyTorch's pick), for-loop, foreach or fused")
    """auto (PyTorch's pick for the modelled device), for-loop, foreach or fused kernels."""
    micro_batches: int = option(
        1, step_option=True, lever=1, metavar="N", parse=count,
        tag=lambda v: f"accum-{v}", label=lambda v: f"{v} micro-batches",
        words=lambda v: Words(f"gradient accumulation over {v} micro-batches",
                              f"梯度累积（{v} 个微批次）"),
        help="split the batch into N micro-batches, each with its own forward and backward, "
             "and step the optimizer once on the accumulated gradients (default 1)")
    """Gradient accumulation: batch_size samples per optimizer step, in N equal micro-batches."""
    logits: str = option(
        "all", choices=LOGITS, step_option=True, lever="all",
        tag=lambda v: f"logits-{v}", label=lambda v: f"logits {v}",
        words=lambda v: Words("logits at masked positions only", "只在被遮盖的位置算 logits"),
        help="masked-LM models: all (the head at every position, default) or masked (the head "
             "only where a token is masked)")
    """Masked-LM models: run the MLM head and the loss on every position, or on masked ones."""
    hf_task: str = option(
        "auto", choices=HF_TASKS, step_option=True,
        tag=lambda v: f"task-{v}", label=lambda v: f"task {v}", words=lambda v: same(f"task {v}"),
        help="hf: models: the task head (default auto: the config's architectures)")
    """Hugging Face models: the task head to train; auto reads the config's architectures."""
    lora_rank: int = option(
        0, step_option=True, lever=0, metavar="R", parse=count,
        tag=lambda v: f"lora-r{v}", label=lambda v: f"LoRA r={v}",
        words=lambda v: Words(f"LoRA, rank {v}", f"LoRA（秩 {v}）"),
        help="train LoRA adapters of rank R with PEFT instead of every weight, which stays "
             "frozen (default 0: full fine-tuning)")
    """PEFT's LoRA (`get_peft_model`): adapters of this rank train; 0: every weight trains."""
    lora_targets: tuple[str, ...] = option(
        (), step_option=True, lever=(), metavar="NAME,…", parse=names,
        tag=lambda v: "lora-on-" + "_".join(v).lower(), label=lambda v: f"on {','.join(v)}",
        words=lambda v: Words(f"adapters on {', '.join(v)}", f"适配器加在 {'、'.join(v)}"),
        help="with --lora-rank: the modules that get adapters, e.g. q_proj,v_proj or "
             "all-linear (default: PEFT's choice for the model type)")
    """PEFT's `target_modules`; empty: PEFT's default for the model type."""
    quantization: str = option(
        "none", choices=QUANTIZATIONS, step_option=True, lever="none", tag=str,
        label=lambda v: f"{v} weights", words=lambda v: Words(f"{v} 4-bit weights (QLoRA)",
                                                              f"{v} 4 位权重（QLoRA）"),
        help="with --lora-rank: the frozen linear weights in 4 bits, as bitsandbytes loads them "
             "for QLoRA (nf4 or fp4, double quantization; default none)")
    """QLoRA's frozen base: linear weights in 4 bits (bitsandbytes); none: as built."""
    lora_dropout: float = option(
        0.0, step_option=True, lever=0.0, metavar="P", parse=share,
        tag=lambda v: f"lora-drop-{exact_number(v)}", label=lambda v: f"LoRA dropout {v:g}",
        words=lambda v: Words(f"LoRA dropout {v:g}", f"LoRA dropout {v:g}"),
        help="with --lora-rank: dropout on the adapters' input (default 0, as PEFT's); "
             "above 0 each adapter keeps its own dropped copy of its input for backward")
    """PEFT's `lora_dropout`: each adapted module drops its input for its adapter alone."""
    gpu: str = option(
        "", metavar="NAME", parse=gpu_name,
        help="the GPU to model and to judge the step against, from the catalogue (e.g. 'RTX "
             "4090', 'A100 80GB', H100; loosely matched): its cuBLAS workspace, CUDA context "
             "and memory (default: an H100, which the output names)")
    """The CUDA GPU an estimate models (generator/gpus.py), by its catalogue name; empty: the
    catalogue's assumed one (an H100), unnamed in the key."""
    gpu_memory: int | None = option(
        None, step_option=True, metavar="SIZE", parse=parse_size,
        tag=lambda v: f"budget-{size_tag(v)}", words=budget_words,
        help="say whether the step fits in SIZE, e.g. 24GiB or 80GB (a GPU the catalogue lacks; "
             "with --gpu, that GPU's overheads)")
    """A memory budget in bytes: a step whose peak exceeds it is recorded as out of memory."""
    gpus: int = option(
        1, step_option=True, metavar="N", parse=count,
        tag=lambda v: f"{v}gpus", label=lambda v: f"on {v} GPUs",
        words=lambda v: Words(f"{v} GPUs", f"{v} 块 GPU"),
        help="the GPUs the step is spread over by --parallel; batch_size is each "
             "data-parallel rank's (default 1); the figures are one GPU's")
    """The GPUs of the job; every figure is one rank's (parallel.py)."""
    parallel: str = option(
        "none", choices=PARALLEL, step_option=True, tag=str, label=str,
        words=lambda v: STRATEGIES[v].words, help=parallel_help())
    """One of PARALLEL: how `gpus` GPUs share the step."""
    shard_size: int = option(
        0, step_option=True, metavar="N", parse=count, tag=lambda v: f"shard{v}",
        label=lambda v: f"shard groups of {v}",
        words=lambda v: Words(f"shard groups of {v} GPUs", f"每 {v} 块 GPU 一个分片组"),
        help="hsdp: the GPUs each FSDP2 shard group spans (default: 8, or all of them when "
             "fewer)")
    """hsdp: GPUs per shard group; 0: the default, min(8, gpus)."""
    tp_size: int = option(
        0, step_option=True, metavar="N", parse=count, tag=lambda v: f"tp{v}",
        label=lambda v: f"TP groups of {v}",
        words=lambda v: Words(f"tensor-parallel groups of {v} GPUs",
                              f"每 {v} 块 GPU 一个张量并行组"),
        help="fsdp2-tp: the GPUs each tensor-parallel group spans (default: 8, or all of "
             "them when fewer)")
    """fsdp2-tp: GPUs per tensor-parallel group; 0: the default, min(8, gpus)."""
    reshard_after_forward: bool = option(
        True, step_option=True, tag=lambda v: "no-reshard", label=lambda v: "kept gathered",
        words=lambda v: Words("weights kept gathered after forward",
                              "前向后不释放聚合的权重"),
        help="fsdp2, hsdp, fsdp2-tp: free each block's gathered weights after its forward "
             "and gather them again for backward (default; --no-reshard-after-forward keeps "
             "them, ZeRO-2-like)")
    """FSDP2's reshard_after_forward for every block (the root is never resharded)."""
    fsdp_mixed_precision: str = option(
        "none", choices=FSDP_MIXED_PRECISIONS, step_option=True,
        tag=lambda v: "mp-" + v.replace("/", "-"), label=lambda v: f"FSDP2 policy {v}",
        words=lambda v: Words(f"FSDP2 mixed precision {v}", f"FSDP2 混合精度 {v}"),
        help="FSDP2's MixedPrecisionPolicy, param_dtype/reduce_dtype (e.g. bf16/fp32: "
             "weights gathered in bf16, gradients reduced in fp32); none: the parameters' "
             "dtype (default)")
    """FSDP2's MixedPrecisionPolicy (param/reduce dtypes); none: its default."""
    cpu_offload: bool = option(
        False, step_option=True, tag=lambda v: "offload", label=lambda v: "CPU offload",
        words=lambda v: Words("parameters, gradients and optimizer state offloaded to the CPU",
                              "参数、梯度和优化器状态卸载到 CPU"),
        help="fsdp2, hsdp, fsdp2-tp: FSDP2's CPUOffloadPolicy: the sharded parameters, "
             "gradients and optimizer state live in host memory, the optimizer steps on the "
             "CPU")
    """FSDP2's CPUOffloadPolicy: shards in host memory, copied to the GPU to be gathered."""
    tracked: bool = option(
        False, cli=False,
        help="a user's own step, tracked by generator.track(): the tool did not build it, "
             "so its model and optimizer may be any")
    """A step of the user's own code, tracked (generator.track); no suite can ask for one."""
    allocation_trace: bool = option(
        False, cli=False,
        help="suites: keep the simulated CUDA allocator's input in the result, every "
             "allocation and free of the steps it replays (allocator/trace.py)")
    """Keep the allocator model's input (the calculator fits it); the same step, another file."""

    def __post_init__(self) -> None:
        for name in list_fields():  # lists, as JSON gives them back
            if isinstance(getattr(self, name), list):
                object.__setattr__(self, name, tuple(getattr(self, name)))
        if not self.device:
            modelled = "cuda" if self.backend == "estimate" else self.backend
            object.__setattr__(self, "device", modelled)
        if self.attention in ("", "auto"):
            object.__setattr__(self, "attention", attention_default(self.model))
        if self.gpu and isinstance(self.gpu, str):  # its catalogue name; checked below
            with contextlib.suppress(ConfigError):
                object.__setattr__(self, "gpu", gpu_name(self.gpu))
        problems = experiment_problems(self, options())
        if problems:
            raise ConfigError("; ".join(problems))

    @functools.cached_property  # frozen: the same key every time, and a page asks often
    def key(self) -> str:
        """File-name-safe identity, e.g. `bert-base-b32-s128-amp-fp16-adamw-estimate`: every
        field is in it, lower-case, and names that a fold would merge carry a digest
        (key_name), so that two experiments do not share a results file. Class and module
        names of step options fold case (as since the first results); two that differ only
        in case are refused within a run (jobs/load.py) and across runs (jobs/runner.py)."""
        key = (f"{key_name(self.model)}-b{self.batch_size}-s{self.seq_len}-{self.precision}"
               f"-{key_name(self.optimizer)}-{self.backend}")
        if self.backend == "estimate" and self.device != "cuda":
            key += f"-as-{self.device}"
        if self.gpu:
            key += f"-on-{gpu_tag(self.gpu)}"
        tags = [key_tag(opt.tag(value)) for opt, value in self.step_options()]
        return "-".join([key] + tags + (["trace"] if self.allocation_trace else [])
                        + (["tracked"] if self.tracked else []))

    @property
    def label(self) -> str:
        """Short human-readable description for progress lines and tables."""
        where = self.backend if self.backend != "estimate" else \
            f"estimate ({self.device}{', ' + gpu_tag(self.gpu) if self.gpu else ''})"
        budget = f" in {size_text(self.gpu_memory)}" if self.gpu_memory is not None else ""
        extra = "".join(f" {opt.label(value)}" for opt, value in self.step_options() if opt.label)
        return (f"{self.model} batch {self.batch_size} seq {self.seq_len} "
                f"{self.precision} {self.optimizer}{extra} on {where}{budget}")

    def step_options(self) -> list[tuple[Option, Any]]:
        """The step options this experiment sets to other than their defaults, in order."""
        return step_options_of(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        """JSON's own types: lists of names (classes, modules), not tuples."""
        data = asdict(self)
        return {**data, **{name: list(getattr(self, name)) for name in list_fields()}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Experiment":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown experiment field(s) {', '.join(unknown)}; "
                              f"allowed: {', '.join(sorted(known))}")
        missing = [name for name in _REQUIRED if name not in data]
        if missing:
            raise ConfigError(f"experiment is missing {', '.join(missing)}")
        if isinstance(data.get("gpu_memory"), str):  # "24GiB" in experiments.toml
            data = {**data, "gpu_memory": parse_size(data["gpu_memory"])}
        for name in list_fields():
            if isinstance(data.get(name), (list, str)):  # TOML and JSON lists, or "a,b"
                value = data[name]
                data = {**data, name: tuple(names(value) if isinstance(value, str) else value)}
        return cls(**data)


def key_name(name: str) -> str:
    """A model's (or a tracked step's optimizer's) name as the key holds it: unchanged where
    it is a plain name (lower-case letters, digits, '.', '-': the zoo's names, the
    optimizers), folded to such characters where it is a Hub id whose config ships with the
    tool ("hf:meta-llama/Llama-3.1-8B" → "hf_meta-llama_llama-3.1-8b"; no two of them fold
    alike, tests/unit/test_result_keys.py checks), and otherwise folded and followed by '_'
    and the start of its SHA-256, since a fold alone would give one file to two names that
    differ in case or punctuation ("hf:/c/small.json" and "hf:/c/Small.json").

    Keys are lower-case by design: on a case-insensitive file system (macOS, Windows) two
    names that differ only in case must not share a file either."""
    folded = _KEY_UNSAFE.sub("_", name.lower()).strip("_.-") or "model"
    if _KEY_PLAIN.fullmatch(name) or name in _shipped_hf_names():
        return folded
    return f"{folded}_{_digest(name)}"


def key_tag(tag: str) -> str:
    """A step option's part of the key, folded as key_name folds names where it holds other
    characters (a class name that is a Unicode identifier, a number written with '+')."""
    if _TAG_PLAIN.fullmatch(tag):
        return tag
    return f"{_KEY_UNSAFE.sub('_', tag.lower()).strip('_.-')}_{_digest(tag)}"


def exact_number(value: float) -> str:
    """A number in a key: short (0.01, 1e-05) where that reads back as the same number, else
    every digit Python keeps, so two values never share a key."""
    short = f"{value:g}"
    return short if float(short) == value else repr(float(value))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]


@functools.cache
def _shipped_hf_names() -> frozenset[str]:
    return frozenset(HF_PREFIX + path.stem.replace("--", "/")
                     for path in _SHIPPED_HF.glob("*.json"))


def options() -> dict[str, Option]:
    """Every declared option, by field name, in declaration order."""
    return dict(_declared_options())


@functools.cache
def _declared_options() -> dict[str, Option]:
    # read once: every experiment checks its values against them (a page loads thousands)
    return {f.name: option_of(f) for f in fields(Experiment) if option_of(f) is not None}


#: The declared defaults of the step options; a model's own: step_defaults.
_DECLARED_STEP_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(Experiment)
                                           if option_of(f) and option_of(f).step_option}


def step_defaults(model: Any) -> dict[str, Any]:
    """The step options' defaults for a model: a result with all of them is a plain step."""
    return {**_DECLARED_STEP_DEFAULTS, "attention": attention_default(model)}


@functools.cache
def list_fields() -> frozenset[str]:
    """The fields whose value is a list of names (module classes, target modules)."""
    return frozenset(f.name for f in fields(Experiment) if isinstance(f.default, tuple))


def as_held(value: Any) -> Any:
    """A field's value from JSON as an Experiment holds it: lists of names as tuples."""
    return tuple(value) if isinstance(value, list) else value


def is_hf_name(model: Any) -> bool:
    """A model name that Hugging Face's transformers builds (hf:<source>)."""
    return isinstance(model, str) and model.startswith(HF_PREFIX)


def task_of_architectures(architectures: Any) -> str | None:
    """The task the first of a config's `architectures` names that names one, or None."""
    for arch in architectures or []:
        for task, suffixes in HF_TASK_HEADS.items():
            if arch.endswith(suffixes):
                return task
    return None


def attention_default(model: Any) -> str:
    """A model's own attention: "auto" for hf: models (transformers chooses as it builds
    them), eager for the built-in ones (the rest have no attention option)."""
    return "auto" if is_hf_name(model) else "eager"


def step_options_of(exp: dict[str, Any]) -> list[tuple[Option, Any]]:
    """The step options an experiment sets to other than its model's defaults."""
    found = options()
    defaults = step_defaults(exp.get("model"))
    values = {name: as_held(exp.get(name, default)) for name, default in defaults.items()}
    return [(found[name], values[name]) for name, default in defaults.items()
            if values[name] != default]


def is_plain_step(exp: dict[str, Any]) -> bool:
    """No step option changed: the training step the article describes."""
    return not step_options_of(exp)


def option_words(exp: dict[str, Any], lang: str = "en") -> list[str]:
    """The step options that differ from a plain step, as short words: ['sdpa', 'checkpointing']."""
    return [opt.words(value)[lang] for opt, value in step_options_of(exp)]
