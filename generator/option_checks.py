"""The checks and flag readers of single experiment options, kept apart from the declarations
in experiment.py; `experiment.validation_problems` gathers what these find."""

from __future__ import annotations

from typing import Any

from generator.errors import ConfigError

INT64_MAX = 2**63 - 1


def positive_int_problem(name: str, value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{name} must be a positive integer, got {value!r}"
    if value < 1:
        return f"{name} must be a positive integer, got {value}"
    if value > INT64_MAX:  # PyTorch sizes are int64; a larger one fails deep inside torch
        return f"{name} {value} is larger than any tensor can be (at most 2⁶³ − 1)"
    return None


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


def _micro_batch_problem(micro_batches: Any, batch_size: Any) -> str | None:
    problem = positive_int_problem("micro_batches", micro_batches)
    if problem or positive_int_problem("batch_size", batch_size):
        return problem
    if batch_size % micro_batches:
        return (f"micro_batches {micro_batches} does not divide batch_size {batch_size}: "
                "each micro-batch must have the same number of samples")
    return None


def class_names(text: str) -> tuple[str, ...]:
    """'LlamaMLP, LlamaRMSNorm' → ('LlamaMLP', 'LlamaRMSNorm'); validation checks the names."""
    return tuple(name.strip() for name in text.split(",") if name.strip())


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
