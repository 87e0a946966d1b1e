"""Everything the pages print, computed once from the results for both languages.

Templates receive this dictionary (plus per-language tables and figures) and only place its
values: no template computes a figure.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from generator.experiment import is_plain_step
from generator.gpus import ASSUMED, CATALOGUE, nvidia_smi_bytes
from generator.results.shapes import StepResult
from generator.site import derived
from generator.site.derived import ARTICLE
from generator.site import lever_results
from generator.site.pages.article import relations
from generator.site.pages.article.claims import RULES, check_claims
from generator.site.pages.article.snippet import in_language
from generator.site.templating import kind
from generator.words import LANGS, Words

Result = StepResult


def site_data(all_results: list[Result], studies: list[dict[str, Any]],
              snippet: str) -> dict[str, Any]:
    article = derived.best_by_precision(all_results, **ARTICLE)
    facts = derived.torch_facts(studies)
    lever_rows = lever_results.context(all_results, studies) or {}
    checks = derived.estimate_accuracy(all_results)
    formula = {p: derived.formula_check(r) for p, r in article.items()}
    shown, twin = relations.shown_precisions(
        article, {p: relations.formula_row(check) for p, check in formula.items()})
    claims = check_claims(article, facts, parameter_underflow(studies))
    by_id = lever_rows.get("by_id", {})
    found_small = small_batch(all_results)
    parity = derived.hf_parity(all_results)
    return {
        "article": ARTICLE,
        "article_results": article,
        # what the pages chart and tabulate: AMP bf16 beside AMP fp16 only where they differ
        "shown_results": shown,
        "twins": twin,
        "fp32": article.get("fp32"),
        "headline": headline(article),
        "small_batch": found_small,
        "small_batch_words": (relations.small_batch_words(found_small, kind)
                              if found_small else []),
        "relations": page_relations(article, claims, by_id),
        "formula": formula,
        # real runs beside their estimates: on the CPU, and on a GPU
        "accuracy": [r for r in checks if r["result"]["backend"] == "cpu"],
        "accuracy_gpu": [r for r in checks if r["result"]["backend"] == "cuda"],
        "cuda_overhead": cuda_overhead(all_results),
        "hf_parity": parity,
        # the same pairs as the methodology's table prints them: alike rows merged
        "hf_parity_rows": derived.parity_table(parity),
        "hf_parity_notes": derived.parity_notes(parity),
        # the CUDA context over the catalogue's generations: the least and the most
        "context_span": (min(gpu.context_bytes[0] for gpu in CATALOGUE),
                         max(gpu.context_bytes[1] for gpu in CATALOGUE)),
        "claims": claims,
        "claim_rules": RULES,
        "ranges": facts["formats"] if facts else [],
        # round to nearest: a value below half the smallest subnormal becomes zero
        "rounds_to_zero": {r["name"]: rounds_to_zero(r) for r in (facts["formats"] if facts
                                                                  else [])},
        # our own file, shown in a code fence that escapes it; its comments in each language
        "snippet": {lang: Markup(in_language(snippet, lang)) for lang in LANGS},
        "result_count": len(all_results),
        "failed": [r for r in all_results if r.get("error")],
        # the levers, each with its saving where it was run: the explainer lists them, the
        # home page ranks them
        "levers": {i: without_cost(row) for i, row in by_id.items()},
        "levers_ranked": [without_cost(row) for row in what_to_do(lever_rows.get("ranked", []))],
        # each lever's peak before and after, said as "the same" where it prints alike
        "lever_changes": {ident: relations.change(row["ref_peak"], row["peak"])
                          for ident, row in by_id.items()},
        "lever_names": lever_results.names(),
        "four_figures": four_figures(article.get("fp32")),
        # The studies behind the claims on formats and underflow, for the pages' data files.
        "sources": [s for s in (derived.first_study(studies, "torch_facts"),
                                derived.first_study(studies, "underflow")) if s],
    }


def without_cost(row: dict[str, Any]) -> dict[str, Any]:
    """A lever's row without its timing: the article's pages print no step time, so the runs
    that timed it are not among their data files."""
    row = {k: v for k, v in row.items() if k != "cost"}
    if isinstance(row.get("best_part"), dict):
        row["best_part"] = without_cost(row["best_part"])
    return row


def printed(peak_bytes: int, *shares: float) -> tuple:
    """A peak and shares as the pages print them: GiB to two places, shares to a tenth of a
    percent. Two precisions whose figures print alike are said once."""
    return (round(peak_bytes / 2**30, 2), *(round(share, 3) for share in shares))


def what_to_do(ranked: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The levers a reader can still pull, in the levers page's order (by the reserved peak
    they save, where the allocator is modelled): those that lower it and are not PyTorch's
    default already; AMP's two precisions in one row where they print alike (`printed`) on
    the same backend. `fine_tune`: the lever trains something else (the registry's kind
    "fine-tune": LoRA's adapters in place of the model's weights), not the same training
    with another memory setting; the home page lists it apart."""
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
            rows.append({**row, "ids": [row["id"]], "fine_tune": fine_tune(row["id"]),
                         "change": relations.change(row["ref_peak"], row["peak"]),
                         "reserved_change": relations.change(row["ref_reserved"],
                                                             row["reserved"])
                         if row["reserved"] is not None else None})
    return rows


