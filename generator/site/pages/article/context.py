"""Everything the pages print, computed once from the results for both languages.

Templates receive this dictionary (plus per-language tables and figures) and only place its
values: no template computes a figure.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from generator.experiment import is_plain_step
from generator.plan.gpus import ASSUMED, nvidia_smi_bytes
from generator.results.shapes import StepResult
from generator.site import analysis
from generator.site.analysis import ARTICLE
from generator.site.pages import levers
from generator.site.pages.article.claims import RULES, check_claims

Result = StepResult


def site_data(all_results: list[Result], studies: list[dict[str, Any]],
              snippet: str) -> dict[str, Any]:
    article = analysis.best_by_precision(all_results, **ARTICLE)
    facts = analysis.torch_facts(studies)
    lever_rows = levers.context(all_results, studies) or {}
    checks = analysis.estimate_accuracy(all_results)
    return {
        "article": ARTICLE,
        "article_results": article,
        "fp32": article.get("fp32"),
        "headline": headline(article),
        "small_batch": small_batch(all_results),
        "formula": {p: analysis.formula_check(r) for p, r in article.items()},
        # real runs beside their estimates: on the CPU, and on a GPU
        "accuracy": [r for r in checks if r["result"]["backend"] == "cpu"],
        "accuracy_gpu": [r for r in checks if r["result"]["backend"] == "cuda"],
        "cuda_overhead": cuda_overhead(all_results),
        "hf_parity": analysis.hf_parity(all_results),
        "hf_parity_notes": analysis.parity_notes(analysis.hf_parity(all_results)),
        "claims": check_claims(article, facts, parameter_underflow(studies)),
        "claim_rules": RULES,
        "ranges": facts["formats"] if facts else [],
        "snippet": Markup(snippet),  # our own file, shown in a code fence that escapes it
        "result_count": len(all_results),
        "failed": [r for r in all_results if r.get("error")],
        # the levers, each with its saving where it was run: the explainer lists them, the
        # home page ranks them
        "levers": lever_rows.get("by_id", {}),
        "levers_ranked": what_to_do(lever_rows.get("ranked", [])),
        "lever_names": levers.names(),
        "four_figures": four_figures(article.get("fp32")),
        # The studies behind the claims on formats and underflow, for the pages' data files.
        "sources": [s for s in (analysis.first_study(studies, "torch_facts"),
                                analysis.first_study(studies, "underflow")) if s],
    }


def printed(peak_bytes: int, *shares: float) -> tuple:
    """A peak and shares as the pages print them: GiB to two places, shares to a tenth of a
    percent. Two precisions whose figures print alike are said once."""
    return (round(peak_bytes / 2**30, 2), *(round(share, 3) for share in shares))


def what_to_do(ranked: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The levers a reader can still pull, in the levers page's order (by the reserved peak
    they save, where the allocator is modelled): those that lower it and are not PyTorch's
    default already; AMP's two precisions in one row where they print alike (`printed`) on
    the same backend."""
    rows: list[dict[str, Any]] = []
    for row in ranked:
        held = row["reserved_saving_bytes"] if row["reserved"] is not None \
            else row["saving_bytes"]
        if row["in_baseline"] or held <= 0:
            continue
        twin = next((r for r in rows if r["anchor"] == row["anchor"] == "amp"
                     and r["backend"] == row["backend"]
                     and printed(r["peak"], r["saving"]) == printed(row["peak"], row["saving"])),
                    None)
        if twin is not None:
            twin["ids"].append(row["id"])
        else:
            rows.append({**row, "ids": [row["id"]]})
    return rows


def four_figures(result: Result | None) -> dict[str, Any] | None:
    """The four figures a step's memory goes by, from the tensors up to what `nvidia-smi`
    shows, for a result that simulated the CUDA allocator, and what each adds to the one
    before: the allocator's block rounding and its cuBLAS workspaces, the freed blocks it
    keeps cached, the CUDA context. Where a figure is below the one before (the peaks are
    moments of their own), the step says so instead of a gap ("below")."""
    allocator = (result or {}).get("allocator")
    if not allocator or not allocator.get("context_bytes"):
        return None
    tensors, allocated = result["peak_bytes"], allocator["peak_allocated_bytes"]
    reserved = allocator["peak_reserved_bytes"]
    low, high = allocator["context_bytes"]
    workspaces = allocator["workspace_bytes"]
    return {"result": result, "gpu": allocator.get("gpu") or ASSUMED,
            "tensors": tensors, "allocated": allocated, "reserved": reserved,
            "smi": nvidia_smi_bytes(allocator), "context": (low, high),
            "workspaces": workspaces,
            # what allocating adds beyond the workspaces: 512-byte blocks, remainders kept
            "rounding": allocated - tensors - workspaces,
            "allocated_below": allocated < tensors + workspaces,
            "cached": reserved - allocated, "reserved_below": reserved < allocated}


