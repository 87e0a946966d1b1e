"""The levers page: what each memory lever beyond AMP saves on the article's example, which
category it acts on, and what it costs in step time.

A lever is a change of experiment options (`use`) against a reference (`ref`: by default the
baseline's values of the same fields). Savings compare two results of the article's example
on one machine that differ only by the lever: a CUDA pair where one exists, else the estimate
for CUDA. Costs compare the step times of two real runs that differ only by the lever, in
whatever configuration they exist: CUDA first, then the CPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from generator.experiment import as_held, options
from generator.experiment.option import NOT_A_LEVER, resolved_optimizer_impl
from generator.results.shapes import StepResult, result_trust
from generator.site import analysis
from generator.site.analysis import ARTICLE
from generator.site.pages import Page
from generator.site.pages.levers import charts as lever_charts
from generator.site.pages.levers import tables as lever_tables

Result = StepResult
PAGES = (Page("levers.md", "levers/levers", nav=30),)
#: The page's baseline: the article's step with the kernels PyTorch picks on CUDA (each
#: option's declared `lever` value).
BASELINE: dict[str, Any] = {name: opt.lever for name, opt in options().items()
                            if opt.lever is not NOT_A_LEVER}


@dataclass(frozen=True)
class Lever:
    """One lever (or several together): the options it sets and the category it acts on."""

    id: str
    use: dict[str, Any]
    category: str
    ref: dict[str, Any] = field(default_factory=dict)
    """The options it is compared against; the baseline's values of `use`'s fields if empty."""
    phase: str | None = None
    """None: it acts on the category live at the peak; "optimizer": on the category's own
    maximum during the optimizer step (where the peak may not be)."""

    @property
    def reference(self) -> dict[str, Any]:
        return self.ref or {name: BASELINE[name] for name in self.use}

    @property
    def in_baseline(self) -> bool:
        """Already part of the baseline (a PyTorch default): measured against its opposite."""
        return all(BASELINE[name] == value for name, value in self.use.items())


LEVERS = (
    Lever("checkpointing", {"checkpointing": True}, "activations"),
    Lever("sdpa", {"attention": "sdpa"}, "activations"),
    Lever("amp-bf16", {"precision": "amp-bf16"}, "activations"),
    Lever("amp-fp16", {"precision": "amp-fp16"}, "activations"),
    Lever("sgd", {"optimizer": "sgd"}, "optimizer_state"),
    Lever("set-to-none", {"zero_grad": "none"}, "gradients", ref={"zero_grad": "zeros"}),
    Lever("fused", {"optimizer_impl": "fused"}, "temporaries", phase="optimizer"),
    Lever("for-loop", {"optimizer_impl": "for-loop"}, "temporaries", phase="optimizer"),
    Lever("accumulation", {"micro_batches": 4}, "activations"),
    Lever("masked-logits", {"logits": "masked"}, "temporaries"),
    Lever("adamw-8bit", {"optimizer": "adamw-8bit"}, "optimizer_state"),
    # PEFT's default modules for BERT, whose names the built-in BERT shares
    Lever("lora", {"lora_rank": 16, "lora_targets": ("query", "value")}, "optimizer_state"),
)
#: The section of the levers page that explains a lever, where it is not the lever's id.
SECTIONS = {"amp-bf16": "amp", "amp-fp16": "amp", "for-loop": "fused"}
COMBOS = (
    Lever("amp-bf16+sdpa", {"precision": "amp-bf16", "attention": "sdpa"}, "activations"),
    Lever("amp-bf16+sdpa+checkpointing", {"precision": "amp-bf16", "attention": "sdpa",
                                          "checkpointing": True}, "activations"),
)


def context(results: list[Result], studies: list[Result]) -> dict[str, Any] | None:
    found = _Index(results)
    rows = [row for row in (_row(found, lever) for lever in LEVERS) if row]
    if not rows:
        return None
    ranked = sorted(rows, key=lambda row: -row["saving_bytes"])  # stable: ties keep LEVERS order
    for rank, row in enumerate(ranked, start=1):
        row["rank"] = rank
    combos = [row for row in (_row(found, lever) for lever in COMBOS) if row]
    by_id = {row["id"]: row for row in rows + combos}
    for row in combos:
        parts = [by_id[lever.id] for lever in LEVERS if lever.id in by_id and not
                 lever.in_baseline and lever.use.items() <= row["use"].items()]
        row["best_part"] = min(parts, key=lambda part: part["peak"]) if parts else None
        row["below_best_part"] = row["best_part"]["peak"] - row["peak"] if parts else None
    baseline = min(rows, key=lambda row: result_trust(row["result"]))["baseline"]
    return {"baseline": baseline, "baseline_peak": baseline["peak_bytes"],
            "ranked": ranked, "combos": combos, "by_id": by_id, "names": lever_tables.LABELS,
            "costs": [row for row in ranked + combos if row["cost"]],
            "unmeasured": [row for row in ranked + combos if not row["cost"]],
            "missing": [lever.id for lever in LEVERS if lever.id not in by_id],
            "backends": [b for _, b in sorted({(result_trust(row["result"]), row["backend"])
                                               for row in ranked + combos})]}


def figures(ctx: dict[str, Any], lang: str) -> dict[str, str]:
    return {"levers-peaks": lever_charts.peaks(ctx, lang)}


def tables(ctx: dict[str, Any], lang: str) -> dict[str, Markup]:
    found = {"levers-ranking": lever_tables.ranking(ctx["ranked"], lang),
             "levers-costs": lever_tables.costs(ctx["costs"], lang)}
    if ctx["combos"]:
        found["levers-combos"] = lever_tables.combos(ctx["combos"], lang)
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

    def pairs(self, lever: Lever, real: bool) -> list[tuple[Result, Result]]:
        """(reference, with the lever) pairs that differ only by the lever's options."""
        found = []
        for (setting, frozen), result in self.results.items():
            opts = dict(frozen)
            if any(opts[name] != value for name, value in lever.use.items()):
                continue
            if real and (result["backend"] == "estimate" or not result.get("step_seconds")):
                continue
            ref = self.results.get((setting, _frozen({**opts, **lever.reference})))
            if ref is not None and (not real or ref.get("step_seconds")):
                found.append((ref, result))
        return found