def fine_tune(ident: str) -> bool:
    """Whether a lever of the levers page is another way to fine-tune (the registry's kind)."""
    return any(lever.kind == "fine-tune" for lever in lever_results.LEVERS.get(ident, ()))


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
    for result in derived.usable(all_results):
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
        estimates = derived.best_by_precision(all_results, **{**ARTICLE, "batch_size": batch})
        estimated = {p: r for p, r in estimates.items() if r["backend"] == "estimate"}
        found = {"batch_size": batch, "precision": amp, "real": runs["fp32"],
                 "sources": [runs["fp32"], runs[amp]],
                 "fp32": runs["fp32"]["peak_bytes"], "amp": runs[amp]["peak_bytes"],
                 "change": runs[amp]["peak_bytes"] / runs["fp32"]["peak_bytes"] - 1,
                 "copies": runs[amp]["live_at_peak_bytes"]["autocast_copies"],
                 "activations_saved": runs["fp32"]["live_at_peak_bytes"]["activations"]
                 - runs[amp]["live_at_peak_bytes"]["activations"],
                 # why the real FP32 peak and the estimate's may differ: the optimizer kernel
                 # PyTorch picks on each device, and the phase each peak lies in
                 "real_phase": lever_results.peak_phase(runs["fp32"]),
                 "real_kernel": lever_results.options(runs["fp32"])["optimizer_impl"],
                 "estimate": None}
        if "fp32" in estimated and amp in estimated:
            fp32_est, amp_est = estimated["fp32"], estimated[amp]
            found["sources"] += [fp32_est, amp_est]
            found["estimate"] = {
                "fp32": fp32_est["peak_bytes"], "amp": amp_est["peak_bytes"],
                "fp32_phase": lever_results.peak_phase(fp32_est),
                "amp_phase": lever_results.peak_phase(amp_est),
                "kernel": lever_results.options(fp32_est)["optimizer_impl"],
                "temporaries": fp32_est["live_at_peak_bytes"]["temporaries"]}
        return found
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
                "saving": derived.saving(fp32["peak_bytes"], amp["peak_bytes"]),
                "activation_saving": derived.saving(live["activations"],
                                                     amp["live_at_peak_bytes"]["activations"]),
                # what runs out: the reserved peak, where the allocator was simulated
                "reserved": reserved[1],
                "reserved_saving": derived.saving(*reserved) if None not in reserved
                else None,
                # lower, the same or higher, as printed: the sentence follows
                "change": relations.change(fp32["peak_bytes"], amp["peak_bytes"]),
                "reserved_change": relations.change(*reserved) if None not in reserved
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


