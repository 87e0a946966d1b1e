"""What each study kind's data holds, as the pages read it; `store.load_study` checks a
study result against it, so that a file of the wrong shape is refused on one line naming the
file instead of failing deep inside a page.

A shape is a type (int, float, str, bool), a [shape] list, a {key: shape} object (keys not
named are allowed: a later VERSION may add some), `Each(shape)` for an object whose every
value has the shape, `Maybe(shape)` for a key that may be absent or null, `POSITIVE` for a
number above zero (pages take its logarithm or divide by it) and `FILLED` lists for lists
pages take the largest of. The study modules under measure/studies/ write this data; they
import PyTorch, which rendering does not, so their shapes are declared here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from generator.errors import shown
from generator.experiment import PRECISIONS
from generator.results.shapes import MAX_COUNT

@dataclass(frozen=True)
class Maybe:
    shape: Any


@dataclass(frozen=True)
class Each:
    shape: Any


@dataclass(frozen=True)
class Filled:
    """A list of at least one item of `shape`."""

    shape: Any


POSITIVE = "a number above 0"

_FORMAT = {"name": str, "bits": int, "exponent_bits": int, "mantissa_bits": int,
           "max": POSITIVE, "smallest_normal": POSITIVE, "smallest_subnormal": POSITIVE,
           "eps": POSITIVE, "decades": float}
_CAST = {"zero": int, "subnormal": int, "zero_fraction": float, "subnormal_fraction": float,
         "overflow": Maybe(int), "overflow_fraction": Maybe(float),
         "mean_relative_error": Maybe(float)}
_GROUP = {"name": str, "values": POSITIVE, "exact_zeros": Maybe(int), "log2_first": int,
          "log2_counts": [int], "casts": Each(_CAST)}
_RUN = {"precision": str, "reference": bool, "seed": int, "eval_loss": float,
        "eval_loss_difference": Maybe(float), "seconds": float, "loss": Filled(float),
        "final_scale": Maybe(POSITIVE), "skipped_steps": Maybe(int)}
_SEED = {"precision": str, "seed": int, "eval_loss": float}
_SIMULATED_REPORT = {  # simulate/report.py SimulationReport.to_dict()
    "gpu": str, "memory_bytes": int, "peak_bytes": int, "allocated_bytes": int,
    "reserved_bytes": int, "nvidia_smi_bytes": [int], "context_bytes": [int], "verdict": str,
    "verdict_reason": str, "stopped_after_steps": bool,
    "steps": [{"allocated_bytes": int, "reserved_bytes": int, "tensor_bytes": int}],
    "placeholders": [{"file": str, "line": int, "what": str, "count": int}],
    "compiled": Maybe([{"file": str, "line": int, "count": int}]),
    "timeline": Maybe({"events": [int], "allocated": [int], "reserved": [int]})}
_CHECK = {"rows": [{"id": str, "within": Maybe(bool)}], "seconds": Maybe(float),
          "summary": {"cases": int, "judged": int, "within": int}}

#: Per study kind, the shape of its data.
SHAPES: dict[str, Any] = {
    "torch_facts": {"torch": str, "formats": [_FORMAT], "cuda_amp_deprecated": bool,
                    "grad_scaler": {"init_scale": POSITIVE, "growth_factor": float,
                                    "backoff_factor": float, "growth_interval": int}},
    "underflow": {"model": str, "batch_size": int, "seq_len": int, "scale": POSITIVE,
                  "groups": [_GROUP]},
    "training_curves": {"steps": int, "batch_size": int, "seq_len": int, "lr": float,
                        "every": int, "final_steps": int, "threads": int, "eval_size": int,
                        "step": [int], "values": int, "smallest_number": Maybe(int),
                        "runs": Filled(_RUN), "seeds": Maybe([_SEED])},
    # generator/validate/: whole grids held against their truths, the accuracy page's section
    "validation": {"checks": Each(_CHECK)},
    # a shipped script run on a simulated GPU, the page "Run your own script"
    "simulated_run": {"command": Filled(str), "exit_status": int, "output": str,
                      "report": _SIMULATED_REPORT},
}


def problem(kind: str, data: dict[str, Any]) -> str | None:
    """What is wrong with a study's data for its kind, in words; None when pages can read
    it (a kind this version does not know: nothing reads it)."""
    if kind not in SHAPES:
        return None
    return _shape_problem(data, SHAPES[kind], "data") or _relation_problem(kind, data)


def _shape_problem(value: Any, shape: Any, where: str) -> str | None:
    if isinstance(shape, Maybe):
        return None if value is None else _shape_problem(value, shape.shape, where)
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return f"{where} must be an object"
        for key, inner in shape.items():
            if key not in value and not isinstance(inner, Maybe):
                return f"{where} lacks {key}"
            found = _shape_problem(value.get(key), inner, f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(shape, Each):
        if not isinstance(value, dict):
            return f"{where} must be an object"
        return next(filter(None, (_shape_problem(v, shape.shape, f"{where}.{k}")
                                  for k, v in value.items())), None)
    if isinstance(shape, (list, Filled)):
        inner = shape.shape if isinstance(shape, Filled) else shape[0]
        if not isinstance(value, list) or (isinstance(shape, Filled) and not value):
            return f"{where} must be a {'non-empty ' if isinstance(shape, Filled) else ''}list"
        return next(filter(None, (_shape_problem(v, inner, f"{where}[{i}]")
                                  for i, v in enumerate(value))), None)
    return None if _is(value, shape) else f"{where} must be {_named(shape)}, got {shown(value)}"


def _is(value: Any, shape: Any) -> bool:
    if shape is bool or shape is str:
        return isinstance(value, shape)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if shape is int:
        return isinstance(value, int) and abs(value) <= MAX_COUNT
    # float and POSITIVE: a finite number a float can hold (pages compute with floats)
    if isinstance(value, int) and abs(value) > MAX_COUNT or not math.isfinite(value):
        return False
    return shape is float or value > 0


def _named(shape: Any) -> str:
    return {int: "an integer", float: "a finite number", str: "a string",
            bool: "true or false"}.get(shape, shape)


def _relation_problem(kind: str, data: dict[str, Any]) -> str | None:
    """What the pages assume beyond the shape: the formats they compare, the baseline run."""
    if kind == "torch_facts":
        names = {row["name"] for row in data["formats"]}
        missing = [name for name in ("fp32", "fp16") if name not in names]
        return f"data.formats lacks {', '.join(missing)}" if missing else None
    if kind == "training_curves":
        runs = data["runs"]
        unknown = [r["precision"] for r in runs if r["precision"] not in PRECISIONS]
        if unknown:
            return f"data.runs: unknown precision {unknown[0]!r}"
        if not any(r["precision"] == "fp32" and not r["reference"] for r in runs):
            return "data.runs holds no fp32 run to compare the others with"
        if any(len(r["loss"]) != len(data["step"]) for r in runs):
            return "data.runs: each run's loss must have one value per step of data.step"
        if any(r["reference"] and r.get("eval_loss_difference") is None for r in runs):
            return "data.runs: the reference run lacks eval_loss_difference"
    return None
