"""The source article's claims about BERT-base (batch 32, sequence 128, Adam), each checked
against results: the measured figures and a verdict. The wording lives in the templates;
this module decides, so that a verdict changes when the measurements do."""

from __future__ import annotations

from typing import Any

from generator.results.notes import ident as notes_ident
from generator.results.shapes import StepResult

Result = StepResult
GB = 10**9  # the article writes GB and MB; it means decimal or binary loosely, we use decimal
HOLDS, PARTLY, FAILS, UNMEASURED = "holds", "partly", "does_not_hold", "not_measured"
OUTDATED = "outdated"  # true when the article was written, no longer
#: The one rule set, applied here and printed on the claims page: a measured quantity (a size,
#: a saving, a ratio) against the article's holds within HOLDS_WITHIN of it, holds partly
#: within a factor of PARTLY_FACTOR, and does not hold further off.
HOLDS_WITHIN = 0.15
PARTLY_FACTOR = 1.5
RULES = {"holds_within": HOLDS_WITHIN, "partly_factor": PARTLY_FACTOR}


def judge(measured: float, claimed: float) -> str:
    """The verdict of RULES for a measured quantity against the article's."""
    ratio, slack = measured / claimed, 1e-12  # slack: 0.85 is 15 % off, in floating point too
    if abs(ratio - 1) <= HOLDS_WITHIN + slack:
        return HOLDS
    return PARTLY if 1 / PARTLY_FACTOR - slack <= ratio <= PARTLY_FACTOR + slack else FAILS


def judge_both(first: str, second: str) -> str:
    """A claim of two parts (a size and a property): holds if both do, partly if one does."""
    held = [first, second].count(HOLDS)
    return HOLDS if held == 2 else (PARTLY if held or PARTLY in (first, second) else FAILS)


def check_claims(article: dict[str, Result], facts: dict[str, Any] | None,
                 underflow: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One entry per claim: id, verdict, the figures behind it, and where the evidence is.
    `facts`: what the measuring PyTorch said of its formats and API (derived.torch_facts);
    `underflow`: the share of real parameter gradients that fp16 cannot hold as normal
    numbers (the underflow study), where measured, with the kind of number it is
    (context.parameter_underflow)."""
    fp32, fp16 = article.get("fp32"), article.get("amp-fp16")
    claims: list[dict[str, Any]] = []

    def add(claim_id: str, verdict: str, evidence: str, **values: Any) -> None:
        claims.append({"id": claim_id, "verdict": verdict, "evidence": evidence, "values": values})

    if fp32:
        live, maxima = fp32["live_at_peak_bytes"], fp32["category_max_bytes"]
        add("parameters_size", judge(maxima["parameters"], 0.42 * GB),
            "explainer.md#the-residents", measured=maxima["parameters"], claimed=0.42 * GB,
            count=fp32["parameter_count"])
        adam = maxima["optimizer_state"] / maxima["parameters"] if maxima["parameters"] else 0
        add("adam_state", judge(adam, 2), "explainer.md#the-residents",
            measured=maxima["optimizer_state"], ratio=adam, **step_counters(fp32))
        share = live["activations"] / fp32["peak_bytes"]
        add("activations_12gb", judge(live["activations"], 12 * GB),
            "explainer.md#item-by-item", measured=live["activations"], claimed=12 * GB,
            share=share, claimed_share=0.88)
        add("fp32_total", judge(fp32["peak_bytes"], 13.7 * GB),
            "explainer.md#item-by-item", measured=fp32["peak_bytes"], claimed=13.7 * GB,
            sum_of_maxima=sum(maxima.values()))
    if fp32 and fp16:
        saving = 1 - fp16["peak_bytes"] / fp32["peak_bytes"]
        add("amp_total", judge(saving, 0.45), "explainer.md#what-amp-saves",
            measured=fp16["peak_bytes"], claimed=7.5 * GB, saving=saving, claimed_saving=0.45)
        act_fp32, act_amp = (r["live_at_peak_bytes"]["activations"] for r in (fp32, fp16))
        act = 1 - act_amp / act_fp32
        add("activations_halve", judge(act, 0.5), "explainer.md#what-amp-saves", saving=act,
            fp32=fp32["live_at_peak_bytes"]["activations"],
            amp=fp16["live_at_peak_bytes"]["activations"])
        grads_fp32 = fp32["category_max_bytes"]["gradients"]
        grads_amp = fp16["category_max_bytes"]["gradients"]
        add("fp16_gradients", judge(grads_amp, grads_fp32 / 2),
            "explainer.md#what-amp-saves", fp32=grads_fp32, amp=grads_amp)
        copies = fp16["category_max_bytes"]["autocast_copies"]
        persistent = _bytes_at_step_edges(fp16, "autocast_copies")
        verdict = judge_both(judge(copies, 0.21 * GB) if copies else FAILS,
                             HOLDS if persistent else FAILS)
        add("persistent_fp16_copy", verdict, "explainer.md#memory-flow", measured=copies,
            at_step_edges=persistent, claimed=0.21 * GB)
    if facts:
        # A range is fairly measured in decades (largest / smallest normal value, as a power
        # of ten), not by the ratio of the largest values (about 1.9e-34).
        f16, f32 = facts["by_name"]["fp16"], facts["by_name"]["fp32"]
        ratio = f16["decades"] / f32["decades"]
        add("fp16_range", judge(ratio, 1 / 16), "explainer.md#costs", ratio=ratio,
            fp16_decades=f16["decades"], fp32_decades=f32["decades"],
            max_ratio=f16["max"] / f32["max"],
            underflow=underflow["share"] if underflow else None,
            underflow_kind=underflow["kind"] if underflow else None)
    verdict, values = _cast_cost(article)
    add("cast_is_free", verdict, "explainer.md#costs", **values)
    # Without the torch_facts study there is no evidence for the next claims: not listed.
    # The article imports autocast and GradScaler from torch.cuda.amp, which PyTorch now
    # deprecates in favour of torch.amp: whether the measuring PyTorch warned so.
    if facts:
        add("cuda_amp_api", OUTDATED if facts["cuda_amp_deprecated"] else HOLDS,
            "explainer.md#code", torch=facts["torch"])
    return claims


def step_counters(result: Result) -> dict[str, Any]:
    """Where Adam's one-number step count per parameter tensor is: torch.optim keeps it in a
    CPU tensor unless the optimizer is capturable or fused, foreach or not (adam.py's
    `_init_group`), and an estimate for CUDA records that it left it out of GPU memory (the
    note `optimizer_state_on_host`). `beyond_two`: the optimizer state's bytes beyond twice
    the parameters'."""
    maxima = result["category_max_bytes"]
    notes = result.get("notes") or ()
    return {"on_host": any(notes_ident(n) == "optimizer_state_on_host" for n in notes),
            "beyond_two": maxima["optimizer_state"] - 2 * maxima["parameters"],
            "device": result["experiment"]["device"]}


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
