"""The levers page: what each memory lever beyond AMP saves on the article's example, which
category it acts on, and what it costs in step time. The levers are the registry's
(generator/plan/levers.py), the ones `estimate --levers` and the API try.

A lever is a change of experiment options against a reference (the registry's `against`,
else the baseline's values of the same fields). Savings compare two results of the article's
example on one machine that differ only by the lever, on the reserved peak (what runs out,
where the allocator is modelled) beside the tensors' peak: a CUDA pair where one exists, else
the estimate for CUDA. Costs compare the step times of two real runs that differ only by the
lever, in whatever configuration they exist: CUDA first, then the CPU.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from markupsafe import Markup

from generator.experiment import Experiment, as_held, options
from generator.experiment.option import NOT_A_LEVER, resolved_optimizer_impl
from generator.plan.levers import BY_ID, Lever
from generator.results.shapes import StepResult, result_trust
from generator.site import analysis
from generator.site.analysis import ARTICLE
from generator.site.pages import Page
from generator.site.pages.levers import charts as lever_charts
from generator.site.pages.levers import tables as lever_tables
from generator.words import Words

Result = StepResult
PAGES = (Page("levers.md", "levers/levers", nav=30),)
#: The page's baseline: the article's step with the kernels PyTorch picks on CUDA (each
#: option's declared `lever` value).
BASELINE: dict[str, Any] = {name: opt.lever for name, opt in options().items()
                            if opt.lever is not NOT_A_LEVER}
#: The same, as an experiment the registry's levers apply to.
BASELINE_STEP = Experiment(model=ARTICLE["model"], batch_size=ARTICLE["batch_size"],
                           seq_len=ARTICLE["seq_len"], **BASELINE)
#: The levers the page measures, by the page's ids (its sections' anchors): the registry's,
#: as the levers suite applies them to the article's example.
LEVERS: dict[str, tuple[Lever, ...]] = {
    **{name: (BY_ID[name],) for name in ("checkpointing", "sdpa", "amp-bf16", "amp-fp16",
                                          "sgd", "set-to-none", "fused", "for-loop")},
    "accumulation": (BY_ID["accumulation-x4"],),
    "masked-logits": (BY_ID["masked-logits"],),
    "adamw-8bit": (BY_ID["adamw-8bit"],),
    # PEFT's default modules for BERT, whose names the built-in BERT shares
    "lora": (replace(BY_ID["lora"], changes={**BY_ID["lora"].changes,
                                             "lora_targets": ("query", "value")}),),
}
#: The section of the levers page that explains a lever, where it is not the lever's id.
SECTIONS = {"amp-bf16": "amp", "amp-fp16": "amp", "for-loop": "fused"}
COMBOS: dict[str, tuple[Lever, ...]] = {
    "amp-bf16+sdpa": (BY_ID["amp-bf16"], BY_ID["sdpa"]),
    "amp-bf16+sdpa+checkpointing": (BY_ID["amp-bf16"], BY_ID["sdpa"], BY_ID["checkpointing"]),
}


def names() -> dict[str, Words]:
    """Each lever's name (combinations: their parts'), the registry's words on the example."""
    return {ident: Words(*(" + ".join(lever.title(BASELINE_STEP, lang) for lever in levers)
                           for lang in ("en", "zh")))
            for ident, levers in {**LEVERS, **COMBOS}.items()}


def use(levers: tuple[Lever, ...]) -> dict[str, Any]:
    """The options the levers set on the example."""
    changed = levers[0].apply(BASELINE_STEP, *levers[1:])
    found = {name: as_held(getattr(changed, name)) for lever in levers for name in lever.changes}
    if "optimizer_impl" in found:  # as `options` reads a result: "auto" is PyTorch's pick
        found["optimizer_impl"] = resolved_optimizer_impl(found["optimizer_impl"], changed.device)
    return found


def reference(levers: tuple[Lever, ...]) -> dict[str, Any]:
    """What the levers are compared against: the registry's `against` where a lever is a
    default already, else the baseline's values of the fields they set."""
    against = {k: v for lever in levers for k, v in lever.against.items()}
    return against or {name: BASELINE[name] for name in use(levers)}


def in_baseline(levers: tuple[Lever, ...]) -> bool:
    """Already part of the baseline (a PyTorch default): measured against its opposite."""
    return all(BASELINE[name] == value for name, value in use(levers).items())


