"""The precision page: what fp16 and bf16 cost in accuracy, measured.

Three studies, all read here and nowhere else: `torch_facts` (the formats' limits from
`torch.finfo`, GradScaler's defaults), `underflow` (real BERT-base gradients cast to fp16 and
bf16) and `training_curves` (the same small model trained in each precision). The page
types none of their figures.
"""

from __future__ import annotations

import math
import re
import statistics
from typing import Any

from markupsafe import Markup

from generator.results.shapes import StudyResult, trust
from generator.site.derived import first_study, torch_facts
from generator.site.pages import Page, PageModule
from generator.site.pages.precision import charts as precision_charts
from generator.site.pages.precision import tables as precision_tables

Study = StudyResult
#: Parameter groups of the underflow study, in the order the table lists them.
GROUP_ORDER = ("embeddings", "attention_qk", "attention", "mlp", "layernorm", "head",
               "parameters", "activations")
#: Training studies shown first: a GPU's curves (fp16 with GradScaler among them), then CPU.
PAGES = (Page("precision.md", "precision/precision", nav=50),)


def context(results: list[dict[str, Any]], studies: list[Study]) -> dict[str, Any] | None:
    facts = torch_facts(studies)
    if facts is None:  # the formats' limits are the page's first table
        return None
    usable = [s for s in studies if not s.get("error")]
    curves = sorted((curves_view(s) for s in usable if s["study"]["kind"] == "training_curves"),
                    key=lambda v: (trust(v["backend"]), v["id"]))
    underflow_study = first_study(studies, "underflow")
    underflow = underflow_view(underflow_study, facts, results) if underflow_study else None
    bf16 = next((r for v in curves for r in v["amp"] if r["precision"] == "amp-bf16"), None)
    return {"ranges": facts["by_name"], "range_claim": range_claim(facts["by_name"]),
            "scaler": scaler_defaults(facts["grad_scaler"]), "curves": curves,
            "underflow": underflow,
            "cuda_curves": any(v["backend"] == "cuda" for v in curves),
            # The first bf16 run (a GPU's if any): did its gap to fp32 stay within the seeds'?
            "bf16_run": bf16,
            # The studies read, for the page's data files (site/sources.py).
            "sources": [first_study(studies, "torch_facts"), *(
                s for s in usable if s["study"]["kind"] == "training_curves"),
                *([underflow_study] if underflow_study else [])]}


def figures(ctx: dict[str, Any], lang: str) -> dict[str, str]:
    found = {f"precision-curves-{v['id']}": precision_charts.loss_curves(v, lang)
             for v in ctx["curves"]}
    if ctx["underflow"]:
        found["precision-underflow"] = precision_charts.underflow_histogram(ctx["underflow"], lang)
    return found


def tables(ctx: dict[str, Any], lang: str) -> dict[str, Markup]:
    found = {"precision-ranges": precision_tables.ranges_table(ctx["ranges"], lang)}
    for view in ctx["curves"]:
        found[f"precision-runs-{view['id']}"] = precision_tables.runs_table(view, lang)
    if ctx["underflow"]:
        found["precision-underflow"] = precision_tables.underflow_table(ctx["underflow"], lang)
        found["precision-rounding"] = precision_tables.rounding_table(ctx["underflow"],
                                                                      ctx["ranges"], lang)
    return found


def range_claim(r: dict[str, dict[str, Any]]) -> dict[str, float]:
    """The article's "fp16's range is 1/16 of fp32's", measured two ways: the ratio of the
    largest values, and the ratio of the decades each spans (largest / smallest normal)."""
    return {"max_ratio": r["fp16"]["max"] / r["fp32"]["max"],
            "decade_ratio": r["fp16"]["decades"] / r["fp32"]["decades"]}


def scaler_defaults(found: dict[str, Any]) -> dict[str, Any]:
    """`torch.amp.GradScaler`'s defaults (from its signature, read when measuring), with the
    initial scale as a power of two."""
    exponent = round(math.log2(found["init_scale"]))
    return {**found, "init_scale_log2": exponent,
            "init_scale_text": precision_charts.power_of_two(exponent)}


def underflow_view(study: Study, facts: dict[str, Any],
                   results: list[dict[str, Any]]) -> dict[str, Any]:
    """The underflow study as the page needs it: groups in table order, each cast's share of
    values lost (0 or subnormal), fp16's limits as powers of two."""
    data, env = study["data"], study["environment"]
    groups = {g["name"]: _with_lost(g) for g in data["groups"]}
    fp16 = facts["by_name"]["fp16"]
    arch = data.get("architecture") or next(
        (r["architecture"] for r in results
         if r["experiment"]["model"] == data["model"] and r.get("architecture")), None)
    return {
        "model": data["model"], "batch_size": data["batch_size"], "seq_len": data["seq_len"],
        "scale": data["scale"], "scale_log2": round(math.log2(data["scale"])),
        "scale_text": precision_charts.power_of_two(round(math.log2(data["scale"]))),
        "vocab": arch["vocab"] if arch else None,
        "backend": study["study"]["backend"],
        "machine": env.get("device_name") or env["machine_id"],
        "groups": [groups[n] for n in GROUP_ORDER if n in groups], "by_name": groups,
        "parameters": groups.get("parameters"), "activations": groups.get("activations"),
        "limits": {"fp16_normal_log2": round(math.log2(fp16["smallest_normal"])),
                   "fp16_subnormal_log2": round(math.log2(fp16["smallest_subnormal"]))},
    }


