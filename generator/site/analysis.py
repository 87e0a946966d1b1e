"""Figures derived from results: shares of the peak, AMP savings, estimate accuracy.

Templates only print what this module computes; nothing here runs a model.
"""

from __future__ import annotations

from typing import Any

from generator.experiment import is_plain_step, step_options_of
from generator.results.reference_runs import experiment_keys
from generator.results.shapes import CATEGORIES, StepResult, StudyResult, result_trust
from generator.site.labels import PRECISION_LABELS

Result = StepResult
#: The source article's example, the configuration every headline number is about.
ARTICLE = {"model": "bert-base", "batch_size": 32, "seq_len": 128, "optimizer": "adamw"}


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


def precision_comparison(by_precision: dict[str, Result], view: str = "live") -> dict[str, Any]:
    """Bytes per category for each precision, and each AMP precision's saving against fp32.

    view "live": bytes live at the peak, closing with the peak; view "max": each category's
    own maximum, closing with the sum of maxima (the article's way of adding up)."""
    if view not in ("live", "max"):
        raise ValueError(f"unknown view {view!r}; choose live or max")
    field = "live_at_peak_bytes" if view == "live" else "category_max_bytes"

    def value(result: Result, cat: str) -> int:
        if cat == "total":
            return result["peak_bytes"] if view == "live" else sum(result[field].values())
        return result[field][cat]

    base = by_precision.get("fp32")
    rows = []
    for cat in CATEGORIES + ("total",):
        row: dict[str, Any] = {"category": cat, "bytes": {}, "saving": {}}
        for precision, result in by_precision.items():
            row["bytes"][precision] = value(result, cat)
            if base is not None and precision != "fp32":
                row["saving"][precision] = saving(value(base, cat), row["bytes"][precision])
        rows.append(row)
    return {"precisions": list(by_precision), "rows": rows, "view": view}


def result_id(result: Result) -> str:
    """Unique per result, for file names and HTML ids: the same experiment may come from two
    machines."""
    return f"{result['key']}-{result['environment']['machine_id']}"


def usable(results: list[Result]) -> list[Result]:
    return [r for r in results if not r.get("error")]


def beside_published(results: list[Result]) -> list[Result]:
    """The results that are not a published H100 run's step (estimated or measured on a
    GPU): those belong to the accuracy page alone."""
    published = experiment_keys()
    return [r for r in results if r["key"] not in published]


def best_by_precision(results: list[Result], *, model: str, batch_size: int, seq_len: int,
                      optimizer: str = "adamw") -> dict[str, Result]:
    """For one configuration, the result of each precision closest to a GPU (shapes.trust)."""
    chosen: dict[str, Result] = {}
    for result in usable(results):
        exp = result["experiment"]
        if (exp["model"], exp["batch_size"], exp["seq_len"], exp["optimizer"]) != \
                (model, batch_size, seq_len, optimizer):
            continue
        if (exp["backend"] == "estimate" and exp["device"] != "cuda") or \
                not is_plain_step(exp):
            continue
        current = chosen.get(exp["precision"])
        if current is None or result_trust(result) < result_trust(current):
            chosen[exp["precision"]] = result
    order = tuple(PRECISION_LABELS)
    return {p: chosen[p] for p in order if p in chosen}


def estimate_accuracy(results: list[Result]) -> list[dict[str, Any]]:
    """Each real run beside the estimate of the same configuration for the same device:
    the ground-truth peak, the tracker's peak in the real run, the estimate's peak. The
    published H100 runs' steps are left to the accuracy page."""
    results = beside_published(results)
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
        # A cpu result's figures are the allocator's blocks labelled by the tracker; the
        # tracker's own peak stands beside the ground truth (older results: the figures').
        tracker_bytes = truth.get("tracker_peak_bytes", result["peak_bytes"])
        rows.append({
            "result": result,
            "truth_bytes": truth_bytes,
            "tracker_bytes": tracker_bytes,
            "tracker_error": tracker_bytes / truth_bytes - 1,
            "estimate_bytes": estimate["peak_bytes"] if estimate else None,
            "estimate_error": estimate["peak_bytes"] / truth_bytes - 1 if estimate else None,
        })
    return rows


