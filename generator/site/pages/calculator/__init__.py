"""The "will it fit?" calculator: a widget on the home page and the model reports that
predicts a step's allocated and reserved peaks, and what nvidia-smi would show, from the
estimates of calculator.toml, on any GPU of the catalogue (plan/gpus.py), and for each of them
whether the step fits (plan/fit.py) and the largest batch that does (plan/search.py).

Each lever set's estimates keep their allocation traces; replay.py fits every allocation's
size over them, and the widget replays the fitted trace through the caching allocator at the
reader's size (exact where the fit is). Planes (planes.py) fitted to the same estimates
remain for a lever set whose traces cannot be fitted, and give the search for the largest
batch its first guess.

It has no page of its own: its context is the fits, written as data files (calculator.json,
and calculator.js, the same data as a script so that the widget also works from file://;
calculator/<fit>.js, each replay template as a script, loaded when chosen) that
docs/assets/calculator.js reads; templates/calculator/ holds the widget's markup.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from generator.experiment import step_options_of
from generator.plan import gpus
from generator.plan.fit import RESERVED_IS_AN_UPPER_BOUND, WORD_TEXT
from generator.results.shapes import StepResult
from generator.site.analysis import ARTICLE
from generator.site.labels import PRECISION_LABELS
from generator.site.pages.calculator import grid, replay
from generator.site.pages.calculator.planes import FitRange, Point, fit_plane
from generator.site.pages.calculator.verdicts import Predictor, gpu_entry
from generator.site.pages.sweeps.fits import peak_phase
from generator.site.templating import kind
from generator.words import LANGS

PAGES = ()
DATA_NAME = "calculator"
SCHEMA = 3
#: Fewer points than this cannot both fit three coefficients and say how well they fit.
MIN_POINTS = 4


def own_results(results: list[StepResult]) -> set[str]:
    """The grid's results that only this module shows (render.py hides them elsewhere)."""
    return set(grid.calculator_only_keys())


