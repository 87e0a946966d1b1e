"""Each model and setting of the calculator's grid fitted from its estimates: the planes of its
peaks, the split of the peak by category, and its allocation traces fitted into replay
templates (plan/predictor/replay.py), as the widget's data holds them. The calculator's page
writes these fits for its widget; the sweeps page asks `predictor` what a step needs beyond
its own points, so that it answers as the widget does.

Each setting's estimates keep their allocation traces; every allocation's size is fitted
over them, and the widget replays the fitted trace through the caching allocator at the
reader's size (exact where the fit is). One sample and more are different steps for a causal
LM (transformers copies the shifted labels only for two or more), so where the traces of
batch 1 differ from the others, each has its template. Planes fitted to the same estimates
remain for a setting whose traces cannot be fitted, give the search for the largest batch its
first guess, and split the peak into its categories.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from generator.experiment import step_options_of
from generator.plan.predictor import replay
from generator.plan.predictor.planes import FitRange, Point, fit_plane, fit_share
from generator.plan.predictor.verdicts import Predictor
from generator.results.shapes import StepResult
from generator.site.calculator_grid.keys import grid_keys
from generator.site.calculator_grid import settings
from generator.site.derived import peak_phase
from generator.site.templating import kind

#: Fewer points than this cannot both fit three coefficients and say how well they fit.
MIN_POINTS = 4
#: The categories of the peak, in the order the stacked bar draws them.
CATEGORIES = ("parameters", "gradients", "optimizer_state", "activations", "autocast_copies",
              "temporaries")

def slug(model: str) -> str:
    """A model id as a file name: "hf:meta-llama/Llama-3.2-1B" → "hf-meta-llama-Llama-3.2-1B"."""
    return re.sub(r"[^A-Za-z0-9._]+", "-", model).strip("-")


def groups(results: list[StepResult]) -> dict[tuple[str, str, str, str], list[StepResult]]:
    """The grid's estimates by model, precision, optimizer and step options."""
    keys = grid_keys()
    groups: dict[tuple[str, str, str, str], list[StepResult]] = defaultdict(list)
    for r in results:
        if r["key"] in keys and not r.get("error") and r.get("allocator"):
            e = r["experiment"]
            groups[(e["model"], e["precision"], e["optimizer"], levers_of(e))].append(r)
    return groups


def predictor(results: list[StepResult], experiment: dict[str, Any]
              ) -> tuple[Predictor, list[StepResult]] | None:
    """The calculator's predictor of the step of `experiment` at any batch and sequence (its
    model, precision, optimizer and lever set), and the grid's results it rests on; None
    where the grid has no replay template for it. Another page that asks what a step needs
    beyond its own points (the sweeps page's largest batch) asks it here, so that it answers
    as the widget does."""
    e = experiment
    group = groups(results).get((e["model"], e["precision"], e["optimizer"], levers_of(e)))
    if not group or len(group) < MIN_POINTS:
        return None
    fit, templates = fit_group(group)
    return (Predictor(fit, templates), group) if templates else None


def levers_of(exp: dict[str, Any]) -> str:
    """A lever set's id: the step options' key tags ("ckpt"), or "none"."""
    return "+".join(opt.tag(value) for opt, value in step_options_of(exp)) or "none"


