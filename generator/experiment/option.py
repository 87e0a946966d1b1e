"""How an experiment option is declared: once, as metadata on its field of `Experiment`.

From one declaration come the `estimate` command's flag (choices, default, help), the part of
the experiment's key and of its progress label that names a non-default value, the words
pages use for it in both languages, and, for a lever, the value of the levers page's
baseline. `experiment.py` declares the options; nothing else restates them.

The checks of single options and of their combinations live here too, beside the
declarations they check; `experiment_problems` gathers what they find.
"""

from __future__ import annotations

import re
from fractions import Fraction
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any, Callable

from generator import units
from generator.errors import ConfigError
from generator.experiment.strategies import GROUP_OPTIONS, NONE, STRATEGIES, listed, sharding
from generator.words import Words

#: Not a lever: the levers page never varies it.
NOT_A_LEVER = object()


@dataclass(frozen=True)
class Option:
    """One experiment field, as users give it and readers see it."""

    help: str
    """What it does, for --help."""
    choices: tuple | None = None
    """The values it takes, or None for numbers and free text."""
    cli: bool = True
    """Whether the `estimate` command takes it as a flag (--name-with-dashes)."""
    short: str | None = None
    """A one-letter flag beside the long one (-b for --batch-size), for the options every
    command line gives."""
    metavar: str | None = None
    parse: Callable[[str], Any] | None = None
    """Reads the flag's text (e.g. a size such as 24GiB)."""
    step_option: bool = False
    """Beyond a plain training step: named in the key, the label and report headings when
    it differs from its default; results of plain steps are what the article is about."""
    tag: Callable[[Any], str] | None = None
    """Its part of the key when not the default (step options only)."""
    label: Callable[[Any], str] | None = None
    """Its word in progress lines when not the default (step options only)."""
    words: Callable[[Any], Words] | None = None
    """How pages name a non-default value, in both languages (step options only)."""
    lever: Any = NOT_A_LEVER
    """The value the levers page's baseline uses; NOT_A_LEVER for other options."""


def option(default: Any = MISSING, **declaration: Any) -> Any:
    """A dataclass field carrying its Option; without a default the field is required."""
    return field(default=default, metadata={"option": Option(**declaration)})


def option_of(f: Field) -> Option | None:
    return f.metadata.get("option")


# -- values in words -------------------------------------------------------------------------
_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*")


def parse_size(text: str) -> int:
    """'24GiB' → bytes. Decimal (GB) and binary (GiB) units; a bare number means GiB. Held to
    the one rule of a memory size (memory_problem)."""
    match = _SIZE.fullmatch(text)
    if not match:
        raise ConfigError(f"cannot read memory size {text!r}; write e.g. 24GiB or 80GB")
    unit = match.group(2).lower() or "gib"
    if unit not in _UNITS:
        raise ConfigError(f"unknown memory unit {match.group(2)!r} in {text!r}; "
                          "use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB")
    # exact, as a fraction: a float would round 0.1 GiB, and overflow on a long number
    size = int(Fraction(match.group(1)) * _UNITS[unit])
    problem = memory_problem(size, text)
    if problem:
        raise ConfigError(problem)
    return size


def memory_bytes(value: int | str) -> int:
    """A memory size given in bytes or in words ("24GiB"), as bytes, by the one rule."""
    if isinstance(value, str):
        return parse_size(value)
    problem = memory_problem(value)
    if problem:
        raise ConfigError(problem)
    return value


def memory_problem(nbytes: Any, given: Any = None) -> str | None:
    """Why `nbytes` is no memory size, or None: the one rule for a memory the user gives
    (--gpu-memory, gpu_memory, memory=), in words or in bytes: a whole number of bytes, at
    least 1, and at most 2⁶³ − 1, the largest size PyTorch counts (int64). `given`: what the
    user wrote, when it was words."""
    given = nbytes if given is None else given
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 1:
        return f"memory size must be a positive number of bytes, got {given!r}"
    if nbytes > INT64_MAX:
        return (f"memory size {given!r} is more than PyTorch counts (at most 2⁶³ − 1 bytes, "
                f"8 EiB)")
    return None