def context(results: list[StepResult], studies: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Every fit, by model, precision and lever set; None without grid results."""
    fitted = [fit_group(group) for _, group in sorted(_groups(results).items())
              if len(group) >= MIN_POINTS]
    if not fitted:
        return None
    fits = [fit for fit, _ in fitted]
    replays = {fit["replay"]: template for fit, template in fitted if template}
    order = list(PRECISION_LABELS)
    # no levers first: the widget opens on the plain step
    fits.sort(key=lambda f: (f["model"], order.index(f["precision"]), f["levers"] != "none",
                             f["levers"]))
    # The widget opens on the article's example where the first fit covers it, else on the
    # middle of its points by tokens.
    points = sorted(fits[0]["points"], key=lambda p: p["batch"] * p["seq"])
    start = points[len(points) // 2]
    fitted = FitRange(tuple(fits[0]["range"]["tokens"]), tuple(fits[0]["range"]["seq"]))
    if fits[0]["model"] == ARTICLE["model"] and fitted.contains(ARTICLE["batch_size"],
                                                                ARTICLE["seq_len"]):
        start = {"batch": ARTICLE["batch_size"], "seq": ARTICLE["seq_len"]}
    return {"schema_version": SCHEMA, "fits": fits, "gpus": gpu_data(),
            # the one rule's words (plan/fit.py), for the widget in each language
            "verdict_words": {lang: {word: text[lang] for word, text in WORD_TEXT.items()}
                              for lang in LANGS},
            "upper_bound": {lang: RESERVED_IS_AN_UPPER_BOUND[lang] for lang in LANGS},
            "start": {"batch": start["batch"], "seq": start["seq"], "gpu": gpus.ASSUMED},
            "models": sorted({f["model"] for f in fits}),
            "precisions": [p for p in order if any(f["precision"] == p for f in fits)],
            "levers": list(dict.fromkeys(f["levers"] for f in fits)),
            "lever_words": {f["levers"]: f["lever_words"] for f in fits},
            "replays": replays}


def _groups(results: list[StepResult]) -> dict[tuple[str, str, str, str], list[StepResult]]:
    """The grid's estimates by model, precision, optimizer and lever set."""
    keys = grid.grid_keys()
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
    group = _groups(results).get((e["model"], e["precision"], e["optimizer"], levers_of(e)))
    if not group or len(group) < MIN_POINTS:
        return None
    fit, template = fit_group(group)
    return (Predictor(fit, template), group) if template else None


def gpu_data() -> list[dict[str, Any]]:
    """The catalogue's GPUs as the widget reads them: the memory a process gets, what
    nvidia-smi prints as the total, the CUDA context's range and the cuBLAS workspace."""
    return [{**gpu_entry(gpu), "short_name": gpu.short_name, "smi_total_mib": gpu.smi_total_mib,
             "generation": gpu.overheads.name, "source": source_url(gpu.memory_source)}
            for gpu in gpus.CATALOGUE]


def source_url(source: str) -> str:
    """A source as a reader can open it: "owner/repo:path@commit" → its GitHub page."""
    if source.startswith("http") or ":" not in source or "@" not in source:
        return source
    repo, _, rest = source.partition(":")
    path, _, commit = rest.partition("@")
    return f"https://github.com/{repo}/blob/{commit}/{path}"


def levers_of(exp: dict[str, Any]) -> str:
    """A lever set's id: the step options' key tags ("ckpt"), or "none"."""
    return "+".join(opt.tag(value) for opt, value in step_options_of(exp)) or "none"


def fit_group(group: list[StepResult]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """One model, precision and lever set: both peaks fitted, with the range and sources;
    and its replay template (None where the traces do not fit, said in "replay_problem")."""
    group = sorted(group, key=lambda r: (r["experiment"]["batch_size"], r["experiment"]["seq_len"]))
    first = group[0]
    e = first["experiment"]
    allocated = fit_plane([_point(r, "peak_allocated_bytes") for r in group])
    reserved = fit_plane([_point(r, "peak_reserved_bytes") for r in group], use_floor=False)
    fitted = FitRange.of(allocated.points)
    words = {lang: ", ".join(opt.words(value)[lang] for opt, value in step_options_of(e))
             for lang in ("en", "zh")}
    name = f"{e['model']}-{e['precision']}-{e['optimizer']}-{levers_of(e)}"
    template, problem = _template(group)
    return {
        "model": e["model"], "precision": e["precision"], "optimizer": e["optimizer"],
        "levers": levers_of(e), "lever_words": words if any(words.values()) else None,
        "kind": {lang: kind(first, lang) for lang in ("en", "zh")},
        "allocated": {**allocated.coefficients(), "max_rel_residual": allocated.max_rel_residual,
                      "spread": allocated.spread},
        "reserved": {**reserved.coefficients(), "max_rel_residual": reserved.max_rel_residual,
                     "spread": reserved.spread},
        "range": {"tokens": list(fitted.tokens), "seq": list(fitted.seq)},
        "points": [{"batch": r["experiment"]["batch_size"], "seq": r["experiment"]["seq_len"],
                    "allocated": r["allocator"]["peak_allocated_bytes"],
                    "reserved": r["allocator"]["peak_reserved_bytes"],
                    "floor": peak_phase(r) == "optimizer", "key": r["key"]} for r in group],
        "replay": name if template else None, "replay_problem": problem,
    }, template


def _template(group: list[StepResult]) -> tuple[dict[str, Any] | None, str | None]:
    """The group's traces fitted, checked to give each estimate's own peaks back."""
    traced = [r for r in group if r["allocator"].get("trace")]
    if len(traced) < len(group):
        return None, "estimates without an allocation trace (allocation_trace = true)"
    try:
        template = replay.template([(r["experiment"]["batch_size"], r["experiment"]["seq_len"],
                                     r["allocator"]["trace"]) for r in group])
    except replay.NotReplayable as problem:
        return None, str(problem)
    for r in group:
        peaks = replay.peaks(template, r["experiment"]["batch_size"], r["experiment"]["seq_len"])
        truth = (r["allocator"]["peak_allocated_bytes"], r["allocator"]["peak_reserved_bytes"])
        if peaks != truth:
            return None, f"the replay gives {peaks} at {r['key']}, the estimate {truth}"
    return template, None


def _point(result: StepResult, field: str) -> Point:
    e = result["experiment"]
    return Point(e["batch_size"], e["seq_len"], result["allocator"][field],
                 floor=peak_phase(result) == "optimizer")


def data_files(ctx: dict[str, Any]) -> dict[str, str]:
    """What render writes under docs/<lang>/data/: the fits as JSON, and as a script."""
    fits = {key: value for key, value in ctx.items() if key != "replays"}
    text = json.dumps(fits, ensure_ascii=False, indent=1, sort_keys=True)
    files = {f"{DATA_NAME}.json": text + "\n",
             f"{DATA_NAME}.js": f"window.CALCULATOR_DATA = {text};\n"}
    for name, template in ctx["replays"].items():
        compact = json.dumps(template, separators=(",", ":"), sort_keys=True)
        files[f"{DATA_NAME}/{name}.js"] = (
            f"(window.CALCULATOR_REPLAYS = window.CALCULATOR_REPLAYS || {{}})"
            f"[{json.dumps(name)}] = {compact};\n")
    return files
