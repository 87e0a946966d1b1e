"""The levers measured: what each memory lever beyond AMP saves on the article's example, which
category it acts on, and what it costs in step time, ranked. The levers page prints all of it;
the article's pages rank the levers a reader can still pull from the same rows, so they live
here, below both. The levers are the registry's (generator/experiment/levers.py), the ones
`estimate --levers` and the API try.

A lever is a change of experiment options against a reference (the registry's `against`,
else the baseline's values of the same fields). Savings compare two results of the article's
example on one machine that differ only by the lever, on the reserved peak (what runs out,
where the allocator is modelled) beside the tensors' peak: a CUDA pair where one exists, else
the estimate for CUDA. Costs compare the step times of two real runs that differ only by the
lever, in whatever configuration they exist: CUDA first, then the CPU.
"""

from __future__ import annotations

from typing import Any

from generator.experiment import Experiment, as_held, options
from generator.experiment.option import NOT_A_LEVER, resolved_optimizer_impl
from generator.experiment.levers import BY_ID, Lever, study
from generator.results.shapes import StepResult, result_trust
from generator.site import derived
from generator.site.derived import ARTICLE
from generator.site.charts.step_charts import OUTSIDE_MODULES
from generator.site.labels import kind
from generator.site.lever_results import relations, sentences
from generator.site.wording import spaced
from generator.words import Words

Result = StepResult
#: The page's baseline: the article's step with the kernels PyTorch picks on CUDA (each
#: option's declared `lever` value).
BASELINE: dict[str, Any] = {name: opt.lever for name, opt in options().items()
                            if opt.lever is not NOT_A_LEVER}
#: The same, as an experiment the registry's levers apply to.
BASELINE_STEP = Experiment(model=ARTICLE["model"], batch_size=ARTICLE["batch_size"],
                           seq_len=ARTICLE["seq_len"], **BASELINE)
#: The levers the page measures, by the page's ids (its sections' anchors): the registry's
#: studied ones, as the levers suite applies them to the article's example.
LEVERS: dict[str, tuple[Lever, ...]] = {ident: (lever,) for ident, lever in study().items()}
#: The names beside the levers' own (the registry's, experiment/levers.py): the opposite of a lever
#: PyTorch already applies, and the baseline.
LABELS: dict[str, Words] = {
    "set-to-none-off": Words("`zero_grad(set_to_none=False)`", "`zero_grad(set_to_none=False)`"),
    "baseline": Words("Baseline", "基线"),
}
#: The section of the levers page that explains a lever, where it is not the lever's id.
SECTIONS = {ident: lever.section for ident, lever in study().items() if lever.section}
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