def size_text(nbytes: int) -> str:
    """1048576 → '1 MiB': a budget in a progress line, readable beside two like it."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= size:
            return f"{nbytes / size:.4g} {unit}"
    return f"{nbytes} B"


def size_tag(nbytes: int) -> str:
    """24 GiB → '24gib'; sizes that are no whole GiB or MiB stay in bytes."""
    for unit, size in (("gib", 2**30), ("mib", 2**20)):
        if isinstance(nbytes, int) and nbytes % size == 0:
            return f"{nbytes // size}{unit}"
    return f"{nbytes}b"


def gpu_name(text: str) -> str:
    """A GPU's catalogue name from a loose one ("3090" → "NVIDIA GeForce RTX 3090")."""
    from generator.gpus import find

    return find(text).name


def gpu_tag(name: str) -> str:
    """A GPU in a key: "NVIDIA GeForce RTX 3090" → "rtx-3090"."""
    from generator.gpus import find

    return re.sub(r"[^a-z0-9]+", "-", find(name).short_name.lower()).strip("-")


def budget_words(nbytes: int) -> Words:
    return Words(f"budget {units.size(nbytes)}", f"显存预算 {units.size(nbytes)}")


def resolved_optimizer_impl(impl: str, device: str) -> str:
    """"auto" is what PyTorch itself picks on the device: foreach kernels on CUDA, the
    for-loop on the CPU."""
    if impl != "auto":
        return impl
    return "foreach" if device == "cuda" else "for-loop"


# -- checks ------------------------------------------------------------------------------------
INT64_MAX = 2**63 - 1
#: A module name (or the dotted end of a path) PEFT can match, or all-linear.
_TARGET = re.compile(r"all-linear|[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*")


def choice_problem(name: str, value: Any, choices: tuple) -> str:
    """An option's value that is none of its choices, in the words the API and the command
    line both give."""
    return f"unknown {name} {value!r}; choose one of: {', '.join(choices)}"