def context(results: list[Result], studies: list[Result]) -> dict[str, Any] | None:
    found = _Index(results)
    rows = [row for row in (_row(found, ident, levers) for ident, levers in LEVERS.items())
            if row]
    if not rows:
        return None
    # Ranked on what runs out, the reserved peak, where every row has one; stable: ties keep
    # LEVERS' order
    by_reserved = all(row["reserved"] is not None for row in rows)
    held = "reserved_saving_bytes" if by_reserved else "saving_bytes"
    ranked = sorted(rows, key=lambda row: -row[held])
    for rank, row in enumerate(ranked, start=1):
        row["rank"] = rank
    combos = [row for row in (_row(found, ident, levers) for ident, levers in COMBOS.items())
              if row]
    by_id = {row["id"]: row for row in rows + combos}
    for row in combos:
        parts = [by_id[ident] for ident, levers in LEVERS.items() if ident in by_id and not
                 in_baseline(levers) and use(levers).items() <= row["use"].items()]
        lowest = "reserved" if by_reserved else "peak"
        row["best_part"] = min(parts, key=lambda part: part[lowest]) if parts else None
        row["below_best_part"] = row["best_part"]["peak"] - row["peak"] if parts else None
        row["below_best_part_reserved"] = (row["best_part"]["reserved"] - row["reserved"]
                                           if parts and by_reserved else None)
    baseline = min(rows, key=lambda row: result_trust(row["result"]))["baseline"]
    return {"baseline": baseline, "baseline_peak": baseline["peak_bytes"],
            "baseline_reserved": _reserved(baseline), "by_reserved": by_reserved,
            "ranked": ranked, "combos": combos, "by_id": by_id,
            "names": {**names(), **lever_tables.LABELS},
            "costs": [row for row in ranked + combos if row["cost"]],
            "unmeasured": [row for row in ranked + combos if not row["cost"]],
            "missing": [ident for ident in LEVERS if ident not in by_id],
            "backends": [b for _, b in sorted({(result_trust(row["result"]), row["backend"])
                                               for row in ranked + combos})]}


def figures(ctx: dict[str, Any], lang: str) -> dict[str, str]:
    return {"levers-peaks": lever_charts.peaks(ctx, lang)}


def tables(ctx: dict[str, Any], lang: str) -> dict[str, Markup]:
    names, by_reserved = ctx["names"], ctx["by_reserved"]
    found = {"levers-ranking": lever_tables.ranking(ctx["ranked"], names, lang, by_reserved),
             "levers-costs": lever_tables.costs(ctx["costs"], names, lang)}
    if ctx["combos"]:
        found["levers-combos"] = lever_tables.combos(ctx["combos"], names, lang, by_reserved)
    return found


def options(result: Result) -> dict[str, Any]:
    """The options that levers change, with "auto" kernels resolved to what PyTorch picks on
    the device: foreach on CUDA, the for-loop on the CPU."""
    exp = result["experiment"]
    found = {name: as_held(exp[name]) for name in BASELINE}  # LoRA's targets: a tuple
    found["optimizer_impl"] = resolved_optimizer_impl(found["optimizer_impl"], exp["device"])
    return found


def phase_max(result: Result, phase: str, category: str | None = None) -> int | None:
    """The largest bytes (of one category, or in all) live during one phase: the result's
    exact phase maxima, or for older results its timeline, which keeps each stretch's highest
    point (what was live as the phase began counts: a fused optimizer step that allocates
    nothing still holds the parameters, gradients and state it began with); None for a
    result that records no phases."""
    exact = (result.get("phase_max_bytes") or {}).get(phase)
    if exact is not None:  # measured over the phase's whole interval (timeline.summarise)
        return exact[category or "total"]
    timeline = result["timeline"]
    starts = sorted((p["tick"], p["name"]) for p in result.get("phases") or [])
    begin = next((tick for tick, name in starts if name == phase), None)
    if begin is None:
        return None
    end = min((tick for tick, _ in starts if tick > begin), default=timeline["end_tick"] + 1)
    names = [category] if category else list(timeline["bytes"])
    ticks = timeline["tick"]
    before = [i for i, tick in enumerate(ticks) if tick < begin][-1:]
    inside = [i for i, tick in enumerate(ticks) if begin <= tick < end]
    return max((sum(timeline["bytes"][n][i] for n in names) for i in before + inside), default=0)


def peak_phase(result: Result) -> str | None:
    """The phase (forward, backward, optimizer) in which the step's peak lies."""
    timeline = result["timeline"]
    if not timeline["tick"]:
        return None
    totals = [sum(series[i] for series in timeline["bytes"].values())
              for i in range(len(timeline["tick"]))]
    at = timeline["tick"][totals.index(max(totals))]
    started = [p["name"] for p in sorted(result.get("phases") or [], key=lambda p: p["tick"])
               if p["tick"] <= at]
    return started[-1] if started else None


class _Index:
    """Usable results by their setting (model, batch, sequence, backend, device, machine)
    and their lever options."""

    def __init__(self, results: list[Result]) -> None:
        self.results: dict[tuple, Result] = {}
        for result in results:
            if result.get("error") or result["experiment"].get("gpu_memory") is not None:
                continue
            self.results.setdefault((_setting(result), _frozen(options(result))), result)

    def pairs(self, levers: tuple[Lever, ...], real: bool) -> list[tuple[Result, Result]]:
        """(reference, with the levers) pairs that differ only by the levers' options."""
        found = []
        for (setting, frozen), result in self.results.items():
            opts = dict(frozen)
            if any(opts[name] != value for name, value in use(levers).items()):
                continue
            if real and (result["backend"] == "estimate" or not result.get("step_seconds")):
                continue
            ref = self.results.get((setting, _frozen({**opts, **reference(levers)})))
            if ref is not None and (not real or ref.get("step_seconds")):
                found.append((ref, result))
        return found