def small_batch(all_results: list[Result]) -> dict[str, Any] | None:
    """The article's model at the smallest batch run for real in FP32 and AMP alike, on one
    device: there AMP's copies can outweigh the activations it halves. Those runs' peaks,
    and the estimates for CUDA at the same batch."""
    real: dict[tuple[int, str], dict[str, Result]] = {}
    for result in analysis.usable(all_results):
        exp = result["experiment"]
        if result["backend"] == "estimate" or not is_plain_step(exp) or any(
                exp[k] != v for k, v in ARTICLE.items() if k != "batch_size"):
            continue
        real.setdefault((exp["batch_size"], result["backend"]), {})[exp["precision"]] = result
    # the smallest batch first; at one batch a GPU's runs before the CPU's
    for (batch, _), runs in sorted(real.items(), key=lambda kv: (kv[0][0], kv[0][1] != "cuda")):
        amp = next((p for p in ("amp-bf16", "amp-fp16") if p in runs), None)
        if "fp32" not in runs or amp is None:
            continue
        estimates = analysis.best_by_precision(all_results, **{**ARTICLE, "batch_size": batch})
        estimated = {p: r["peak_bytes"] for p, r in estimates.items()
                     if r["backend"] == "estimate"}
        return {"batch_size": batch, "precision": amp, "real": runs["fp32"],
                "fp32": runs["fp32"]["peak_bytes"], "amp": runs[amp]["peak_bytes"],
                "change": runs[amp]["peak_bytes"] / runs["fp32"]["peak_bytes"] - 1,
                "copies": runs[amp]["live_at_peak_bytes"]["autocast_copies"],
                "activations_saved": runs["fp32"]["live_at_peak_bytes"]["activations"]
                - runs[amp]["live_at_peak_bytes"]["activations"],
                "estimate": ({"fp32": estimated["fp32"], "amp": estimated[amp]}
                             if "fp32" in estimated and amp in estimated else None)}
    return None


def headline(article: dict[str, Result]) -> dict[str, Any] | None:
    """The home page's answer: the FP32 peak, what dominates it, what AMP saves."""
    fp32 = article.get("fp32")
    if fp32 is None:
        return None
    live = fp32["live_at_peak_bytes"]
    ranked = sorted(live, key=live.get, reverse=True)
    found: dict[str, Any] = {
        "fp32_peak": fp32["peak_bytes"],
        "fp32_reserved": (fp32.get("allocator") or {}).get("peak_reserved_bytes"),
        "largest": ranked[0],
        "largest_share": live[ranked[0]] / fp32["peak_bytes"],
        "second": ranked[1],
        "second_share": live[ranked[1]] / fp32["peak_bytes"],
        "model_state": sum(live[c] for c in ("parameters", "gradients", "optimizer_state")),
        "backend": fp32["backend"],
        "savings": {},
    }
    for precision in ("amp-fp16", "amp-bf16"):
        if precision in article:
            amp = article[precision]
            reserved = [(r.get("allocator") or {}).get("peak_reserved_bytes")
                        for r in (fp32, amp)]
            found["savings"][precision] = {
                "peak": amp["peak_bytes"],
                "saving": analysis.saving(fp32["peak_bytes"], amp["peak_bytes"]),
                "activation_saving": analysis.saving(live["activations"],
                                                     amp["live_at_peak_bytes"]["activations"]),
                # what runs out: the reserved peak, where the allocator was simulated
                "reserved": reserved[1],
                "reserved_saving": analysis.saving(*reserved) if None not in reserved
                else None,
            }
    found["saving_groups"] = saving_groups(article, found["savings"])
    return found


def saving_groups(article: dict[str, Result], savings: dict[str, dict[str, Any]]
                  ) -> list[dict[str, Any]]:
    """The AMP savings, one entry per distinct figure: fp16 and bf16 whose figures print
    alike (`printed`) on the same backend are said once ("AMP fp16 or AMP bf16 ...")."""
    def figures(s: dict[str, Any]) -> tuple:
        return printed(s["peak"], s["saving"], s["activation_saving"]) + \
            (printed(s["reserved"], s["reserved_saving"]) if s["reserved"] else ())

    groups: list[dict[str, Any]] = []
    for precision, saving in savings.items():
        backend = article[precision]["backend"]
        same = next((g for g in groups if figures(g["figures"]) == figures(saving)
                     and g["backend"] == backend), None)
        if same:
            same["precisions"].append(precision)
        else:
            groups.append({"precisions": [precision], "figures": saving, "backend": backend,
                           "result": article[precision]})
    return groups


def cuda_overhead(all_results: list[Result]) -> list[dict[str, Any]]:
    """What only a CUDA run sees: the allocator's cached-but-unused bytes and the context.
    The published runs' steps measured on a GPU are the accuracy page's."""
    rows = []
    for result in analysis.usable(analysis.beside_published(all_results)):
        truth = result.get("ground_truth") or {}
        if result["backend"] == "cuda" and "context_bytes" in truth:
            rows.append({"result": result, "allocated": truth["peak_bytes"],
                         "reserved": truth["max_reserved_bytes"],
                         "overhead": truth["allocator_overhead_bytes"],
                         "context": truth["context_bytes"]})
    return rows


def parameter_underflow(studies: list[dict[str, Any]]) -> float | None:
    """The share of a real model's parameter gradients that leave fp16's normal range when
    cast straight to fp16 (the underflow study), or None where it was not measured."""
    for study in studies:
        if study["study"]["kind"] == "underflow" and not study.get("error"):
            groups = {g["name"]: g for g in study["data"]["groups"]}
            cast = groups.get("parameters", {}).get("casts", {}).get("fp16")
            if cast:
                return cast["zero_fraction"] + cast["subnormal_fraction"]
    return None