def _config_key(exp: dict[str, Any], device: str) -> tuple:
    options = tuple((opt.help, value) for opt, value in step_options_of(exp))
    return (exp["model"], exp["batch_size"], exp["seq_len"], exp["precision"],
            exp["optimizer"], device, options)


def activation_formula_bytes(*, seq_len: int, batch_size: int, hidden: int, heads: int,
                             intermediate: int, element_bytes: int) -> float:
    """Activations one transformer layer saves for backward, after Korthikanti et al. 2022
    ("Reducing Activation Recomputation in Large Transformer Models", eq. 1: per layer
    s·b·h·(34 + 5·a·s/h) bytes with 16-bit tensors, 1-byte dropout masks and FFN = 4h).

    Counted per element so that other element sizes and FFN widths follow: attention keeps
    5 sbh tensors (QKV input, Q, K, V, output-projection input) plus 2 a·s²·b (softmax output,
    dropout output), the MLP sbh + 2 sbf (its two linear inputs and the GELU input), the two
    LayerNorms 2 sbh; three dropout masks of sbh and one of a·s²·b are 1 byte each.
    element_bytes=2 gives the paper's formula; 4 is its fp32 variant, 66 + 9·a·s/h."""
    s, b, h, a, f, e = seq_len, batch_size, hidden, heads, intermediate, element_bytes
    sbh = s * b * h
    return sbh * (8 * e + 2) + 2 * e * s * b * f + (2 * e + 1) * a * s * s * b


def formula_check(result: Result) -> dict[str, Any] | None:
    """The formula beside the measured activations per layer, for eager-attention
    transformers; None where the formula does not apply."""
    arch = result.get("architecture")
    layers = {k: v for k, v in result.get("module_activation_bytes", {}).items()
              if k.startswith("layers.")}
    if not arch or arch.get("attention") != "eager" or not layers:
        return None
    exp = result["experiment"]
    shape = dict(seq_len=exp["seq_len"], batch_size=exp["batch_size"], hidden=arch["hidden"],
                 heads=arch["heads"], intermediate=arch["intermediate"])
    measured = sum(layers.values()) / len(layers)
    paper = activation_formula_bytes(**shape, element_bytes=2)
    fp32 = activation_formula_bytes(**shape, element_bytes=4)
    predicted = fp32 if exp["precision"] == "fp32" else paper
    return {
        "layers": arch["layers"],
        "measured_per_layer": measured,
        "formula_16bit_per_layer": paper,
        "formula_fp32_per_layer": fp32,
        "predicted_per_layer": predicted,
        "variant": "fp32" if exp["precision"] == "fp32" else "16-bit",
        "error": measured / predicted - 1,
    }


def torch_facts(studies: list[StudyResult]) -> dict[str, Any] | None:
    """What the measuring PyTorch said about its number formats, GradScaler and AMP API (the
    `torch_facts` study), with the formats by name; None when no such study was measured."""
    found = first_study(studies, "torch_facts")
    if found is None:
        return None
    data = found["data"]
    return {**data, "by_name": {row["name"]: row for row in data["formats"]}}


def first_study(studies: list[StudyResult], kind: str) -> StudyResult | None:
    """The first study of a kind that did not fail: the one a page reads."""
    return next((s for s in studies if s["study"]["kind"] == kind and not s.get("error")), None)


#: Built-in models and their Hugging Face twins (the same architecture, built by transformers).
HF_TWINS = {"bert-base": "hf:bert-base-uncased", "gpt2-small": "hf:gpt2"}


def hf_parity(results: list[Result]) -> list[dict[str, Any]]:
    """Each built-in model beside its Hugging Face twin at the same settings, same backend
    and modelled device: parameters and peaks, and how far apart the peaks are."""
    def setting(exp: dict[str, Any]) -> tuple:
        return tuple(sorted((k, str(v)) for k, v in exp.items() if k != "model"))

    twins = {(r["experiment"]["model"], setting(r["experiment"])): r for r in usable(results)}
    rows = []
    for result in usable(results):
        exp = result["experiment"]
        twin = twins.get((HF_TWINS.get(exp["model"]), setting(exp)))
        if twin is not None:
            rows.append({"builtin": result, "hf": twin,
                         "same_parameters": result["parameter_count"] == twin["parameter_count"],
                         "difference": twin["peak_bytes"] / result["peak_bytes"] - 1})
    return rows