def _with_lost(group: dict[str, Any]) -> dict[str, Any]:
    casts = {name: {**c, "lost": c["zero"] + c["subnormal"],
                    "lost_fraction": c["zero_fraction"] + c["subnormal_fraction"]}
             for name, c in group["casts"].items()}
    # "values" would clash with dict.values in templates: the view says "nonzero".
    return {**{k: v for k, v in group.items() if k not in ("casts", "values")},
            "nonzero": group["values"], **casts}


def curves_view(study: Study) -> dict[str, Any]:
    """A training study with its runs sorted out: the fp32 baseline, the AMP runs (each with
    its gap to fp32 measured against the gap between two fp32 seeds), the reference run."""
    data, env = study["data"], study["environment"]
    runs = data["runs"]
    base = next(r for r in runs if r["precision"] == "fp32" and not r["reference"])
    reference = next((r for r in runs if r["reference"]), None)
    yardstick = abs(reference["eval_loss_difference"]) if reference else None
    # Results of the study's VERSION 1 hold one seed per precision and one fp32 reference.
    seeds = data.get("seeds") or [{k: r[k] for k in ("precision", "seed", "eval_loss")}
                                  for r in runs]
    enriched = [r if r is base or r["reference"] else {
        **r, "noise": seed_noise(seeds, r["precision"]),
        "same_time": f"{r['seconds']:.1f}" == f"{base['seconds']:.1f}",
        "final_scale_text": precision_charts.power_of_two(round(math.log2(r["final_scale"])))
        if r.get("final_scale") else None}
        for r in runs]
    backend = study["study"]["backend"]
    return {
        "id": _slug(f"{env['machine_id']}-{study['study']['name']}"),
        "name": study["study"]["name"],
        "backend": backend, "machine": env.get("device_name") or env["machine_id"],
        **{k: data[k] for k in ("steps", "batch_size", "seq_len", "lr", "every",
                                "final_steps", "threads", "eval_size", "step")},
        # Results of the study's VERSION 1 do not record the first number: it was 1.
        "smallest_number": data.get("smallest_number", 1), "largest_number": data["values"],
        "runs": enriched, "fp32": base,
        "amp": [r for r in enriched if r is not base and not r["reference"]],
        "reference": reference, "yardstick": yardstick,
        "noise_seeds": len({r["seed"] for r in seeds if r["precision"] == base["precision"]}),
    }


#: Fewest seeds (pairs of runs) from which a spread is worth computing.
MIN_SEEDS = 3


def seed_noise(seeds: list[dict[str, Any]], precision: str) -> dict[str, Any]:
    """Is `precision`'s held-out loss told apart from fp32's by more than the seeds' noise?
    The runs pair up by seed (same initial weights, same batches). With MIN_SEEDS pairs or
    more: the paired differences' mean, spread and standard error, and fp32's own spread
    over seeds; the verdict is "beyond" where the mean is more than twice its standard
    error from zero, else "within". With fewer, the verdict is "cannot_tell": one pair of
    runs cannot estimate a noise."""
    loss = {(r["precision"], r["seed"]): r["eval_loss"] for r in seeds}
    paired = sorted(seed for p, seed in loss if p == precision and ("fp32", seed) in loss)
    diffs = [loss[(precision, seed)] - loss[("fp32", seed)] for seed in paired]
    fp32 = [loss[("fp32", seed)] for seed in sorted(s for p, s in loss if p == "fp32")]
    found: dict[str, Any] = {"seeds": len(diffs), "fp32_seeds": len(fp32),
                             "fp32_gap": abs(fp32[1] - fp32[0]) if len(fp32) >= 2 else None}
    if len(diffs) < MIN_SEEDS:
        return {**found, "verdict": "cannot_tell"}
    mean = statistics.fmean(diffs)
    spread = statistics.stdev(diffs)
    error = spread / math.sqrt(len(diffs))
    return {**found, "mean": mean, "spread": spread, "error": error, "lowest": min(diffs),
            "highest": max(diffs), "fp32_spread": statistics.stdev(fp32),
            "verdict": "beyond" if abs(mean) > 2 * error else "within"}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


PAGE_MODULE = PageModule(PAGES, context, figures=figures, tables=tables)