def fit_group(group: list[StepResult]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """One model and setting: both peaks fitted, the split of the peak by category, the
    range and sources; and its replay templates by name (none where the traces do not fit,
    said in "replay_problem"). Sizes are per micro-batch: a step of two micro-batches of 4
    is batch 4 here, as the reader gives it."""
    micro = group[0]["experiment"].get("micro_batches", 1) or 1
    group = sorted(group, key=lambda r: (r["experiment"]["batch_size"], r["experiment"]["seq_len"]))
    first = group[0]
    e = first["experiment"]
    allocated = fit_plane([_point(r, "peak_allocated_bytes") for r in group])
    reserved = fit_plane([_point(r, "peak_reserved_bytes") for r in group], use_floor=False)
    fitted = FitRange.of(allocated.points)
    name = slug(f"{e['model']}-{e['precision']}-{e['optimizer']}-{levers_of(e)}")
    templates, entries, problem = _templates(group, name)
    return {
        "name": name, "model": e["model"], **settings.setting(e), "optimizer": e["optimizer"],
        # what the widget's "estimate this size" command needs beyond the setting
        "lora_rank": e.get("lora_rank", 0), "hf_task": e.get("hf_task", "auto"),
        "kind": {lang: kind(first, lang) for lang in ("en", "zh")},
        "allocated": {**allocated.coefficients(), "max_rel_residual": allocated.max_rel_residual,
                      "spread": allocated.spread},
        "reserved": {**reserved.coefficients(), "max_rel_residual": reserved.max_rel_residual,
                     "spread": reserved.spread},
        "composition": _composition(group),
        "range": {"tokens": list(fitted.tokens), "seq": list(fitted.seq)},
        "points": [{"batch": r["experiment"]["batch_size"] // micro,
                    "seq": r["experiment"]["seq_len"],
                    "allocated": r["allocator"]["peak_allocated_bytes"],
                    "reserved": r["allocator"]["peak_reserved_bytes"],
                    "tensors": r["peak_bytes"],
                    "floor": peak_phase(r) == "optimizer", "key": r["key"]} for r in group],
        "replays": entries, "replay_problem": problem,
    }, templates


def _templates(group: list[StepResult], name: str
               ) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]], str | None]:
    """The group's traces fitted into one template, or, where batch 1 is another step, one
    for batch 1 and one for more; each checked to give its estimates' own peaks back.
    Returns the templates by name, the widget's entries ({"name", "batch": [low, high or
    None]}, by micro-batch), and the problem where none could be made."""
    traced = [r for r in group if r["allocator"].get("trace")]
    if len(traced) < len(group):
        return {}, [], "estimates without an allocation trace (allocation_trace = true)"
    micro = group[0]["experiment"].get("micro_batches", 1) or 1
    ones = [r for r in group if r["experiment"]["batch_size"] == micro]
    rest = [r for r in group if r["experiment"]["batch_size"] != micro]
    try:
        return {name: _template(group)}, [{"name": name, "batch": [_batch(group), None]}], None
    except replay.NotReplayable as problem:
        if not ones or len(rest) <= replay.MAX_TERMS:
            return {}, [], str(problem)
    try:
        one, more = _template(ones), _template(rest)
    except replay.NotReplayable as problem:
        return {}, [], str(problem)
    return ({f"{name}-b1": one, f"{name}-b2": more},
            [{"name": f"{name}-b1", "batch": [1, 1]},
             {"name": f"{name}-b2", "batch": [_batch(rest), None]}], None)


def _batch(group: list[StepResult]) -> int:
    """The smallest micro-batch among the group's estimates."""
    return min(r["experiment"]["batch_size"] // (r["experiment"].get("micro_batches", 1) or 1)
               for r in group)


def _template(group: list[StepResult]) -> dict[str, Any]:
    """The traces fitted (at the estimates' own batch, all micro-batches together), checked
    to give each estimate's own peaks back; NotReplayable where they do not."""
    if len(group) <= replay.MAX_TERMS:
        raise replay.NotReplayable(f"{len(group)} traces cannot check a fit of "
                                   f"{replay.MAX_TERMS} terms")
    sizes = [(r["experiment"]["batch_size"], r["experiment"]["seq_len"]) for r in group]
    template = replay.template([(b, s, r["allocator"]["trace"]) for (b, s), r in zip(sizes, group)])
    if replay.exact_at_its_points(template, sizes):
        return template
    for r in group:
        peaks = replay.peaks(template, r["experiment"]["batch_size"], r["experiment"]["seq_len"])
        truth = (r["allocator"]["peak_allocated_bytes"], r["allocator"]["peak_reserved_bytes"])
        if peaks != truth:
            raise replay.NotReplayable(f"the replay gives {peaks} at {r['key']}, the "
                                       f"estimate {truth}")
    return template


def _composition(group: list[StepResult]) -> dict[str, Any]:
    """What fills the peak, by category: a plane per category through the estimates whose
    peak grows with the size, and the split of the highest of those that peak in the
    optimizer step (the floor, which does not grow). Approximate between the points, which
    the widget says; the peaks themselves come from the replay."""
    micro = group[0]["experiment"].get("micro_batches", 1) or 1

    def point(r: StepResult, value: float) -> Point:
        e = r["experiment"]
        return Point(e["batch_size"] // micro, e["seq_len"], value)

    growing = [r for r in group if peak_phase(r) != "optimizer"]
    floor = max((r for r in group if peak_phase(r) == "optimizer"),
                key=lambda r: r["peak_bytes"], default=None)
    planes = None
    if len({(r["experiment"]["batch_size"], r["experiment"]["seq_len"]) for r in growing}) >= 3:
        planes = {cat: fit_share([point(r, r["live_at_peak_bytes"].get(cat, 0)) for r in growing])
                  for cat in CATEGORIES}
    return {"planes": planes,
            "floor": {cat: floor["live_at_peak_bytes"].get(cat, 0) for cat in CATEGORIES}
            if floor else None}


def _point(result: StepResult, field: str) -> Point:
    e = result["experiment"]
    micro = e.get("micro_batches", 1) or 1
    return Point(e["batch_size"] // micro, e["seq_len"], result["allocator"][field],
                 floor=peak_phase(result) == "optimizer")