def fine_tune(ident: str) -> bool:
    """Whether a lever is another kind of training (the registry's kind "fine-tune": LoRA's
    adapters train in place of the model's weights), not the same training with another
    memory setting: the page lists it apart from the ranking."""
    return any(lever.kind == "fine-tune" for lever in LEVERS.get(ident, ()))


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
    merged = _merge_identical(ranked)
    # printed once: a lever whose figures are those of one ranked above it is not a row;
    # another kind of training is listed apart, not ranked with the memory settings
    printed = [row for row in ranked if row["id"] not in {m["id"] for m in merged}]
    shown = [row for row in printed if not fine_tune(row["id"])]
    other_training = [row for row in printed if fine_tune(row["id"])]
    for rank, row in enumerate(shown, start=1):
        row["rank"] = rank
    combos = [row for row in (_row(found, ident, levers) for ident, levers in COMBOS.items())
              if row]
    by_id = {row["id"]: row for row in rows + combos}
    for row in combos:
        parts = [by_id[ident] for ident, levers in LEVERS.items() if ident in by_id and not
                 in_baseline(levers) and use(levers).items() <= row["use"].items()
                 and ident not in {m["id"] for m in merged}]
        lowest = "reserved" if by_reserved else "peak"
        row["best_part"] = min(parts, key=lambda part: part[lowest]) if parts else None
        row["parts"] = [part["id"] for part in parts]
        # whether the parts' savings of the tensors' peak add up, and what they share
        row["together"] = relations.combination(
            row["saving_bytes"], {part["id"]: part["saving_bytes"] for part in parts},
            {part["id"]: part["shrinks"] for part in parts}) if parts else None
    all_names = {**names(), **LABELS}
    for row in combos:
        if row["together"]:
            row["together_words"] = sentences.together(row, all_names, by_id)
    baseline = min(rows, key=lambda row: result_trust(row["result"]))["baseline"]
    timed = [row for row in printed + combos if row["cost"]]
    costs = [row for row in timed if not row["cost"]["not_shown"]]
    hidden = _groups([row for row in timed if row["cost"]["not_shown"]])
    top = relations.strongest(shown, held)
    # accumulation's rank follows from the count of micro-batches chosen: the strongest of
    # the levers that keep the batch whole beside it
    whole = [row for row in shown if not sentences.splits_batch(row)]
    unmoved = {peak: relations.unmoved(printed, peak)
               for peak in (("reserved", "peak") if by_reserved else ("peak",))}
    return {**_facts(baseline, by_id, all_names), "baseline": baseline,
            "baseline_peak": baseline["peak_bytes"],
            "baseline_reserved": _reserved(baseline), "by_reserved": by_reserved,
            "ranked": ranked, "combos": combos, "by_id": by_id, "merged": merged,
            "shown": shown, "other_training": other_training, "strongest": top,
            "strongest_words": sentences.strongest(
                top, all_names, relations.strongest(whole, held)
                if whole and any(sentences.splits_batch(row) for row in top) else ()),
            "amp_strongest": any(row["id"].startswith("amp") for row in top),
            "acts_share": relations.ACTS_ON_SHARE,
            "unmoved_words": sentences.unmoved({k: v for k, v in unmoved.items() if v},
                                               all_names),
            "merged_words": [sentences.merged(m, all_names) for m in merged],
            "names": all_names, "spaced": spaced, "went": relations.went,
            "change": relations.change,
            "list_names": lambda found: sentences.names_of(found, all_names),
            "costs": costs, "hidden_costs": hidden,
            "untimed": sentences.untimed(hidden, all_names, bool(costs), relations.NOT_SHOWN)
            if hidden or not costs else None,
            "timing_rule": {"steps": relations.MIN_TIMED_STEPS, "tokens": relations.MIN_TOKENS},
            "missing": [ident for ident in LEVERS if ident not in by_id],
            "expandable_with": _expandable_with(found, by_id),
            "backends": [b for _, b in sorted({(result_trust(row["result"]), row["backend"])
                                               for row in ranked + combos})]}


