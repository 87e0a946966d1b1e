"""The source article's claims about BERT-base (batch 32, sequence 128, Adam), each checked
against results: the measured figures and a verdict. The wording lives in the templates;
this module decides, so that a verdict changes when the measurements do."""

from __future__ import annotations

from typing import Any

from generator.results.shapes import StepResult

Result = StepResult
GB = 10**9  # the article writes GB and MB; it means decimal or binary loosely, we use decimal
HOLDS, PARTLY, FAILS, UNMEASURED = "holds", "partly", "does_not_hold", "not_measured"


def _size_verdict(measured: float, claimed: float) -> str:
    """Within 15 % holds; within a factor of 1.5 partly; beyond that it does not hold."""
    ratio = measured / claimed
    if abs(ratio - 1) <= 0.15:
        return HOLDS
    return PARTLY if 1 / 1.5 <= ratio <= 1.5 else FAILS


def check_claims(article: dict[str, Result], facts: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One entry per claim: id, verdict, the figures behind it, and where the evidence is.
    `facts`: what the measuring PyTorch said of its formats and API (analysis.torch_facts)."""
    fp32, fp16 = article.get("fp32"), article.get("amp-fp16")
    claims: list[dict[str, Any]] = []

    def add(claim_id: str, verdict: str, evidence: str, **values: Any) -> None:
        claims.append({"id": claim_id, "verdict": verdict, "evidence": evidence, "values": values})

    if fp32:
        live, maxima = fp32["live_at_peak_bytes"], fp32["category_max_bytes"]
        add("parameters_size", _size_verdict(maxima["parameters"], 0.42 * GB),
            "explainer.md#the-residents", measured=maxima["parameters"], claimed=0.42 * GB,
            count=fp32["parameter_count"])
        adam = maxima["optimizer_state"] / maxima["parameters"] if maxima["parameters"] else 0
        add("adam_state", HOLDS if abs(adam - 2) < 0.01 else FAILS, "explainer.md#the-residents",
            measured=maxima["optimizer_state"], ratio=adam)
        share = live["activations"] / fp32["peak_bytes"]
        add("activations_12gb", _size_verdict(live["activations"], 12 * GB),
            "explainer.md#item-by-item", measured=live["activations"], claimed=12 * GB,
            share=share, claimed_share=0.88)
        add("fp32_total", _size_verdict(fp32["peak_bytes"], 13.7 * GB),
            "explainer.md#item-by-item", measured=fp32["peak_bytes"], claimed=13.7 * GB,
            sum_of_maxima=sum(maxima.values()))
    if fp32 and fp16:
        saving = 1 - fp16["peak_bytes"] / fp32["peak_bytes"]
        verdict = HOLDS if abs(saving - 0.45) <= 0.10 else (PARTLY if saving > 0.1 else FAILS)
        add("amp_total", verdict, "explainer.md#what-amp-saves", measured=fp16["peak_bytes"],
            claimed=7.5 * GB, saving=saving, claimed_saving=0.45)
        act = 1 - fp16["live_at_peak_bytes"]["activations"] / fp32["live_at_peak_bytes"]["activations"]
        verdict = HOLDS if 0.45 <= act <= 0.55 else (PARTLY if act >= 0.2 else FAILS)
        add("activations_halve", verdict, "explainer.md#what-amp-saves", saving=act,
            fp32=fp32["live_at_peak_bytes"]["activations"],
            amp=fp16["live_at_peak_bytes"]["activations"])
        grads_fp32 = fp32["category_max_bytes"]["gradients"]
        grads_amp = fp16["category_max_bytes"]["gradients"]
        add("fp16_gradients", HOLDS if grads_amp <= 0.55 * grads_fp32 else FAILS,
            "explainer.md#what-amp-saves", fp32=grads_fp32, amp=grads_amp)
        copies = fp16["category_max_bytes"]["autocast_copies"]
        persistent = _bytes_at_step_edges(fp16, "autocast_copies")
        verdict = HOLDS if copies and persistent else (PARTLY if copies else FAILS)
        add("persistent_fp16_copy", verdict, "explainer.md#memory-flow", measured=copies,
            at_step_edges=persistent, claimed=0.21 * GB)
    if facts:
        formats = facts["by_name"]
        # fp16's largest value over fp32's: the article's '1/16 of the range', measured.
        ratio = formats["fp16"]["max"] / formats["fp32"]["max"]
        add("fp16_range", HOLDS if abs(ratio - 1 / 16) < 0.01 else FAILS, "explainer.md#costs",
            ratio=ratio)
    verdict, values = _cast_cost(article)
    add("cast_is_free", verdict, "explainer.md#costs", **values)
    # Without the torch_facts study there is no evidence for the next claims: not listed.
    # The article imports autocast and GradScaler from torch.cuda.amp, which PyTorch now
    # deprecates in favour of torch.amp: whether the measuring PyTorch warned so.
    if facts:
        add("cuda_amp_api", PARTLY if facts["cuda_amp_deprecated"] else HOLDS,
            "explainer.md#code", torch=facts["torch"])
    return claims


def _bytes_at_step_edges(result: Result, category: str) -> int:
    """Bytes of `category` live when the step starts and when it ends: what persists."""
    series = result["timeline"]["bytes"][category]
    return max(series[0], series[-1]) if series else 0


def _cast_cost(article: dict[str, Result]) -> tuple[str, dict[str, Any]]:
    """Time needs a GPU: only `cuda` results can say whether AMP's casts cost little. Memory
    can be said anywhere: the autocast copies are the casts' price in bytes."""
    fp32, fp16 = article.get("fp32"), article.get("amp-fp16")
    copies = fp16["category_max_bytes"]["autocast_copies"] if fp16 else None
    if fp32 and fp16 and fp32["backend"] == fp16["backend"] == "cuda" \
            and fp32.get("step_seconds") and fp16.get("step_seconds"):
        speedup = fp32["step_seconds"] / fp16["step_seconds"]
        return HOLDS if speedup >= 1 else PARTLY, {"speedup": speedup, "copies": copies}
    return UNMEASURED, {"copies": copies}