def _row(found: _Index, lever: Lever) -> dict[str, Any] | None:
    """A lever's saving on the article's example, and its measured cost if any."""
    plain = {**BASELINE, **lever.use}
    pairs = [(ref, result) for ref, result in found.pairs(lever, real=False)
             if options(result) == plain and _is_article(result)]
    if not pairs:
        return None
    ref, result = min(pairs, key=lambda pair: (result_trust(pair[1]), _setting(pair[1])))
    baseline = result if lever.in_baseline else ref
    if lever.phase:
        before, after = (phase_max(r, lever.phase, lever.category) for r in (ref, result))
        phase_peaks = [phase_max(r, lever.phase) for r in (ref, result)]
    else:
        before, after = (r["live_at_peak_bytes"][lever.category] for r in (ref, result))
        phase_peaks = None
    live = result["live_at_peak_bytes"]
    return {"id": lever.id, "anchor": SECTIONS.get(lever.id, lever.id),
            "use": lever.use, "category": lever.category,
            "phase": lever.phase, "in_baseline": lever.in_baseline,
            "ref": ref, "result": result, "baseline": baseline,
            "other": ref if lever.in_baseline else result,
            "backend": result["backend"], "machine": result["environment"]["machine_id"],
            "ref_peak": ref["peak_bytes"], "peak": result["peak_bytes"],
            "saving_bytes": ref["peak_bytes"] - result["peak_bytes"],
            "saving": analysis.saving(ref["peak_bytes"], result["peak_bytes"]),
            "category_before": before, "category_after": after,
            "category_saving": analysis.saving(before, after) if before is not None else None,
            "peak_phase": peak_phase(ref),
            "phase_peak_before": phase_peaks[0] if phase_peaks else None,
            "phase_peak_after": phase_peaks[1] if phase_peaks else None,
            "largest": max(live, key=live.get),
            "micro_batches": result["experiment"]["micro_batches"],
            "micro_batch": result["experiment"]["batch_size"] // result["experiment"]["micro_batches"],
            "cost": _cost(found, lever)}


def _cost(found: _Index, lever: Lever) -> dict[str, Any] | None:
    """Step time with the lever over step time without, from the closest real pair: a GPU
    before the CPU, the article's example before others, then the fewest other options
    changed from the baseline."""
    def distance(result: Result) -> int:
        opts = options(result)
        return sum(opts[name] != BASELINE[name] for name in BASELINE if name not in lever.use)

    pairs = found.pairs(lever, real=True)
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
