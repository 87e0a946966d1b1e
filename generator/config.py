"""What one experiment is: a typed, validated description that every stage shares."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .errors import ConfigError

PRECISIONS = ("fp32", "amp-fp16", "amp-bf16")
OPTIMIZERS = ("adamw", "adam", "sgd")
BACKENDS = ("estimate", "cpu", "cuda")
DEVICES = ("cuda", "cpu")
ATTENTIONS = ("eager", "sdpa")
ZERO_GRADS = ("none", "zeros")
OPTIMIZER_IMPLS = ("auto", "for-loop", "foreach", "fused")

INT64_MAX = 2**63 - 1
_KEY_UNSAFE = re.compile(r"[^a-z0-9.-]+")


@dataclass(frozen=True, kw_only=True)
class Experiment:
    """One training step to measure; the same experiment always has the same key."""

    model: str
    """A name from the model zoo (`python -m generator models`) or `package.module:function`."""
    batch_size: int
    """Samples per step."""
    seq_len: int
    """Tokens per sample."""
    precision: str = "fp32"
    """One of PRECISIONS: fp32, amp-fp16 (autocast + GradScaler) or amp-bf16 (autocast only)."""
    optimizer: str = "adamw"
    """One of OPTIMIZERS; sgd means SGD with momentum 0.9."""
    backend: str = "estimate"
    """One of BACKENDS: estimate (fake tensors), cpu or cuda (real runs)."""
    device: str = field(default="")
    """The device whose behaviour is modelled: cpu or cuda. Real backends model themselves;
    the estimate models cuda unless told otherwise."""
    attention: str = "eager"
    """Built-in transformers: eager (matmul, softmax, dropout) or sdpa (fused attention)."""
    checkpointing: bool = False
    """Recompute each block of `model.layers` in backward instead of keeping its activations."""
    zero_grad: str = "none"
    """none: zero_grad(set_to_none=True) frees .grad; zeros: set_to_none=False keeps it."""
    optimizer_impl: str = "auto"
    """auto (PyTorch's pick for the modelled device), for-loop, foreach or fused kernels."""
    gpu_memory: int | None = None
    """A memory budget in bytes: a step whose peak exceeds it is recorded as out of memory."""

    def __post_init__(self) -> None:
        if not self.device:
            object.__setattr__(self, "device", "cuda" if self.backend == "estimate" else self.backend)
        problems = validation_problems(self)
        if problems:
            raise ConfigError("; ".join(problems))

    @property
    def key(self) -> str:
        """File-name-safe identity, e.g. `bert-base-b32-s128-amp-fp16-adamw-estimate`."""
        model = _KEY_UNSAFE.sub("_", self.model.lower()).strip("_.-") or "model"
        key = f"{model}-b{self.batch_size}-s{self.seq_len}-{self.precision}-{self.optimizer}-{self.backend}"
        if self.backend == "estimate" and self.device != "cuda":
            key += f"-as-{self.device}"
        options = [self.attention if self.attention != "eager" else "",
                   "ckpt" if self.checkpointing else "",
                   "grad-zeros" if self.zero_grad != "none" else "",
                   self.optimizer_impl if self.optimizer_impl != "auto" else "",
                   f"budget-{_size_tag(self.gpu_memory)}" if self.gpu_memory is not None else ""]
        return "-".join([key] + [o for o in options if o])

    @property
    def label(self) -> str:
        """Short human-readable description for progress lines and tables."""
        where = self.backend if self.backend != "estimate" else f"estimate ({self.device})"
        budget = f" in {_size_text(self.gpu_memory)}" if self.gpu_memory is not None else ""
        options = [self.attention if self.attention != "eager" else "",
                   "checkpointing" if self.checkpointing else "",
                   "set_to_none=False" if self.zero_grad != "none" else "",
                   self.optimizer_impl if self.optimizer_impl != "auto" else ""]
        extra = "".join(f" {o}" for o in options if o)
        return (f"{self.model} batch {self.batch_size} seq {self.seq_len} "
                f"{self.precision} {self.optimizer}{extra} on {where}{budget}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Experiment":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown experiment field(s) {', '.join(unknown)}; "
                              f"allowed: {', '.join(sorted(known))}")
        missing = [name for name in ("model", "batch_size", "seq_len") if name not in data]
        if missing:
            raise ConfigError(f"experiment is missing {', '.join(missing)}")
        if isinstance(data.get("gpu_memory"), str):  # "24GiB" in experiments.toml
            data = {**data, "gpu_memory": parse_size(data["gpu_memory"])}
        return cls(**data)


def _size_text(nbytes: int) -> str:
    """1048576 → '1 MiB': the budget in a progress line, readable beside two like it."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= size:
            return f"{nbytes / size:.4g} {unit}"
    return f"{nbytes} B"


def _size_tag(nbytes: int) -> str:
    """24 GiB → '24gib'; sizes that are no whole GiB or MiB stay in bytes."""
    for unit, size in (("gib", 2**30), ("mib", 2**20)):
        if isinstance(nbytes, int) and nbytes % size == 0:
            return f"{nbytes // size}{unit}"
    return f"{nbytes}b"


def _positive_int_problem(name: str, value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{name} must be a positive integer, got {value!r}"
    if value < 1:
        return f"{name} must be a positive integer, got {value}"
    if value > INT64_MAX:  # PyTorch sizes are int64; a larger one fails deep inside torch
        return f"{name} {value} is larger than any tensor can be (at most 2⁶³ − 1)"
    return None


def _choice_problem(name: str, value: Any, allowed: tuple[str, ...]) -> str | None:
    if value not in allowed:
        return f"unknown {name} {value!r}; choose one of: {', '.join(allowed)}"
    return None


def validation_problems(exp: Experiment) -> list[str]:
    """Every problem of one experiment, so that the user can fix them all at once."""
    problems = [
        _positive_int_problem("batch_size", exp.batch_size),
        _positive_int_problem("seq_len", exp.seq_len),
        _choice_problem("precision", exp.precision, PRECISIONS),
        _choice_problem("optimizer", exp.optimizer, OPTIMIZERS),
        _choice_problem("backend", exp.backend, BACKENDS),
        _choice_problem("device", exp.device, DEVICES),
        _choice_problem("attention", exp.attention, ATTENTIONS),
        _choice_problem("zero_grad", exp.zero_grad, ZERO_GRADS),
        _choice_problem("optimizer_impl", exp.optimizer_impl, OPTIMIZER_IMPLS),
    ]
    if not isinstance(exp.checkpointing, bool):
        problems.append(f"checkpointing must be true or false, got {exp.checkpointing!r}")
    if exp.gpu_memory is not None and _positive_int_problem("gpu_memory", exp.gpu_memory):
        problems.append(f"gpu_memory must be a positive number of bytes, got {exp.gpu_memory!r}")
    if not isinstance(exp.model, str) or not exp.model.strip():
        problems.append(f"model must be a non-empty name, got {exp.model!r}")
    if exp.backend in ("cpu", "cuda") and exp.device != exp.backend:
        problems.append(f"device {exp.device!r} contradicts backend {exp.backend!r}: "
                        "a real run measures its own device")
    return [p for p in problems if p]


_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str) -> int:
    """'24GiB' → bytes. Decimal (GB) and binary (GiB) units; a bare number means GiB."""
    match = _SIZE.match(text)
    if not match:
        raise ConfigError(f"cannot read memory size {text!r}; write e.g. 24GiB or 80GB")
    number, unit = float(match.group(1)), match.group(2).lower() or "gib"
    if unit not in _UNITS:
        raise ConfigError(f"unknown memory unit {match.group(2)!r} in {text!r}; "
                          "use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB")
    size = int(number * _UNITS[unit])
    if size <= 0:
        raise ConfigError(f"memory size must be positive, got {text!r}")
    return size