def page_relations(article: dict[str, Result], claims: list[dict[str, Any]],
                   lever_rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The relations the explainer, the home page and the claims page assert, checked on
    the example's results, its claims and its levers (relations.py)."""
    fp32 = article.get("fp32")
    amp = article.get("amp-fp16") or article.get("amp-bf16")
    found: dict[str, Any] = {}
    if fp32:
        live = fp32["live_at_peak_bytes"]
        found["peak_moment"] = relations.peak_moment(fp32, lever_results.peak_phase(fp32))
        found["adds_up"] = relations.adds_up(fp32)
        found["temporaries_vs_state"] = relations.compared(live["temporaries"],
                                                           live["optimizer_state"])
    if fp32 and amp:
        outside = "(outside modules)"
        found["loss_saves"] = relations.compared(
            amp["module_activation_bytes"].get(outside, 0),
            fp32["module_activation_bytes"].get(outside, 0))
        found["temporaries"] = relations.compared(amp["live_at_peak_bytes"]["temporaries"],
                                                  fp32["live_at_peak_bytes"]["temporaries"])
        found["amp_keeps"] = relations.amp_keeps(fp32, amp)
        found["activations_below_half"] = relations.below_half(
            fp32["live_at_peak_bytes"]["activations"], amp["live_at_peak_bytes"]["activations"])
        formula = derived.formula_check(amp)
        if formula:
            found["formula_gap"] = relations.formula_gap(formula, amp["experiment"],
                                                         amp["architecture"])
    fp32_formula = derived.formula_check(fp32) if fp32 else None
    if fp32_formula:
        found["formula_matches"] = relations.formula_matches(fp32_formula["error"])
    if "amp-fp16" in article and "amp-bf16" in article:
        found["fp16_bf16_same"] = relations.alike(article["amp-fp16"]["peak_bytes"],
                                                  article["amp-bf16"]["peak_bytes"])
    values = {c["id"]: c["values"] for c in claims}
    if "fp32_total" in values and "activations_12gb" in values:
        found["total_gap"] = relations.total_gap(values["fp32_total"],
                                                 values["activations_12gb"])
    found["loss_beside_amp"] = relations.loss_beside_amp(
        lever_rows.get("masked-logits"), lever_rows.get("amp-bf16") or lever_rows.get("amp-fp16"))
    return found


def cuda_overhead(all_results: list[Result]) -> list[dict[str, Any]]:
    """What only a CUDA run sees: the allocator's cached-but-unused bytes and the context.
    The published runs' steps measured on a GPU are the accuracy page's."""
    rows = []
    for result in derived.usable(derived.beside_published(all_results)):
        truth = result.get("ground_truth") or {}
        if result["backend"] == "cuda" and "context_bytes" in truth:
            rows.append({"result": result, "allocated": truth["peak_bytes"],
                         "reserved": truth["max_reserved_bytes"],
                         "overhead": truth["allocator_overhead_bytes"],
                         "context": truth["context_bytes"]})
    return rows


def parameter_underflow(studies: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The share of a real model's parameter gradients that leave fp16's normal range when
    cast straight to fp16 (the underflow study), and what kind of number it is (the study's
    backend: "measured on the CPU"), or None where it was not measured."""
    for study in studies:
        if study["study"]["kind"] == "underflow" and not study.get("error"):
            groups = {g["name"]: g for g in study["data"]["groups"]}
            cast = groups.get("parameters", {}).get("casts", {}).get("fp16")
            if cast:
                ran = {"backend": study["study"]["backend"],
                       "environment": study.get("environment") or {}}
                return {"share": cast["zero_fraction"] + cast["subnormal_fraction"],
                        "kind": Words(kind(ran, "en"), kind(ran, "zh"))}
    return None


def rounds_to_zero(format_row: dict[str, Any]) -> float:
    """Below what magnitude a value cast to this format becomes zero: half its smallest
    subnormal, under round-to-nearest (IEEE 754's default, and PyTorch's casts)."""
    return format_row["smallest_subnormal"] / 2
