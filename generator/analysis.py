"""Figures derived from results: shares of the peak, AMP savings, estimate accuracy.

Templates only print what this module computes; nothing here runs a model.
"""

from __future__ import annotations

from typing import Any

from .timeline import CATEGORIES

Result = dict[str, Any]
#: Backends in order of trust: a real GPU run beats an estimate.
_TRUST = {"cuda": 0, "cpu": 1, "estimate": 2}


def shares(result: Result) -> dict[str, dict[str, float]]:
    """Each category in both views: its bytes live at the peak as a share of the peak, and its
    own maximum as a share of the sum of maxima (the sum the article's table makes)."""
    live, maxima = result["live_at_peak_bytes"], result["category_max_bytes"]
    peak, total_max = result["peak_bytes"], sum(maxima.values())
    return {
        cat: {
            "live_bytes": live[cat],
            "live_share": live[cat] / peak if peak else 0.0,
            "max_bytes": maxima[cat],
            "max_share": maxima[cat] / total_max if total_max else 0.0,
        }
        for cat in CATEGORIES
    }


def saving(before: int, after: int) -> float | None:
    """1 − after/before; None when there was nothing to save."""
    return None if before == 0 else 1 - after / before


def precision_comparison(by_precision: dict[str, Result]) -> dict[str, Any]:
    """Live-at-peak bytes per category for each precision, and each AMP precision's saving
    against fp32, per category and for the peak."""
    base = by_precision.get("fp32")
    rows = []
    for cat in CATEGORIES + ("peak",):
        row: dict[str, Any] = {"category": cat, "bytes": {}, "saving": {}}
        for precision, result in by_precision.items():
            value = result["peak_bytes"] if cat == "peak" else result["live_at_peak_bytes"][cat]
            row["bytes"][precision] = value
            if base is not None and precision != "fp32":
                base_value = base["peak_bytes"] if cat == "peak" else base["live_at_peak_bytes"][cat]
                row["saving"][precision] = saving(base_value, value)
        rows.append(row)
    return {"precisions": list(by_precision), "rows": rows}


def usable(results: list[Result]) -> list[Result]:
    return [r for r in results if not r.get("error")]


def best_by_precision(results: list[Result], *, model: str, batch_size: int, seq_len: int,
                      optimizer: str = "adamw") -> dict[str, Result]:
    """For one configuration, the most trusted result of each precision (cuda > cpu > estimate
    for cuda)."""
    chosen: dict[str, Result] = {}
    for result in usable(results):
        exp = result["experiment"]
        if (exp["model"], exp["batch_size"], exp["seq_len"], exp["optimizer"]) != \
                (model, batch_size, seq_len, optimizer):
            continue
        if exp["backend"] == "estimate" and exp["device"] != "cuda":
            continue
        current = chosen.get(exp["precision"])
        if current is None or _TRUST[exp["backend"]] < _TRUST[current["backend"]]:
            chosen[exp["precision"]] = result
    order = ("fp32", "amp-fp16", "amp-bf16")
    return {p: chosen[p] for p in order if p in chosen}


def estimate_accuracy(results: list[Result]) -> list[dict[str, Any]]:
    """Each real run beside the estimate of the same configuration for the same device:
    the ground-truth peak, the tracker's peak in the real run, the estimate's peak."""
    estimates = {}
    for result in usable(results):
        exp = result["experiment"]
        if exp["backend"] == "estimate":
            estimates[_config_key(exp, exp["device"])] = result
    rows = []
    for result in usable(results):
        exp = result["experiment"]
        truth = result.get("ground_truth")
        if exp["backend"] == "estimate" or not truth:
            continue
        estimate = estimates.get(_config_key(exp, exp["backend"]))
        truth_bytes = truth["peak_bytes"]
        rows.append({
            "result": result,
            "truth_bytes": truth_bytes,
            "tracker_bytes": result["peak_bytes"],
            "tracker_error": result["peak_bytes"] / truth_bytes - 1,
            "estimate_bytes": estimate["peak_bytes"] if estimate else None,
            "estimate_error": estimate["peak_bytes"] / truth_bytes - 1 if estimate else None,
        })
    return rows


def _config_key(exp: dict[str, Any], device: str) -> tuple:
    return (exp["model"], exp["batch_size"], exp["seq_len"], exp["precision"],
            exp["optimizer"], device)
