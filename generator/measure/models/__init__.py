"""The model zoo: built-in models by name, and user models as `package.module:function`.

Every model is built from code (no downloads), on the current default device or fake mode,
in training mode. `resolve_model` is the one entry point the rest of the tool uses.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from generator.errors import ConfigError, ModelError
from generator.experiment import Experiment, is_hf_name
from generator.measure.models import hf, hf_config
from generator.measure.models.bert import (
    BERT_BASE,
    BERT_TINY,
    BertConfig,
    BertForMaskedLM,
    build_bert,
)
from generator.measure.models.convnet import CONVNET_SMALL, build_convnet
from generator.measure.models.gpt2 import (
    GPT2_SMALL,
    GPT2Config,
    GPT2LMHeadModel,
    build_gpt2,
)
from generator.measure.models.llama import LLAMA_7B, LLAMA_TINY, build_llama
from generator.measure.models.recurrent import (
    CONV_LSTM,
    GRU_LM,
    build_conv_lstm,
    build_gru_lm,
)
from generator.measure.models.resnet import RESNET50, build_resnet
from generator.measure.models.timm_models import (
    is_timm_name,
    timm_spec,
    timm_unavailable,
)
from generator.measure.models.transformer_parts import ATTENTION_IMPLS
from generator.measure.models.user import (
    FACTORY_FORM,
    factory_build,
    import_factory,
    is_factory_name,
)
from generator.measure.training import lora, optimizer_8bit, quantize_4bit
from generator.measure.training.workload import Workload


@dataclass(frozen=True)
class ModelSpec:
    """A model the profiler can build, with what a report needs to say about it."""

    name: str
    description: str
    #: Largest sequence length the model accepts (its position embeddings); None if unbounded.
    max_seq_len: int | None
    #: Builds the workload on the current default device / fake mode, in training mode.
    #: Built-in models accept config overrides, e.g. build(attention="sdpa").
    build: Callable[..., Workload]
    #: For transformers: layers, hidden, heads, intermediate, vocab, attention (the inputs of
    #: the activation formula of Korthikanti et al. 2022); None for other models.
    architecture: dict[str, Any] | None = None
    #: Smallest sequence length (or image side) the model accepts.
    min_seq_len: int = 1
    #: The experiment fields `build` takes, by name (e.g. attention).
    takes: tuple[str, ...] = ()
    #: The model's own checks of an experiment (one-line errors), beyond the lengths above.
    check: Callable[[Experiment], None] | None = None
    #: What seq_len counts: "tokens" (or frames) of a sequence, or the "image" side in pixels.
    inputs: str = "tokens"


def _configurable(builder: Callable[[Any], Workload], config: Any) -> Callable[..., Workload]:
    """A build function that applies overrides (e.g. attention="sdpa") to `config`."""
    def build(**overrides: Any) -> Workload:
        return builder(replace(config, **overrides) if overrides else config)
    return build


def _architecture(config: Any) -> dict[str, Any]:
    return {"layers": config.num_layers, "hidden": config.hidden_size,
            "heads": config.num_heads, "intermediate": config.intermediate_size,
            "vocab": config.vocab_size, "attention": config.attention}


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            name="bert-base",
            description=(
                "BERT-base with MLM head (Devlin et al. 2019), 12 layers, hidden 768, "
                "12 heads, vocab 30522"
            ),
            max_seq_len=BERT_BASE.max_position_embeddings,
            build=_configurable(build_bert, BERT_BASE),
            architecture=_architecture(BERT_BASE),
            takes=("attention", "logits"),
        ),
        ModelSpec(
            name="gpt2-small",
            description=(
                "GPT-2 small with tied LM head (Radford et al. 2019), 12 layers, hidden 768, "
                "12 heads, vocab 50257"
            ),
            max_seq_len=GPT2_SMALL.max_position_embeddings,
            build=_configurable(build_gpt2, GPT2_SMALL),
            architecture=_architecture(GPT2_SMALL),
            takes=("attention",),
            min_seq_len=2,  # next-token prediction needs two tokens
        ),
        ModelSpec(
            name="tiny",
            description=(
                "tiny BERT with MLM head for fast tests, 2 layers, hidden 64, 4 heads, vocab 1000"
            ),
            max_seq_len=BERT_TINY.max_position_embeddings,
            build=_configurable(build_bert, BERT_TINY),
            architecture=_architecture(BERT_TINY),
            takes=("attention", "logits"),
        ),
        ModelSpec(
            name="resnet50",
            description=(
                "ResNet-50 v1.5 (He et al. 2016), image classifier, 1000 classes; "
                "seq_len is the image side in pixels (at least 32)"
            ),
            max_seq_len=None,
            build=_configurable(build_resnet, RESNET50),
            architecture=None,
            min_seq_len=32,
            inputs="image",
        ),
        ModelSpec(
            name="llama-7b",
            description=("LLaMA-7B (Touvron et al. 2023), 32 layers, hidden 4096, 32 heads, "
                         "SwiGLU 11008, vocab 32000, untied head; estimate only on a CPU"),
            max_seq_len=LLAMA_7B.max_position_embeddings,
            build=_configurable(build_llama, LLAMA_7B),
            architecture=_architecture(LLAMA_7B),
            takes=("attention",),
            min_seq_len=2,
        ),
        ModelSpec(
            name="llama-tiny",
            description="tiny LLaMA for fast tests, 2 layers, hidden 64, 4 heads, SwiGLU 256, "
                        "vocab 1000",
            max_seq_len=LLAMA_TINY.max_position_embeddings,
            build=_configurable(build_llama, LLAMA_TINY),
            architecture=_architecture(LLAMA_TINY),
            takes=("attention",),
            min_seq_len=2,
        ),
        ModelSpec(
            name="convnet-small",
            description=("small VGG-style CNN, 3 stages of two 3×3 convolutions (64/128/256 "
                         "channels), 10 classes, 1.2M parameters; seq_len is the image side "
                         f"in pixels (at least {CONVNET_SMALL.min_image_side})"),
            max_seq_len=None,
            build=_configurable(build_convnet, CONVNET_SMALL),
            min_seq_len=CONVNET_SMALL.min_image_side,
            inputs="image",
        ),
        ModelSpec(
            name="conv-lstm",
            description=("audio classifier: two Conv1d over 40 features a frame, 2 LSTM "
                         "layers of 256, 35 classes, 1.0M parameters; seq_len is frames"),
            max_seq_len=None,
            build=_configurable(build_conv_lstm, CONV_LSTM),
        ),
        ModelSpec(
            name="gru-lm",
            description=("word-level language model: embedding 256, 2 GRU layers of 512, "
                         "vocab 10000, 10.4M parameters"),
            max_seq_len=None,
            build=_configurable(build_gru_lm, GRU_LM),
            min_seq_len=2,  # next-word prediction needs two words
        ),
    )
}


def resolve_model(name: str) -> ModelSpec:
    """The spec of a built-in model, a Hugging Face model `hf:<source>`, or a user factory
    `package.module:function`.

    A user module is imported here and a Hugging Face config read, so a typo fails at once;
    the model itself is only built by `spec.build()`. Every failure is a one-line ModelError.
    """
    if name in MODELS:
        return MODELS[name]
    if is_hf_name(name):
        return _hf_spec(name)
    if is_timm_name(name):
        return timm_spec(name, ModelSpec)
    if not is_factory_name(name):
        choices = ", ".join(MODELS)
        raise ModelError(f"unknown model {name!r}; choose one of: {choices}, a Hugging Face "
                         f"model as hf:<hub id | config.json | folder>, or a factory as "
                         f"{FACTORY_FORM}")
    factory = import_factory(name)
    return ModelSpec(
        name=name,
        description=f"user model {name}",
        max_seq_len=None,
        build=factory_build(name, factory),
    )


def _hf_spec(name: str) -> ModelSpec:
    config, where = hf.load_config(name)

    def task(hf_task: str) -> str:
        return hf.task_of(config, name) if hf_task == "auto" else hf_task

    def build(attention: str = "auto", hf_task: str = "auto") -> Workload:
        return hf.build(config, name, task=task(hf_task), attention=attention)

    def check(exp: Experiment) -> None:
        hf.check(config, name, task=task(exp.hf_task), attention=exp.attention,
                 seq_len=exp.seq_len)

    return ModelSpec(name=name, description=f"{type(config).__name__} from {where}",
                     max_seq_len=hf.max_positions(config), build=build,
                     architecture=hf.architecture(config, "auto"),
                     takes=("attention", "hf_task"), check=check,
                     inputs="image" if task("auto") == "image-classification" else "tokens")


def model_unavailable(name: str) -> str | None:
    """Why `name` cannot be built on this machine (a package it needs is missing), or None.
    A suite's experiments on such a model are skipped with that reason, like a backend the
    machine lacks; asked for on their own (estimate), they are refused."""
    if is_timm_name(name):
        return timm_unavailable(name)
    if is_hf_name(name) and not hf_config.transformers_installed():
        return f"{name} needs the transformers package: {hf_config.INSTALL}"
    return None


def experiment_unavailable(exp: Experiment) -> str | None:
    """Why `exp` cannot run on this machine for a missing package (its model's, or one its
    options need), or None; suites skip such experiments with the reason."""
    return model_unavailable(exp.model) or options_unavailable(exp)


def options_unavailable(exp: Experiment) -> str | None:
    """A package the step's options need and this machine lacks (8-bit AdamW and 4-bit
    weights: bitsandbytes; LoRA: PEFT), said with how to install it; or None."""
    return (optimizer_8bit.unavailable(exp.optimizer) or lora.unavailable(exp.lora_rank)
            or quantize_4bit.unavailable(exp.quantization))


def check_model(exp: Experiment, spec: ModelSpec | None = None) -> None:
    """The model exists (a user factory imports) and accepts the sequence length. A caller
    checking many experiments of one model passes its `resolve_model` spec once resolved
    (reading a Hugging Face config is most of a suite's loading time)."""
    spec = spec or resolve_model(exp.model)
    if exp.hf_task != "auto" and "hf_task" not in spec.takes:
        raise ConfigError(f"hf_task works with Hugging Face models (hf:…), not {exp.model!r}")
    if exp.attention != "eager" and "attention" not in spec.takes:
        raise ConfigError(f"model {exp.model!r} has no attention option; attention = "
                          f"{exp.attention!r} works with transformers (built-in or hf:)")
    if exp.logits != "all" and "logits" not in spec.takes:
        raise ConfigError(f"logits = {exp.logits!r} works with masked-LM models "
                          f"({', '.join(n for n, s in MODELS.items() if 'logits' in s.takes)}), "
                          f"not {exp.model!r}")
    if exp.seq_len < spec.min_seq_len:
        raise ConfigError(f"seq_len {exp.seq_len} is shorter than {exp.model} accepts "
                          f"(at least {spec.min_seq_len})")
    if spec.max_seq_len is not None and exp.seq_len > spec.max_seq_len:
        raise ConfigError(f"seq_len {exp.seq_len} is longer than {exp.model} allows "
                          f"({spec.max_seq_len} positions)")
    if spec.check is not None:
        spec.check(exp)


__all__ = [
    "ATTENTION_IMPLS",
    "BERT_BASE",
    "BERT_TINY",
    "GPT2_SMALL",
    "MODELS",
    "BertConfig",
    "BertForMaskedLM",
    "GPT2Config",
    "GPT2LMHeadModel",
    "ModelSpec",
    "check_model",
    "experiment_unavailable",
    "resolve_model",
]
