"""What the widget shows for one choice, computed in Python: docs/assets/calculator.js makes
the same computations in the browser (with planning.js, the copy of plan/fit.py and
plan/search.py), and the browser test holds the two against each other.

Where a lever set has a replay template, its peaks on a GPU are the template replayed through
the allocator at the size asked, with that GPU's cuBLAS workspaces (replay.py): what an
estimate for that GPU gives there. Otherwise they come from the planes, fitted to the
estimates of the assumed GPU, and the widget says so. A GPU fits the step by the one rule
(plan/fit.py); the largest batch is the one search's (plan/search.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from generator.plan import fit as fit_rule
from generator.gpus import GPU
from generator.plan.search import largest_fitting
from generator.plan.predictor import replay
from generator.plan.predictor.planes import FitRange, predict


def gpu_entry(gpu: GPU) -> dict[str, Any]:
    """What the widget and these computations read of a GPU of the catalogue."""
    return {"name": gpu.name, "memory_bytes": gpu.memory_bytes,
            "context_bytes": list(gpu.context_bytes),
            "workspace_bytes": gpu.overheads.cublas_workspace_bytes}


class Predictor:
    """One setting's peaks at any size, on any GPU's workspaces, each replayed once. The
    batch is per micro-batch; a setting of two micro-batches replays its template at twice
    that (its estimates' own batch)."""

    def __init__(self, fit: dict[str, Any],
                 templates: dict[str, dict[str, Any]] | None = None) -> None:
        self.fit, self.templates = fit, templates or {}
        self._seen: dict[tuple[int, int, int | None], tuple[float, float]] = {}

    def template(self, batch: int) -> dict[str, Any] | None:
        """The replay template whose batches hold `batch`, or None."""
        for entry in self.fit.get("replays") or ():
            low, high = entry["batch"]
            if low <= batch and (high is None or batch <= high) \
                    and entry["name"] in self.templates:
                return self.templates[entry["name"]]
        return None

    def peaks(self, batch: int, seq: int, workspace: int | None = None) -> tuple[float, float]:
        """(allocated, reserved) with cuBLAS workspaces of `workspace` bytes each (None:
        the estimates' own)."""
        key = (batch, seq, workspace)
        if key not in self._seen:
            fit, template = self.fit, self.template(batch)
            micro = fit.get("micro_batches", 1)
            self._seen[key] = (
                replay.peaks(template, batch * micro, seq, workspace) if template else
                (predict(fit["allocated"], batch, seq), predict(fit["reserved"], batch, seq)))
        return self._seen[key]


def figures(fit: dict[str, Any], gpu: dict[str, Any], batch: int, seq: int,
            templates: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The step's peaks on `gpu` (the widget's GPU data), what nvidia-smi would show, and
    whether the size lies where the fit has points."""
    allocated, reserved = Predictor(fit, templates).peaks(batch, seq, gpu["workspace_bytes"])
    low, high = gpu["context_bytes"]
    return {"allocated": allocated, "reserved": reserved,
            "smi": [reserved + low, reserved + high], "in_range": in_range(fit, batch, seq)}


def in_range(fit: dict[str, Any], batch: int, seq: int) -> bool:
    """Whether the size lies where the fit has points: batch × sequence and the sequence
    length each between the estimates' own. Outside, the widget warns in words that name
    these two intervals and nothing else, so the range is those two intervals: a size inside
    both is never called outside them. Whether a replay template holds the batch is another
    question, which the widget answers in its own line (replayed, or planes fitted to the
    estimates)."""
    return FitRange(tuple(fit["range"]["tokens"]), tuple(fit["range"]["seq"])).contains(batch, seq)


def composition(fit: dict[str, Any], batch: int, seq: int,
                categories: Sequence[str]) -> list[float] | None:
    """What fills the peak at this size, as each category's share of it: the categories'
    planes where the step's peak grows with its size (the allocated plane reaches its floor),
    the split of the optimizer step's peak where it does not; None where the fit has neither
    or they add up to nothing."""
    split = fit.get("composition") or {}
    allocated = fit["allocated"]
    plane = {key: allocated[key] for key in ("fixed", "per_token", "per_token_sq")}
    growing = allocated["floor"] == 0 or predict(plane, batch, seq) >= allocated["floor"]
    if growing and split.get("planes"):
        parts = [max(0, predict(split["planes"][cat], batch, seq)) for cat in categories]
    elif split.get("floor"):
        parts = [split["floor"].get(cat) or 0 for cat in categories]
    else:
        return None
    total = sum(parts)
    return [part / total for part in parts] if total > 0 else None


def verdict(fit: dict[str, Any], gpu: dict[str, Any], batch: int, seq: int,
            templates: dict[str, dict[str, Any]] | None = None) -> fit_rule.Verdict:
    return _verdict(Predictor(fit, templates), gpu, batch, seq)


def _verdict(predictor: Predictor, gpu: dict[str, Any], batch: int,
             seq: int) -> fit_rule.Verdict:
    allocated, reserved = predictor.peaks(batch, seq, gpu["workspace_bytes"])
    return fit_rule.judge(gpu["memory_bytes"], allocated=allocated, reserved=reserved,
                          context=tuple(gpu["context_bytes"]), gpu=gpu["name"])


def largest_batch(fit: dict[str, Any], gpu: dict[str, Any], seq: int,
                  templates: dict[str, dict[str, Any]] | None = None) -> int:
    """The largest batch that fits `gpu` at this sequence length (0: none), by the one
    search over the one rule's needed bytes."""
    return largest_batch_by(Predictor(fit, templates), gpu, seq)


def largest_batch_by(predictor: Predictor, gpu: dict[str, Any], seq: int) -> int:
    """The same, with a predictor made already (which keeps the sizes it replayed)."""
    return largest_fitting(lambda batch: needed_bytes(predictor, gpu, batch, seq),
                           gpu["memory_bytes"]).largest


def needed_bytes(predictor: Predictor, gpu: dict[str, Any], batch: int, seq: int) -> int:
    """What the step needs of `gpu` to fit for sure, by the one rule."""
    return _verdict(predictor, gpu, batch, seq).needed_bytes


def smallest_fitting(predictor: Predictor, gpus: list[dict[str, Any]], batch: int,
                     seq: int) -> dict[str, Any] | None:
    """The GPU of the least memory on which the step fits for sure (the one rule's "yes"),
    or None where it fits none of them."""
    fitting = [g for g in gpus if _verdict(predictor, g, batch, seq).word == "yes"]
    return min(fitting, key=lambda g: g["memory_bytes"], default=None)
