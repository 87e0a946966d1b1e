"""Study `underflow`: what happens to real gradients when they are stored in fp16 or bf16.

One real backward of a built-in model on the CPU, in fp32. Every non-zero gradient value is
then cast the way mixed precision would hold it: to fp16 as is, to fp16 after multiplying by
GradScaler's initial scale, and to bf16. Counted per group of parameters, and for the
gradients flowing between blocks (the values an fp16 backward carries from block to block):
how many become 0, how many land among the subnormals (fewer significant bits), how many
overflow, and the mean relative error of the cast. The thresholds are the dtypes' own, from
the cast itself; `torch.finfo` only names them.

Params: model (a built-in model, default bert-base), batch_size (2), seq_len (128), seed (0).
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import torch

from generator.errors import ConfigError
from generator.measure.studies import unknown_params
from generator.measure.training.threads import one_thread

VERSION = 2
DEFAULTS: dict[str, Any] = {"model": "bert-base", "batch_size": 2, "seq_len": 128, "seed": 0}
#: Parameter groups, first match wins: (group, test on the parameter's name).
GROUPS = (
    ("layernorm", lambda name: "norm" in name),
    ("embeddings", lambda name: name.startswith("embeddings.")),
    ("attention_qk", lambda name: ".attention.query." in name or ".attention.key." in name),
    ("attention", lambda name: ".attention." in name),
    ("mlp", lambda name: ".mlp." in name),
    ("head", lambda name: True),
)
#: The casts compared: (name, target dtype, multiply by GradScaler's initial scale first).
CASTS = (("fp16", torch.float16, False), ("fp16_scaled", torch.float16, True),
         ("bf16", torch.bfloat16, False))


def problems(params: dict[str, Any]) -> list[str]:
    from generator.measure.models import MODELS

    found = unknown_params("underflow", params, DEFAULTS)
    merged = {**DEFAULTS, **params}
    if merged["model"] not in MODELS:
        found.append(f"underflow model must be a built-in model ({', '.join(MODELS)}), "
                     f"got {merged['model']!r}")
    for key in ("batch_size", "seq_len"):
        value = merged[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            found.append(f"underflow {key} must be a positive integer, got {value!r}")
    if not isinstance(merged["seed"], int) or isinstance(merged["seed"], bool):
        found.append(f"underflow seed must be an integer, got {merged['seed']!r}")
    return found


def grad_scaler_initial_scale() -> float:
    """GradScaler's default `init_scale`, read from PyTorch rather than typed here."""
    return float(inspect.signature(torch.amp.GradScaler).parameters["init_scale"].default)


def run(params: dict[str, Any]) -> dict[str, Any]:
    found = problems(params)
    if found:
        raise ConfigError("; ".join(found))
    p = {**DEFAULTS, **params}
    with one_thread():
        return _measure(p)


def _measure(p: dict[str, Any]) -> dict[str, Any]:
    from generator.measure.models import resolve_model

    torch.manual_seed(p["seed"])
    workload = resolve_model(p["model"]).build()
    between: list[torch.Tensor] = []
    handles = [block.register_forward_hook(_keep_output_grad(between))
               for block in getattr(workload.model, "layers", [])]
    inputs, target = workload.make_batch(p["batch_size"], p["seq_len"], "cpu")
    loss = workload.loss_fn(workload.model(*inputs), target)
    loss.backward()
    for handle in handles:
        handle.remove()
    scale = grad_scaler_initial_scale()
    casts = [(name, dtype, scale if scaled else 1.0) for name, dtype, scaled in CASTS]
    tallies: dict[str, Tally] = {}
    for name, param in workload.model.named_parameters():
        counts = tensor_counts(param.grad, casts)
        for key in (next(g for g, test in GROUPS if test(name)), "parameters"):
            tallies.setdefault(key, Tally()).add(counts)
    for grad in between:
        tallies.setdefault("activations", Tally()).add(tensor_counts(grad, casts))
    order = [g for g, _ in GROUPS] + ["activations", "parameters"]
    return {
        "model": p["model"], "batch_size": p["batch_size"], "seq_len": p["seq_len"],
        "seed": p["seed"], "loss": float(loss.detach()), "scale": scale,
        "groups": [{"name": g, **tallies[g].summary()} for g in order if g in tallies],
    }


def _keep_output_grad(store: list[torch.Tensor]) -> Callable[..., None]:
    """A forward hook that keeps the gradient arriving at the block's output in backward."""
    def hook(module: torch.nn.Module, args: Any, output: torch.Tensor) -> None:
        if isinstance(output, torch.Tensor) and output.requires_grad:
            output.register_hook(lambda grad: store.append(grad.detach().clone()))
    return hook


def cast_effects(values: torch.Tensor, dtype: torch.dtype, scale: float = 1.0) -> dict[str, Any]:
    """What casting `values * scale` to `dtype` does to the non-zero values among them."""
    tally = Tally()
    tally.add(tensor_counts(values, [("cast", dtype, scale)]))
    return tally.summary()["casts"]["cast"]