def _row(found: _Index, ident: str, levers: tuple[Lever, ...]) -> dict[str, Any] | None:
    """A lever's saving on the article's example, and its measured cost if any."""
    plain = {**BASELINE, **use(levers)}
    pairs = [(ref, result) for ref, result in found.pairs(levers, real=False)
             if options(result) == plain and _is_article(result)]
    if not pairs:
        return None
    ref, result = min(pairs, key=lambda pair: (result_trust(pair[1]), _setting(pair[1])))
    default = in_baseline(levers)
    baseline = result if default else ref
    category = levers[0].acts_on if len(levers) == 1 else "activations"
    phase = levers[0].phase if len(levers) == 1 else None
    if phase:
        before, after = (phase_max(r, phase, category) for r in (ref, result))
        phase_peaks = [phase_max(r, phase) for r in (ref, result)]
    else:
        before, after = (r["live_at_peak_bytes"][category] for r in (ref, result))
        phase_peaks = None
    live = result["live_at_peak_bytes"]
    reserved = [_reserved(r) for r in (ref, result)]
    both = None not in reserved
    return {"id": ident, "anchor": SECTIONS.get(ident, ident),
            "use": use(levers), "category": category,
            "phase": phase, "in_baseline": default,
            "ref": ref, "result": result, "baseline": baseline,
            "other": ref if default else result,
            "backend": result["backend"], "machine": result["environment"]["machine_id"],
            "ref_peak": ref["peak_bytes"], "peak": result["peak_bytes"],
            "saving_bytes": ref["peak_bytes"] - result["peak_bytes"],
            "saving": analysis.saving(ref["peak_bytes"], result["peak_bytes"]),
            # what runs out: the reserved peak, where the allocator is modelled or measured
            "ref_reserved": reserved[0], "reserved": reserved[1],
            "reserved_saving_bytes": reserved[0] - reserved[1] if both else None,
            "reserved_saving": analysis.saving(*reserved) if both else None,
            "category_before": before, "category_after": after,
            "category_saving": analysis.saving(before, after) if before is not None else None,
            "peak_phase": peak_phase(ref),
            "phase_peak_before": phase_peaks[0] if phase_peaks else None,
            "phase_peak_after": phase_peaks[1] if phase_peaks else None,
            "largest": max(live, key=live.get),
            "micro_batches": result["experiment"]["micro_batches"],
            "micro_batch": result["experiment"]["batch_size"] // result["experiment"]["micro_batches"],
            "cost": _cost(found, levers)}


def _reserved(result: Result) -> int | None:
    """The reserved peak: a GPU run's over its untracked steps, or the estimate's simulated
    allocator's; None on the CPU."""
    truth = result.get("ground_truth") or {}
    if result["backend"] == "cuda":
        return truth.get("steps_max_reserved_bytes", truth.get("max_reserved_bytes"))
    return (result.get("allocator") or {}).get("peak_reserved_bytes")


def _cost(found: _Index, levers: tuple[Lever, ...]) -> dict[str, Any] | None:
    """Step time with the lever over step time without, from the closest real pair: a GPU
    before the CPU, the article's example before others, then the fewest other options
    changed from the baseline."""
    def distance(result: Result) -> int:
        opts = options(result)
        return sum(opts[name] != BASELINE[name] for name in BASELINE
                   if name not in use(levers))

    pairs = found.pairs(levers, real=True)
    if not pairs:
        return None
    ref, result = min(pairs, key=lambda pair: (
        result_trust(pair[1]), not _is_article(pair[1]), distance(pair[1]),
        _setting(pair[1])))
    exp = result["experiment"]
    ratio = result["step_seconds"] / ref["step_seconds"]
    return {"ratio": ratio, "change": ratio - 1,
            "ref_seconds": ref["step_seconds"], "seconds": result["step_seconds"],
            "ref_peak": ref["peak_bytes"], "peak": result["peak_bytes"],
            "peak_phase": peak_phase(ref),
            "backend": result["backend"], "machine": result["environment"]["machine_id"],
            "device_name": result["environment"].get("device_name"),
            "model": exp["model"], "batch_size": exp["batch_size"], "seq_len": exp["seq_len"],
            "cpu": result["environment"].get("cpu"),
            "cpu_count": result["environment"].get("cpu_count")}


def _setting(result: Result) -> tuple:
    exp = result["experiment"]
    return (exp["model"], exp["batch_size"], exp["seq_len"], exp["backend"], exp["device"],
            result["environment"]["machine_id"])


def _is_article(result: Result) -> bool:
    exp = result["experiment"]
    return all(exp[name] == ARTICLE[name] for name in ("model", "batch_size", "seq_len")) and \
        exp["device"] == "cuda"


def _frozen(opts: dict[str, Any]) -> tuple:
    return tuple(sorted(opts.items()))