def positive_int_problem(name: str, value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{name} must be a positive integer, got {value!r}"
    if value < 1:
        return f"{name} must be a positive integer, got {value}"
    if value > INT64_MAX:  # PyTorch sizes are int64; a larger one fails deep inside torch
        return f"{name} {value} is larger than any tensor can be (at most 2⁶³ − 1)"
    return None


def experiment_problems(exp: Any, declared: dict[str, Any]) -> list[str]:
    """Every problem of one experiment (an Experiment, whose options are `declared`), so that
    the user can fix them all at once."""
    problems = [positive_int_problem("batch_size", exp.batch_size),
                positive_int_problem("seq_len", exp.seq_len)]
    for name, opt in declared.items():
        value = getattr(exp, name)
        if exp.tracked is True and name == "optimizer":  # the user's own, any
            if not isinstance(value, str) or not value or not value.isprintable():
                problems.append(f"optimizer must be a name, got {value!r}")
        elif opt.choices is not None and value not in opt.choices:
            problems.append(choice_problem(name, value, opt.choices))
    for field in fields(exp):  # the switches: every field declared with a bool default
        if isinstance(field.default, bool) and not isinstance(getattr(exp, field.name), bool):
            problems.append(f"{field.name} must be true or false, "
                            f"got {getattr(exp, field.name)!r}")
    problems += step_option_problems(exp) + lora_problems(exp) + parallel_problems(exp)
    if exp.gpu_memory is not None and memory_problem(exp.gpu_memory):
        problems.append(f"gpu_memory: {memory_problem(exp.gpu_memory)}")
    if not isinstance(exp.model, str) or not exp.model.strip():
        problems.append(f"model must be a non-empty name, got {exp.model!r}")
    elif not exp.model.isprintable():  # a newline or a terminal escape, in a key or a page
        problems.append(f"model {exp.model!r} holds a control character")
    if exp.allocation_trace is True and (exp.backend, exp.device) != ("estimate", "cuda"):
        problems.append("allocation_trace needs the estimate backend modelling cuda: only "
                        "it simulates the caching allocator")
    if exp.built_on_device is True and exp.device != "cuda":
        problems.append("built_on_device is about what the CUDA caching allocator holds when "
                        "training starts: it needs a CUDA step (cuda, or an estimate of one)")
    if not isinstance(exp.gpu, str):
        problems.append(f"gpu must be a GPU's name, got {exp.gpu!r}")
    elif exp.gpu:
        try:
            gpu_name(exp.gpu)
        except ConfigError as error:
            problems.append(str(error))
    if exp.tracked is True and exp.backend == "estimate":
        problems.append("tracked is for a user's own step that ran for real (backend cpu or "
                        "cuda, from generator.track), never an estimate")
    if exp.gpu and (exp.backend, exp.device) != ("estimate", "cuda"):
        problems.append("gpu names the GPU an estimate models: it needs the estimate backend "
                        "modelling cuda (a real run measures its own device)")
    if exp.backend in ("cpu", "cuda") and exp.device != exp.backend:
        problems.append(f"device {exp.device!r} contradicts backend {exp.backend!r}: "
                        "a real run measures its own device")
    return [p for p in problems if p]


def step_option_problems(exp: Any) -> list[str]:
    """What is wrong with the step options of `exp` (an Experiment), alone or together."""
    problems = []
    classes = exp.checkpoint_classes
    if not isinstance(classes, tuple) or not all(
            isinstance(c, str) and c.isidentifier() for c in classes):
        problems.append(f"checkpoint_classes must be module class names, got {classes!r}")
    elif classes and exp.checkpointing:
        problems.append("checkpointing (every block) and checkpoint_classes are two ways to "
                        "choose what to recompute; give one")
    if exp.checkpoint_policy != "full" and exp.checkpointing is not True:
        problems.append(f"checkpoint_policy {exp.checkpoint_policy!r} chooses what each "
                        "checkpointed block keeps: it needs checkpointing")
    if exp.loss_scaling == "off" and exp.precision != "amp-fp16":
        problems.append(f"loss_scaling 'off' is for amp-fp16; precision {exp.precision!r} "
                        "never scales the loss")
    decay = exp.weight_decay
    if decay is not None and (isinstance(decay, bool) or not isinstance(decay, (int, float))
                              or not 0 <= decay < float("inf")):
        problems.append(f"weight_decay must be a number ≥ 0, got {decay!r}")
    problems.append(_micro_batch_problem(exp.micro_batches, exp.batch_size))
    if exp.optimizer == "adamw-8bit" and exp.optimizer_impl != "auto":
        problems.append(f"optimizer_impl {exp.optimizer_impl!r} is for PyTorch's optimizers; "
                        "adamw-8bit (bitsandbytes) has kernels of its own")
    return [p for p in problems if p]


def lora_problems(exp: Any) -> list[str]:
    """LoRA's options: a rank ≥ 0 (0: no LoRA), and targets, dropout or 4-bit base weights
    (QLoRA: they cannot train) only with one."""
    rank, targets, dropout = exp.lora_rank, exp.lora_targets, exp.lora_dropout
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 0:
        return [f"lora_rank must be a whole number ≥ 1 (0: no LoRA), got {rank!r}"]
    problems = []
    if not isinstance(targets, tuple) or not all(
            isinstance(t, str) and _TARGET.fullmatch(t) for t in targets):
        problems.append(f"lora_targets must be module names such as q_proj,v_proj or "
                        f"all-linear, got {targets!r}")
    elif "all-linear" in targets and len(targets) > 1:
        problems.append("lora_targets: all-linear already names every linear layer; give it "
                        "alone")
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) \
            or not 0 <= dropout < 1:
        problems.append(f"lora_dropout must be a probability in [0, 1), got {dropout!r}")
    if not rank:
        unused = [name for name, value, default in (("lora_targets", targets, ()),
                                                    ("lora_dropout", dropout, 0.0),
                                                    ("quantization", exp.quantization, "none"))
                  if value != default]
        if unused:
            problems.append(f"{' and '.join(unused)} need{'s' if len(unused) == 1 else ''} "
                            "lora_rank (the adapters' rank, e.g. 16)")
    return problems


#: The most GPUs a job is modelled with (a fake process group holds no memory per rank).
MOST_GPUS = 2**20


