"""The checks and flag readers of single experiment options, kept apart from the declarations
in experiment.py; `experiment_problems` gathers what they find."""

from __future__ import annotations

import re
from dataclasses import fields
from typing import Any

from generator.errors import ConfigError

INT64_MAX = 2**63 - 1
#: A module name (or the dotted end of a path) PEFT can match, or all-linear.
_TARGET = re.compile(r"^(all-linear|[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*)$")


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
        if opt.choices is not None and value not in opt.choices:
            problems.append(f"unknown {name} {value!r}; choose one of: {', '.join(opt.choices)}")
    for field in fields(exp):  # the switches: every field declared with a bool default
        if isinstance(field.default, bool) and not isinstance(getattr(exp, field.name), bool):
            problems.append(f"{field.name} must be true or false, "
                            f"got {getattr(exp, field.name)!r}")
    problems += step_option_problems(exp) + lora_problems(exp)
    if exp.gpu_memory is not None and positive_int_problem("gpu_memory", exp.gpu_memory):
        problems.append(f"gpu_memory must be a positive number of bytes, got {exp.gpu_memory!r}")
    if not isinstance(exp.model, str) or not exp.model.strip():
        problems.append(f"model must be a non-empty name, got {exp.model!r}")
    if exp.allocation_trace is True and (exp.backend, exp.device) != ("estimate", "cuda"):
        problems.append("allocation_trace needs the estimate backend modelling cuda: only "
                        "it simulates the caching allocator")
    if exp.built_on_device is True and exp.device != "cuda":
        problems.append("built_on_device is about what the CUDA caching allocator holds when "
                        "training starts: it needs a CUDA step (cuda, or an estimate of one)")
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
            isinstance(t, str) and _TARGET.match(t) for t in targets):
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
