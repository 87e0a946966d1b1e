"""Hugging Face models as `hf:<source>`: built from their configuration, no weights, no network.

The model is the task head that the config's `architectures` names (…ForCausalLM,
…ForMaskedLM, …ForConditionalGeneration / …ForSeq2SeqLM, …ForSequenceClassification,
…ForImageClassification), or the experiment's `hf_task`. The step computes the loss the way
the Trainer does, through the model's own `labels` path, so the loss's vocabulary-sized
temporaries are the ones users get; batches are random token ids (or pixels) shaped from the
config. `attention` becomes `attn_implementation`, `checkpointing` the model's own
activation checkpointing (`activation_checkpointing_enable()`, `gradient_checkpointing_enable()`
before transformers 5).
"""

from __future__ import annotations

import contextlib
from typing import Any

from generator.errors import ConfigError, ModelError
from generator.experiment import HF_PREFIX
from generator.experiment.experiment import HF_TASK_HEADS, task_of_architectures
from generator.measure.models.hf_config import find_config, transformers_module
from generator.units import duration

#: The auto class that builds each task.
AUTO_CLASSES = {"causal-lm": "AutoModelForCausalLM", "masked-lm": "AutoModelForMaskedLM",
                "seq2seq-lm": "AutoModelForSeq2SeqLM",
                "sequence-classification": "AutoModelForSequenceClassification",
                "image-classification": "AutoModelForImageClassification",
                "contrastive": "AutoModel"}
#: task → (the auto class that builds it, the architecture suffixes that name it).
TASKS = {task: (AUTO_CLASSES[task], suffixes) for task, suffixes in HF_TASK_HEADS.items()}
PREFIX = HF_PREFIX
#: The most layers a config's deepest stack may have: every layer is built and run
#: on fake tensors, about half a second each on a laptop's CPU, so 1,000 take minutes; the
#: deepest published models have about 130. A config past it is refused before transformers
#: reads it (some configs make a list per layer as they are read).
MOST_LAYERS = 1_000
#: About how long one layer takes to build and estimate, to say what a refused depth would cost.
SECONDS_A_LAYER = 0.5


def load_config(name: str):
    """The model's `PretrainedConfig` and where it was found."""
    transformers = transformers_module()
    data, where = find_config(name[len(PREFIX):])
    _refuse_too_deep(data, name)
    try:
        config_class = transformers.CONFIG_MAPPING[data["model_type"]]
    except KeyError:
        raise ModelError(f"{name}: model_type {data['model_type']!r} is unknown to transformers "
                         f"{transformers.__version__}") from None
    try:
        return config_class.from_dict(data), where
    except Exception as error:  # a config the class refuses
        raise ModelError(f"{name}: transformers cannot read this config "
                         f"({type(error).__name__}: {str(error).splitlines()[0][:120]})") from None


def _layer_counts(data: Any, path: str = "") -> dict[str, int]:
    """Every depth a config.json states, nested configs included (text_config, encoder…):
    the whole numbers of fields named like num_hidden_layers, n_layer, decoder_layers."""
    found: dict[str, int] = {}
    if isinstance(data, dict):
        for key, value in data.items():
            where = f"{path}{key}"
            if isinstance(value, dict):
                found.update(_layer_counts(value, where + "."))
            elif (isinstance(value, int) and not isinstance(value, bool)
                  and (key.endswith("layers") or key == "n_layer")):
                found[where] = value
    return found


def _refuse_too_deep(data: dict[str, Any], name: str) -> None:
    """A stack deeper than MOST_LAYERS, refused in one line with what it would take. The
    deepest field counts (T5's encoder and decoder are built one after the other; Qwen's
    max_window_layers repeats its depth)."""
    counts = _layer_counts(data)
    if not counts:
        return
    field, deepest = max(counts.items(), key=lambda item: item[1])
    if deepest > MOST_LAYERS:
        raise ModelError(f"{name}: {field} {deepest:,} is more layers than the "
                         f"{MOST_LAYERS:,} an estimate builds (each is built and run on fake "
                         f"tensors: this one would take about "
                         f"{duration(deepest * SECONDS_A_LAYER)})")