def _facts(baseline: Result, by_id: dict[str, Any], lever_names: dict[str, Words]
           ) -> dict[str, Any]:
    """What the sections compute from the results beside the savings: checkpointing's
    recompute in FLOPs (from the model's config), the for-loop optimizer's temporaries in
    copies of the largest parameter, how AMP changes the loss's tensors, and why the real
    runs' peaks differ from the estimate's."""
    found: dict[str, Any] = {"flops": None, "for_loop": None, "amp": None, "real_runs": None,
                             "kernel_state": None}
    if "fused" in by_id:  # the state the kernels keep: the fused kernel's own step counts
        row = by_id["fused"]
        found["kernel_state"] = sentences.kernel_state(relations.extra_state(
            tuple(r["category_max_bytes"]["optimizer_state"] for r in (row["ref"], row["result"])),
            (row["ref_peak"], row["peak"])))
    arch = baseline.get("architecture") or {}
    if {"hidden", "intermediate", "layers", "vocab"} <= arch.keys():
        found["flops"] = relations.transformer_flops(arch, baseline["experiment"]["seq_len"])
    if "for-loop" in by_id and {"vocab", "hidden", "intermediate"} <= arch.keys():
        row = by_id["for-loop"]
        temporaries = phase_max(row["result"], "optimizer", "temporaries")
        largest = relations.largest_parameter(row["result"])
        found["for_loop"] = {"temporaries": temporaries, "largest": largest,
                             "copies": relations.copies(temporaries, largest["bytes"])}
    amp = by_id.get("amp-bf16") or by_id.get("amp-fp16")
    if amp:
        ref, res = amp["ref"], amp["result"]
        loss = [r["module_activation_bytes"].get(OUTSIDE_MODULES, 0) for r in (ref, res)]
        temps = [r["live_at_peak_bytes"]["temporaries"] for r in (ref, res)]
        found["amp"] = {"loss_before": loss[0], "loss_after": loss[1],
                        # the FP32 weights, gradients and optimizer state, to the byte
                        "fp32_unchanged": relations.unchanged(
                            ref["category_max_bytes"], res["category_max_bytes"],
                            ("parameters", "gradients", "optimizer_state")),
                        "loss": relations.change(*loss),
                        "temporaries_before": temps[0], "temporaries_after": temps[1],
                        "temporaries": relations.change(*temps)}
    kernels = by_id.get("fused") or by_id.get("for-loop")
    if kernels and kernels["cost"]:
        cost = kernels["cost"]
        totals = [_phase_totals(cost[r]) for r in ("ref_result", "result")]
        where = relations.phase_peaks(*totals) if all(totals) else None
        run = Words(f"{cost['model']} at batch {cost['batch_size']}",
                    f"{cost['model']} 在 batch {cost['batch_size']}")
        kernel = options(cost["ref_result"])["optimizer_impl"]
        found["real_runs"] = {
            "id": kernels["id"], "cost": cost, "where": where,
            "words": sentences.kernel_run(where, lever_names[kernels["id"]], kernel, run,
                                          Words(kind(cost, "en"), kind(cost, "zh")))
            if where else None,
            "differences": relations.differences(cost["ref_result"], baseline)}
    return found


def _phase_totals(result: Result) -> dict[str, int]:
    """A result's largest total in each phase it records (phase_max)."""
    found = {name: phase_max(result, name) for name in ("forward", "backward", "optimizer")}
    return {name: value for name, value in found.items() if value is not None}