@functools.lru_cache(maxsize=None)
def boundaries(dtype: torch.dtype, factor: float) -> tuple[float, float, float]:
    """The largest fp32 magnitudes x for which `(x * factor).to(dtype)` is still 0, still
    below the smallest normal, still finite: found by bisection over fp32 bit patterns with
    the cast itself, so rounding at each edge is the dtype's own."""
    tiny = float(torch.finfo(dtype).smallest_normal)
    tests = (lambda c: c == 0, lambda c: c < tiny, torch.isfinite)
    return tuple(_largest(lambda x: bool(test((x * factor).to(dtype)))) for test in tests)


def _largest(holds: Callable[[torch.Tensor], bool]) -> float:
    """The largest non-negative finite fp32 x with holds(x), for a test that holds up to some
    x and fails above it (casting is monotone)."""
    low, high = 0, 0x7F800000  # bit patterns: holds(low) is assumed, high is +inf

    def as_float(bits: int) -> torch.Tensor:
        return torch.tensor([bits], dtype=torch.int32).view(torch.float32)

    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if holds(as_float(middle)) else (low, middle)
    return float(as_float(low))


#: The mean relative error of a cast is taken over every SAMPLE_STRIDE-th value: it is a
#: smooth average, and the full pass would cost more than everything else here.
SAMPLE_STRIDE = 61


def tensor_counts(grad: torch.Tensor, casts: list[tuple[str, torch.dtype, float]]
                  ) -> dict[str, Any]:
    """One tensor's figures for each cast (name, dtype, factor): exact counts by comparing
    magnitudes with the cast's boundaries, and a histogram of fp32 exponent fields."""
    magnitude = grad.detach().reshape(-1).to(torch.float32).abs()
    zeros = magnitude.numel() - int(torch.count_nonzero(magnitude))
    values = magnitude.numel() - zeros
    # The biased exponent field: floor(log2 |g|) + 127 for normal fp32 values.
    exponents = torch.bincount(magnitude.view(torch.int32) >> 23, minlength=256)
    exponents[0] -= zeros  # field 0 holds the zeros and fp32's own subnormals
    used = torch.nonzero(exponents).flatten()
    low = 0.0 if not used.numel() or used[0] == 0 else 2.0 ** (int(used[0]) - 127)
    high = 2.0 ** (int(used[-1]) - 126) if used.numel() else 0.0

    def at_most(edge: float) -> int:
        """How many non-zero magnitudes are ≤ edge; the comparison only where the histogram
        cannot tell (most tensors lie wholly on one side of most edges)."""
        if edge < low:
            return 0
        if edge >= high:
            return values
        return int(torch.count_nonzero(magnitude <= edge)) - zeros

    sample = magnitude[::SAMPLE_STRIDE]
    sample = sample[sample != 0]
    found: dict[str, Any] = {"values": values, "exact_zeros": zeros, "exponents": exponents,
                             "casts": {}}
    for name, dtype, factor in casts:
        zero_max, subnormal_max, finite_max = boundaries(dtype, factor)
        kept = sample[sample <= finite_max]
        back = (kept * factor).to(dtype).to(torch.float32) / factor
        found["casts"][name] = {
            "zero": at_most(zero_max), "subnormal": at_most(subnormal_max) - at_most(zero_max),
            "overflow": values - at_most(finite_max),
            "error_sum": float(((back - kept).abs() / kept).sum()), "sampled": kept.numel()}
    return found


class Tally:
    """The sum of `tensor_counts` over any number of tensors (a parameter group)."""

    def __init__(self) -> None:
        self.values = self.exact_zeros = 0
        self.casts: dict[str, dict[str, float]] = {}
        self.exponents = torch.zeros(256, dtype=torch.int64)

    def add(self, counts: dict[str, Any]) -> None:
        self.values += counts["values"]
        self.exact_zeros += counts["exact_zeros"]
        self.exponents += counts["exponents"]
        for name, figures in counts["casts"].items():
            mine = self.casts.setdefault(name, dict.fromkeys(figures, 0))
            for key, value in figures.items():
                mine[key] += value

    def summary(self) -> dict[str, Any]:
        """JSON-ready: counts, fractions of the non-zero values, and the log2 histogram."""
        share = (lambda n: n / self.values) if self.values else (lambda n: 0.0)
        casts = {name: {"zero": c["zero"], "subnormal": c["subnormal"], "overflow": c["overflow"],
                        "zero_fraction": share(c["zero"]),
                        "subnormal_fraction": share(c["subnormal"]),
                        "overflow_fraction": share(c["overflow"]),
                        "mean_relative_error": c["error_sum"] / c["sampled"] if c["sampled"]
                        else 0.0}
                 for name, c in self.casts.items()}
        used = torch.nonzero(self.exponents).flatten()
        first, last = (int(used[0]), int(used[-1])) if used.numel() else (0, -1)
        # log2_counts[i]: values with floor(log2 |g|) = log2_first + i (field 0: below 2**-126).
        return {"values": self.values, "exact_zeros": self.exact_zeros, "casts": casts,
                "log2_first": first - 127,
                "log2_counts": [int(c) for c in self.exponents[first:last + 1]]}