def task_of(config, name: str) -> str:
    """The task the config's `architectures` names."""
    task = task_of_architectures(config.architectures)
    if task is not None:
        return task
    raise ModelError(f"{name}: no supported task head in architectures "
                     f"{config.architectures or []}; give hf_task ({', '.join(TASKS)})")


def model_class(config, task: str, name: str):
    """The class that builds `task` for this config, or a ModelError when it has none."""
    def head(task: str):
        mapping = getattr(transformers_module(), TASKS[task][0])._model_mapping
        return mapping.get(type(config), None)

    found = head(task)
    if found is not None:
        return found
    # Name what the model does fit, or why it fits none (audio and vision-language models
    # take inputs the batch makers here do not make). A task fits when its class has the
    # task's name: AutoModel (contrastive) holds every model's bare class, CLIP's among them.
    fits = [other for other in TASKS
            if (cls := head(other)) is not None and cls.__name__.endswith(TASKS[other][1])]
    also = (f"it has: {', '.join(fits)} (--hf-task)" if fits else
            f"it fits none of the tasks built here ({', '.join(TASKS)}): audio and "
            f"vision-language models take inputs this tool does not make")
    raise ConfigError(f"hf_task {task!r} does not fit {name} (model_type "
                      f"{config.model_type!r} has no {task} head; {also})")


def max_positions(config) -> int | None:
    """The longest sequence the config's position embeddings allow; None if unbounded."""
    config = getattr(config, "text_config", None) or config  # two towers: the text's
    if getattr(config, "relative_attention_num_buckets", None):
        return None  # relative positions (T5): n_positions is a hint, not a limit
    for field in ("max_position_embeddings", "n_positions"):
        value = getattr(config, field, None)
        if isinstance(value, int):
            # RoBERTa keeps two positions for its padding offset.
            return value - 2 if config.model_type in ("roberta", "xlm-roberta") else value
    return None


def _int_field(config, *names: str) -> int | None:
    """The first of `names` the config sets to a whole number (model types name fields
    differently: GPT-2's n_layer is BERT's num_hidden_layers)."""
    return next((getattr(config, n) for n in names
                 if isinstance(getattr(config, n, None), int)), None)


def architecture(config, attention: str) -> dict[str, Any] | None:
    """What the activation formula needs, for one-stack transformers; None otherwise."""
    layers = _int_field(config, "num_hidden_layers", "n_layer")
    hidden = _int_field(config, "hidden_size", "n_embd")
    heads = _int_field(config, "num_attention_heads", "n_head")
    if None in (layers, hidden, heads) or getattr(config, "is_encoder_decoder", False):
        return None
    return {"layers": layers, "hidden": hidden, "heads": heads,
            "intermediate": _int_field(config, "intermediate_size", "n_inner") or 4 * hidden,
            "vocab": getattr(config, "vocab_size", None), "attention": attention}


def check(config, name: str, *, task: str, attention: str, seq_len: int) -> None:
    """The problems of one experiment on this model, as one-line errors."""
    cls = model_class(config, task, name)
    if attention == "sdpa" and not getattr(cls, "_supports_sdpa", False):
        raise ConfigError(f"attention 'sdpa': {cls.__name__} has no SDPA implementation in "
                          f"transformers {transformers_module().__version__}; use eager")
    limit = max_positions(config)
    if task != "image-classification" and limit is not None and seq_len > limit:
        raise ConfigError(f"seq_len {seq_len} is longer than {name} allows ({limit} positions)")
    if task == "causal-lm" and seq_len < 2:
        raise ConfigError(f"seq_len {seq_len} is shorter than {name} accepts (at least 2)")