def _groups(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Timings left out, grouped by where they ran and why they are left out: one sentence
    each."""
    found: dict[tuple, dict[str, Any]] = {}
    for row in rows:
        cost = row["cost"]
        key = (cost["backend"], cost["machine"], cost["model"], cost["seq_len"],
               tuple(cost["not_shown"]))
        found.setdefault(key, {"cost": cost, "rows": []})["rows"].append(row)
    return list(found.values())


def _merge_identical(ranked: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Levers whose results give the same figures as a lever ranked above them against the
    same reference (AMP fp16 beside AMP bf16): printed once, with a line that says so."""
    merged: list[dict[str, Any]] = []
    for i, row in enumerate(ranked):
        for above in ranked[:i]:
            if above["ref"] is not row["ref"] or above["id"] in {m["id"] for m in merged}:
                continue
            check = relations.identical(above["result"], row["result"])
            if check["identical"]:
                merged.append({"id": row["id"], "same_as": above["id"],
                               "within": check["within"]})
                break
    return merged


def _expandable_with(found: _Index, by_id: dict[str, Any]) -> dict[str, Any] | None:
    """Expandable segments on top of checkpointing, where the example's gap between reserved
    and allocated is widest: the checkpointed result and the same with expandable segments."""
    if "checkpointing" not in by_id or "expandable-segments" not in by_id:
        return None
    ckpt = by_id["checkpointing"]["result"]
    other = found.get(ckpt, expandable_segments=True)
    if other is None:
        return None
    return {"ref": ckpt, "result": other, "gap": _gap(ckpt),
            "gap_from_to": relations.from_to(_gap(ckpt), _gap(other)),
            "reserved_from_to": relations.from_to(_reserved(ckpt), _reserved(other), "GiB")}


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

    def get(self, result: Result, **changes: Any) -> Result | None:
        """The result of the same setting as `result`, with some options changed."""
        return self.results.get((_setting(result), _frozen({**options(result), **changes})))

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
    phase = levers[0].phase if len(levers) == 1 else None
    if phase:  # the largest value of each category during that phase
        before, after = ({c: phase_max(r, phase, c) or 0 for c in r["live_at_peak_bytes"]}
                         for r in (ref, result))
        phase_peaks = [phase_max(r, phase) for r in (ref, result)]
    else:
        before, after = ref["live_at_peak_bytes"], result["live_at_peak_bytes"]
        phase_peaks = None
    acts = relations.acts_on(before, after)
    live = result["live_at_peak_bytes"]
    reserved = [_reserved(r) for r in (ref, result)]
    both = None not in reserved
    row = {"id": ident, "anchor": SECTIONS.get(ident, ident),
           "use": use(levers), "phase": phase, "in_baseline": default,
           "ref": ref, "result": result, "baseline": baseline,
           "other": ref if default else result,
           "backend": result["backend"], "machine": result["environment"]["machine_id"],
           "ref_peak": ref["peak_bytes"], "peak": result["peak_bytes"],
           "saving_bytes": ref["peak_bytes"] - result["peak_bytes"],
           "saving": derived.saving(ref["peak_bytes"], result["peak_bytes"]),
           # what runs out: the reserved peak, where the allocator is modelled or measured
           "ref_reserved": reserved[0], "reserved": reserved[1],
           "reserved_saving_bytes": reserved[0] - reserved[1] if both else None,
           "reserved_saving": derived.saving(*reserved) if both else None,
           # what the allocator holds beyond the tensors at its peak
           "gap_before": _gap(ref), "gap_after": _gap(result),
           # the categories whose changes make up the saving, largest first
           "acts": acts, "shrinks": [c for c, b, a in acts if a < b],
           "peak_phase": peak_phase(ref),
           "phase_peak_before": phase_peaks[0] if phase_peaks else None,
           "phase_peak_after": phase_peaks[1] if phase_peaks else None,
           "largest": max(live, key=live.get),
           "micro_batches": result["experiment"]["micro_batches"],
           "micro_batch": result["experiment"]["batch_size"] // result["experiment"]["micro_batches"],
           "cost": _cost(found, levers)}
    row["saved"] = relations.saved(row)  # what it does to the two peaks, checked
    row["peak_same"] = relations.same(row["ref_peak"], row["peak"])
    if row["gap_before"] is not None:
        row["gap_from_to"] = relations.from_to(row["gap_before"], row["gap_after"])
    if phase_peaks:
        row["phase_from_to"] = relations.from_to(*phase_peaks, unit="GiB")
        row["temporaries_from_to"] = relations.from_to(before["temporaries"],
                                                       after["temporaries"])
        row["temporaries_words"] = sentences.kernel_temporaries(after["temporaries"])
    return row


def _gap(result: Result) -> int | None:
    """Reserved − allocated at their peaks: the simulated allocator's, else None."""
    allocator = result.get("allocator") or {}
    if allocator.get("peak_reserved_bytes") is None:
        return None
    return allocator["peak_reserved_bytes"] - allocator["peak_allocated_bytes"]


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
    timed = [r.get("step_times") for r in (ref, result)]
    steps = min(len(t) for t in timed) if all(timed) else None
    # the larger of the two runs' spreads, (slowest − fastest) / median
    spread = max((max(t) - min(t)) / r["step_seconds"] for t, r in zip(timed, (ref, result))) \
        if steps else None
    found = {"ratio": ratio, "change": ratio - 1, "timed_steps": steps, "spread": spread,
            "ref_seconds": ref["step_seconds"], "seconds": result["step_seconds"],
            "ref_peak": ref["peak_bytes"], "peak": result["peak_bytes"],
            "peak_phase": peak_phase(ref),
            "backend": result["backend"], "machine": result["environment"]["machine_id"],
            "device_name": result["environment"].get("device_name"),
            "model": exp["model"], "batch_size": exp["batch_size"], "seq_len": exp["seq_len"],
            "cpu": result["environment"].get("cpu"),
            "cpu_count": result["environment"].get("cpu_count"),
            "ref_result": ref, "result": result}
    found["not_shown"] = relations.timing_shown(found)  # why not, where it may not be shown
    return found


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