def parallel_problems(exp: Any) -> list[str]:
    """The multi-GPU options: a strategy for more than one GPU, group sizes that divide the
    GPUs, FSDP2's own options only where FSDP2 shards, and what the strategy refuses
    (strategies.py; the model's own limits, e.g. heads that tensor parallelism must divide,
    are checked when it is built)."""
    gpus, strategy = exp.gpus, exp.parallel
    problem = positive_int_problem("gpus", gpus)
    if problem:
        return [problem]
    if gpus > MOST_GPUS:
        return [f"gpus {gpus:,} is more than the {MOST_GPUS:,} GPUs modelled"]
    problems = []
    if gpus > 1 and strategy == NONE:
        problems.append(f"gpus {gpus} needs a strategy to share the step: parallel "
                        f"{listed(list(STRATEGIES))}")
    for name, owner in GROUP_OPTIONS.items():
        size = getattr(exp, name)
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            problems.append(f"{name} must be a positive integer, got {size!r}")
        elif size and strategy != owner:
            problems.append(f"{name} is the group size of parallel {owner}, not of "
                            f"{strategy!r}")
        elif size and gpus % size:
            problems.append(f"{name} {size} does not divide gpus {gpus}: the GPUs form "
                            f"groups of {size}")
    fsdp = sharding()
    if exp.reshard_after_forward is False and strategy not in fsdp:
        problems.append(f"reshard_after_forward is FSDP2's: it needs parallel {listed(fsdp)}, "
                        f"not {strategy!r}")
    if exp.fsdp_mixed_precision != "none":
        if strategy not in fsdp:
            problems.append(f"fsdp_mixed_precision is FSDP2's policy: it needs parallel "
                            f"{listed(fsdp)}, not {strategy!r}")
        elif exp.precision in ("fp16", "bf16"):
            problems.append(f"fsdp_mixed_precision casts fp32 parameters; precision "
                            f"{exp.precision!r} makes them 16-bit already")
    if exp.cpu_offload is True:
        if strategy not in fsdp:
            problems.append(f"cpu_offload is FSDP2's CPUOffloadPolicy: it needs parallel "
                            f"{listed(fsdp)}, not {strategy!r}")
        elif exp.device == "cpu":
            problems.append("cpu_offload moves FSDP2's shards from the GPU to host memory; "
                            "a step modelled on the CPU holds them there already")
    if strategy in STRATEGIES:
        if exp.backend != "estimate":
            problems.append(f"parallel {strategy!r} is estimated, on a fake process group: "
                            "it needs the estimate backend (a real multi-GPU run goes under "
                            "torchrun, generator/cli/torchrun_step.py)")
        defaults = {f.name: f.default for f in fields(exp)}
        problems += [why for name, why in STRATEGIES[strategy].refuses.items()
                     if getattr(exp, name) != defaults[name]]
    return problems


def group_size(exp: Any) -> int:
    """The inner group of a 2-D mesh (its strategy's `group` option: hsdp's shard group,
    fsdp2-tp's tensor-parallel group), by default 8 GPUs (one node's), or all of them when
    fewer."""
    group = STRATEGIES[exp.parallel].group if exp.parallel in STRATEGIES else None
    return (getattr(exp, group) if group else 0) or min(8, exp.gpus)


def _micro_batch_problem(micro_batches: Any, batch_size: Any) -> str | None:
    problem = positive_int_problem("micro_batches", micro_batches)
    if problem or positive_int_problem("batch_size", batch_size):
        return problem
    if batch_size % micro_batches:
        return (f"micro_batches {micro_batches} does not divide batch_size {batch_size}: "
                "each micro-batch must have the same number of samples")
    return None


def names(text: str) -> tuple[str, ...]:
    """'LlamaMLP, LlamaRMSNorm' → ('LlamaMLP', 'LlamaRMSNorm'): module classes to recompute,
    or modules to give adapters; validation checks the names."""
    return tuple(name.strip() for name in text.split(",") if name.strip())


def share(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f"expected a probability, e.g. 0.05; got {text!r}") from None


def decay(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f"weight decay must be a number, e.g. 1e-4; got {text!r}") from None


def count(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"expected a whole number, got {text!r}") from None