def build(config, name: str, *, task: str, attention: str):
    """The workload: the model in training mode, random batches, the model's own loss."""
    import torch
    from torch import nn

    from generator.measure.emulation.fake_build import under_fake_tensors
    from generator.measure.training.workload import Workload

    transformers = transformers_module()
    transformers.logging.set_verbosity_error()  # notes about config fields we do not use
    auto = getattr(transformers, TASKS[task][0])
    model_class(config, task, name)  # a one-line error for a task the model lacks
    # Fake tensors have no values: the weights' initialisation (truncated normals, which
    # resample by value) cannot run on them, and the estimate needs none.
    skip_init = under_fake_tensors()
    with _no_init_weights() if skip_init else contextlib.nullcontext():
        # auto: transformers picks, as from_pretrained does for users (sdpa where it can)
        # in the default dtype: fp32, unless the step builds in 16 bits (build_trace.py)
        model = auto.from_config(config, attn_implementation=None if attention == "auto"
                                 else attention, **{_dtype_argument(): torch.get_default_dtype()})
    if skip_init:
        model.tie_weights()  # part of the initialisation skipped above
    model.train()  # what the Trainer does; from_config leaves dropout as configured
    parts = blocks(model, nn)
    vocab = getattr(config, "vocab_size", None)
    classes = getattr(config, "num_labels", 2)

    def make_batch(batch_size: int, seq_len: int, device: torch.device):
        if task == "image-classification":
            channels = getattr(config, "num_channels", 3)
            inputs = {"pixel_values": torch.randn(batch_size, channels, seq_len, seq_len,
                                                  device=device)}
        elif task == "contrastive":  # seq_len is the text's; the image side is the config's
            side, text = config.vision_config.image_size, config.text_config
            return {"input_ids": torch.randint(0, text.vocab_size, (batch_size, seq_len),
                                               device=device),
                    "attention_mask": torch.ones(batch_size, seq_len, dtype=torch.long,
                                                 device=device),
                    "pixel_values": torch.randn(batch_size, 3, side, side, device=device),
                    "return_loss": True}, None
        else:
            inputs = {"input_ids": torch.randint(0, vocab, (batch_size, seq_len), device=device)}
        if task == "causal-lm":  # the model shifts the labels itself
            inputs["labels"] = inputs["input_ids"]
        elif task in ("masked-lm", "seq2seq-lm"):
            inputs["labels"] = torch.randint(0, vocab, (batch_size, seq_len), device=device)
        else:
            inputs["labels"] = torch.randint(0, classes, (batch_size,), device=device)
        return inputs, None

    def enable_checkpointing(context_fn) -> None:
        if not getattr(model, "supports_gradient_checkpointing", True):
            stacked = sorted({type(block).__name__ for path, block in parts
                              if path not in ("embeddings", "head")})
            raise ConfigError(
                f"checkpointing: {type(model).__name__} has no checkpointing of its own in "
                f"transformers {transformers.__version__}; recompute its blocks instead with "
                f"--checkpoint-classes {','.join(stacked)}")
        # context_fn (step.checkpoint_context): the recomputation runs in the
        # torch-function modes of the forward pass (the estimate's CUDA policy), so that it
        # picks the kernels the forward pass did; selective checkpointing's contexts too.
        kwargs = {"use_reentrant": False, "context_fn": context_fn}
        if hasattr(model, "activation_checkpointing_enable"):  # its name from transformers 5.x
            model.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)

    def before_class_checkpointing(names: tuple[str, ...]) -> None:
        # A checkpointed module that holds an attention layer of the key/value cache (its
        # `layer_idx` is its slot there) would add its keys and values a second time when
        # backward recomputes it, and attention would then see twice the sequence. Hugging
        # Face's own checkpointing turns the cache off for the layers it wraps
        # (transformers 5: modeling_layers.GradientCheckpointingLayer); so does this. MLPs
        # and norms, the classes of the published runs, hold no such layer.
        if any(getattr(inner, "layer_idx", None) is not None
               for m in model.modules() if type(m).__name__ in names for inner in m.modules()):
            for module in model.modules():  # a decoder stack may have a config of its own (T5)
                if getattr(getattr(module, "config", None), "use_cache", False):
                    module.config.use_cache = False

    return Workload(model, make_batch, lambda output, _target: output.loss,
                    blocks=parts, enable_checkpointing=enable_checkpointing,
                    attention=getattr(model.config, "_attn_implementation", None),
                    before_class_checkpointing=before_class_checkpointing)


def _dtype_argument() -> str:
    """transformers 5 renamed from_config's `torch_dtype` to `dtype`. Both versions work:
    the published H100 runs of the accuracy page used 4.46, whose loss differs."""
    return "dtype" if int(transformers_module().__version__.split(".")[0]) >= 5 \
        else "torch_dtype"


def _no_init_weights():
    try:  # transformers 5
        from transformers.initialization import no_init_weights
    except ImportError:  # transformers 4
        from transformers.modeling_utils import no_init_weights
    return no_init_weights()


def blocks(model, nn) -> list[tuple[str, Any]]:
    """The parts activations are attributed to: the input embeddings, each block of the
    model's stacks (`layers.N` for a single stack, `encoder.N` / `decoder.N` for two), the
    output head; the rest (final norms, the loss) counts as outside the blocks."""
    lists = [(path, m) for path, m in model.named_modules()
             if isinstance(m, nn.ModuleList) and len(m) > 1]
    stacks = [(p, m) for p, m in lists if not any(p.startswith(q + ".") for q, _ in lists)]
    embeddings = _input_embeddings(model)
    found: list[tuple[str, Any]] = [] if embeddings is None else [("embeddings", embeddings)]
    for path, stack in stacks:
        prefix = "layers" if len(stacks) == 1 else path.split(".")[0]
        found += [(f"{prefix}.{i}", block) for i, block in enumerate(stack)]
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    head = head or getattr(model, "classifier", None) or getattr(model, "score", None)
    if isinstance(head, nn.Module):
        found.append(("head", head))
    return found


def _input_embeddings(model):
    """The module that turns inputs into the first hidden states, or None: the token
    embeddings; for two towers (CLIP) the text tower's; for a convolutional vision model,
    whose get_input_embeddings says it has none, its stem (ConvNeXt's `embeddings`,
    ResNet's `embedder`)."""
    try:
        return model.get_input_embeddings()
    except NotImplementedError:
        pass
    for holder in (getattr(model, "text_model", None), model.base_model):
        for name in ("embeddings", "embedder"):
            if (found := getattr(holder, name, None)) is not None:
                return found
    return None


def shipped_summary() -> list[dict[str, Any]]:
    """Each shipped config: its Hub id, task, parameters (counted on the meta device, so
    nothing is allocated) and its stacks in words (`stacks_words`)."""
    import torch

    from generator.measure.models.hf_config import shipped_ids

    transformers_module().logging.set_verbosity_error()
    rows = []
    for hub_id in shipped_ids():
        config, _ = load_config(PREFIX + hub_id)
        task = task_of(config, PREFIX + hub_id)
        with torch.device("meta"):
            model = getattr(transformers_module(), TASKS[task][0]).from_config(config)
        rows.append({"id": hub_id, "task": task,
                     "parameters": sum(p.numel() for p in model.parameters()),
                     "stacks": stacks_words(config)})
    return rows


def stacks_words(config) -> str:
    """Layers and hidden size, per stack where a model has several: CLIP's vision and text
    towers each have their own config, T5's encoder and decoder their own depths."""
    parts = [(name.removesuffix("_config"), getattr(config, name))
             for name in ("vision_config", "text_config") if hasattr(config, name)]
    if parts:
        return "; ".join(f"{name} {stacks_words(sub)}" for name, sub in parts)
    layers = _int_field(config, "num_hidden_layers", "n_layer", "num_layers")
    hidden = _int_field(config, "hidden_size", "n_embd", "d_model")
    decoder = _int_field(config, "num_decoder_layers")
    if getattr(config, "is_encoder_decoder", False) and decoder is not None:
        return f"{layers}+{decoder} layers (encoder+decoder), hidden {hidden}"
    return f"{layers} layers, hidden {hidden}"
