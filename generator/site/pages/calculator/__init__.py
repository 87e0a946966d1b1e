"""The "will it fit?" calculator: its own page (calculator.md), the short entry on the home
page and the model reports, and the data its widget reads. For the models people fine-tune
(suite fine_tune.toml) and the article's two (calculator.toml), each in the ways they are
trained (site/calculator_grid/settings.py: method, precision, levers), it predicts a step's
allocated and reserved peaks, the tensors' peak and what nvidia-smi would show, on any GPU of
the catalogue (gpus.py), and for each of them whether the step fits (plan/fit.py) and the
largest batch that does (plan/search.py).

Each setting is fitted from its estimates below the pages (site/calculator_grid/fits.py: its
planes and its allocation traces fitted into replay templates), where the sweeps page asks
it too; the widget replays a template through the caching allocator at the reader's size
(exact where the fit is).

Data files (docs/<lang>/data/): calculator.json, and calculator.js (the same as a script, so
that the widget also works from file://): the models, their settings, the GPUs and the
words; calculator/model-<model>.js: one model's fits, loaded when it is picked;
calculator/<fit>.js: one setting's replay templates, loaded when it is picked.
"""

from __future__ import annotations

import json
import re
from typing import Any

from generator import gpus
from generator.plan.fit import RESERVED_IS_AN_UPPER_BOUND, WORD_TEXT
from generator.results.shapes import StepResult
from generator.site.labels import CATEGORY_LABELS, PRECISION_LABELS
from generator.site.pages import Page, PageModule
from generator.site.escaping import written
from generator.plan import search
from generator.plan.predictor import replay, verdicts
from generator.site.calculator_grid import settings
from generator.site.calculator_grid.fits import CATEGORIES, MIN_POINTS, fit_group, groups, slug
from generator.site.calculator_grid.keys import calculator_only_keys, grid_keys
from generator.site.pages.calculator import choices, formulas, rules
from generator.plan.predictor.planes import FitRange
from generator.plan.predictor.verdicts import Predictor, gpu_entry
from generator.site.palette import CATEGORY_COLORS
from generator.site.templating import kind
from generator.site.wording import listed
from generator.words import LANGS, same

PAGES = (Page("calculator.md", "calculator/calculator", nav=5),)
DATA_NAME = "calculator"
SCHEMA = 5
#: What the widget takes as input, at most: sizes beyond these are no step anyone trains (a
#: batch as large as the search for the largest one goes; the GPU's memory in GiB), and the
#: widget says so instead of replaying.
LIMITS = {"batch": search.MAX_BATCH, "seq": 1 << 20, "gpu_memory": 100_000}


def widget_constants() -> dict[str, Any]:
    """The constants the widget's JavaScript shares with the Python it mirrors, written into
    its data (calculator.json) so that calculator.js and planning.js keep no copy of their
    own: the search's bounds (plan/search.py), the replay's monomials as powers of batch and
    sequence (replay.py) and the input limits."""
    return {"search": {"max_batch": search.MAX_BATCH, "max_growth": search.MAX_GROWTH},
            "monomials": {name: list(powers) for name, powers in replay.MONOMIALS.items()},
            "limits": LIMITS}


def own_results(results: list[StepResult]) -> set[str]:
    """The grid's results that only this module shows (render.py hides them elsewhere)."""
    return set(calculator_only_keys())


def context(results: list[StepResult], studies: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Every fit, by model and setting; None without grid results."""
    fitted = [fit_group(group) for _, group in sorted(groups(results).items())
              if len(group) >= MIN_POINTS]
    if not fitted:
        return None
    fits = [fit for fit, _ in fitted]
    replays = {name: template for _, templates in fitted for name, template in templates.items()}
    order = list(PRECISION_LABELS)
    methods = list(settings.METHODS)
    # the plain step first: the widget opens each model and method on it
    fits.sort(key=lambda f: (f["model"], methods.index(f["method"]),
                             order.index(f["precision"]), f["levers"] != "none", f["levers"]))
    models = _models(fits, results)
    start = _start(fits)
    found = formulas.rows(results, order=[m["id"] for m in models])
    keys = grid_keys()
    own = [r for r in results if r["key"] in keys and not r.get("error")]
    gpu_list = gpu_data()
    return {"schema_version": SCHEMA, "fits": fits, "models": models, "gpus": gpu_list,
            "constants": widget_constants(),
            # the one rule's words (plan/fit.py), for the widget in each language
            "verdict_words": {lang: {word: text[lang] for word, text in WORD_TEXT.items()}
                              for lang in LANGS},
            "upper_bound": {lang: RESERVED_IS_AN_UPPER_BOUND[lang] for lang in LANGS},
            "methods": {m: dict(zip(("en", "zh"), w)) for m, w in settings.METHODS.items()},
            # each precision named by what it keeps, beside the method it is offered with
            "precisions": {m: {p: dict(zip(("en", "zh"), settings.precision_label(m, p)))
                               for p in order if any((f["method"], f["precision"]) == (m, p)
                                                     for f in fits)}
                           for m in methods if any(f["method"] == m for f in fits)},
            "categories": list(CATEGORIES),
            "category_words": {c: dict(zip(("en", "zh"), CATEGORY_LABELS[c])) for c in CATEGORIES},
            "category_colors": {c: CATEGORY_COLORS[c] for c in CATEGORIES},
            "start": start, "replays": replays,
            # what the page says of the settings: LoRA's rank, the estimates per setting
            "lora_rank": max((f["lora_rank"] for f in fits), default=0),
            "fine_tuning": _fine_tuning(models),
            "model_groups": [{"family": family, "models": [m for m in models
                                                           if m["family"] == family]}
                             for family in dict.fromkeys(m["family"] for m in models)],
            "points_per_fit": _points_per_fit(fits),
            "formulas": _formulas(found, results),
            # what the page says, not the widget's data (data_files leaves it out)
            "page": {"choices": {name: written(words) for name, words in (
                         ("origins", choices.origins(models)),
                         ("tasks", choices.tasks(models, own)),
                         ("lora_targets", choices.lora_targets(models, own)))},
                     "precisions": choices.precisions(fits),
                     "first_answer": first_answer(start, fits, replays, gpu_list, models)}}


def _formulas(found: list[dict[str, Any]], results: list[StepResult]) -> dict[str, Any] | None:
    """The "why not a formula" rows and what the page says of them: what each rule computes
    (described over every step the page applies it to), whether the estimates keep what the
    rules count of attention, and the published runs' sources; None without rows."""
    said = formulas.summary(found)
    if said is None:
        return None
    settings_seen = sorted({(r["batch"], r["seq"]) for r in found}, key=lambda s: -s[1])
    shown = listed([same(f"{b} × {s:,}") for b, s in settings_seen])
    by_key = {r["key"]: r for r in results}
    published = formulas.published(results)
    steps = [r["step"] for r in found + published]
    attention = rules.attention_words([r["step"] for r in found])
    published_attention = rules.attention_words([r["step"] for r in published])
    return {"rows": found, "published": published,
            # the estimates the table prints, for the page's list of data files (sources.py)
            "sources": [by_key[r["key"]] for r in found if r["key"] in by_key],
            "settings": {"en": shown.en, "zh": shown.zh},
            "rules": [{"id": d["id"], "words": written(d["words"])}
                      for d in rules.described(steps)],
            "attention": attention and written(attention),
            "published_attention": published_attention and written(published_attention),
            "published_intro": formulas.published_intro(published, found),
            "published_sources": [written(w) for w in formulas.published_sources(published)],
            "summary": dict(zip(("en", "zh"), said))}


def tables(ctx: dict[str, Any], lang: str) -> dict[str, Any]:
    """The page's Markdown tables: the rules of thumb beside the estimate, and beside the
    published real-GPU runs."""
    found = ctx.get("formulas")
    if not found:
        return {}
    shown = {"calculator-formulas": formulas.table(found["rows"], lang)}
    if found["published"]:
        shown["calculator-published"] = formulas.published_table(found["published"], lang)
    return shown


def _fine_tuning(models: list[dict[str, Any]]) -> dict[str, Any]:
    """The fine-tuning models (hf:) the home page names: how many, and their families."""
    tuned = [m for m in models if m["id"].startswith("hf:")]
    families = listed([same(f) for f in dict.fromkeys(m["family"] for m in tuned)])
    return {"count": len(tuned), "families": {"en": families.en, "zh": families.zh}}


def _points_per_fit(fits: list[dict[str, Any]]) -> str:
    """How many estimates each fine-tuning setting rests on: "9", or "6 to 9"."""
    counts = sorted({len(f["points"]) for f in fits if f["model"].startswith("hf:")}
                    or {len(f["points"]) for f in fits})
    return str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"


#: Where the widget opens: the setting most people fine-tune an LLM with, LoRA on the model's
#: weights loaded in bf16 with activation checkpointing, at one sample of 2,048 tokens (the
#: defaults of LLaMA-Factory's LoRA recipe, examples/train_lora/llama3_lora_sft.yaml:
#: per_device_train_batch_size 1, cutoff_len 2048, bf16, checkpointing unless disabled; TRL's
#: SFT recipes also load bf16 weights and checkpoint). The first model's and setting's stand
#: in for what the fits lack.
START = {"model": "hf:meta-llama/Llama-3.1-8B", "method": "lora", "precision": "bf16",
         "levers": "ckpt", "batch": 1, "seq": 2048}


def _start(fits: list[dict[str, Any]]) -> dict[str, Any]:
    """The widget's first choice: START where a fit holds it (its model and method, then its
    precision and levers where they are among the fits), else the first fine-tuning model's
    first setting at the middle of its points."""
    wanted = [f for f in fits if f["model"] == START["model"] and f["method"] == START["method"]]
    wanted = ([f for f in wanted if (f["precision"], f["levers"]) ==
               (START["precision"], START["levers"])] or wanted)
    first = (wanted or [f for f in fits if f["model"].startswith("hf:")] or fits)[0]
    if FitRange(tuple(first["range"]["tokens"]), tuple(first["range"]["seq"])).contains(
            START["batch"], START["seq"]):
        size = {"batch": START["batch"], "seq": START["seq"]}
    else:
        points = sorted(first["points"], key=lambda p: p["batch"] * p["seq"])
        size = points[len(points) // 2]
    return {"model": first["model"], "method": first["method"],
            "precision": first["precision"], "levers": first["levers"],
            "batch": size["batch"], "seq": size["seq"], "gpu": gpus.ASSUMED}


def first_answer(start: dict[str, Any], fits: list[dict[str, Any]],
                 replays: dict[str, dict[str, Any]], gpu_list: list[dict[str, Any]],
                 models: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What the widget shows first, computed as it computes it (verdicts.py), for the page's
    text without JavaScript: the setting, the reserved peak on the opening GPU, the verdict
    there, and the smallest GPU of the catalogue it fits. None where the widget does not
    open on START (its fits lack that setting): the page names START's setting as the one
    most people run."""
    if any(start[key] != value for key, value in START.items()):
        return None
    fit = next((f for f in fits if all(f[k] == start[k] for k in
                                       ("model", "method", "precision", "levers"))), None)
    if fit is None:
        return None
    templates = {e["name"]: replays[e["name"]] for e in fit["replays"] if e["name"] in replays}
    predictor = Predictor(fit, templates)
    gpu = next(g for g in gpu_list if g["name"] == start["gpu"])
    shown = verdicts.figures(fit, gpu, start["batch"], start["seq"], templates)
    word = verdicts.verdict(fit, gpu, start["batch"], start["seq"], templates).word
    smallest = verdicts.smallest_fitting(predictor, gpu_list, start["batch"], start["seq"])
    model = next(m for m in models if m["id"] == start["model"])
    return {"model": model["label"], "method": settings.METHODS[fit["method"]],
            "precision": settings.precision_label(fit["method"], fit["precision"]),
            "levers": fit["lever_words"], "batch": start["batch"], "seq": start["seq"],
            "reserved": shown["reserved"], "gpu": gpu["short_name"],
            "verdict": WORD_TEXT[word], "kind": fit["kind"],
            "smallest": smallest and {"name": smallest["short_name"],
                                      "memory": smallest["memory_bytes"]}}


def _models(fits: list[dict[str, Any]], results: list[StepResult]) -> list[dict[str, Any]]:
    """The models as the widget lists them: name, family, parameter count, file, and the
    settings it has fits for."""
    counts = {r["experiment"]["model"]: r.get("parameter_count") for r in results
              if not r.get("error") and not r["experiment"].get("lora_rank")}
    found = []
    for model in sorted({f["model"] for f in fits}, key=_model_order):
        own = [f for f in fits if f["model"] == model]
        found.append({
            "id": model, "label": model.removeprefix("hf:"), "slug": slug(model),
            "family": _family(model), "parameters": counts.get(model),
            "billions": f"{counts[model] / 1e9:.2f}" if counts.get(model) else None,
            "settings": [{key: f[key] for key in ("name", "method", "precision", "levers",
                                                  "lever_words")} for f in own],
        })
    return found


#: Families by the words of their names, in the order the widget lists them.
FAMILIES = (("llama", "Llama"), ("qwen", "Qwen"), ("mistral", "Mistral"), ("gemma", "Gemma"),
            ("phi", "Phi"), ("granite", "Granite (MoE)"), ("bert", "BERT"), ("gpt2", "GPT-2"))


def _family(model: str) -> str:
    low = model.lower()
    return next((name for word, name in FAMILIES if word in low), "other")


def _model_order(model: str) -> tuple[int, int, float, str]:
    """Fine-tuning models first, by family and size; the article's own after them."""
    names = [name for _, name in FAMILIES] + ["other"]
    size = re.search(r"(\d+(?:\.\d+)?)[bB]\b", model)
    return (not model.startswith("hf:"), names.index(_family(model)),
            float(size.group(1)) if size else 0.0, model)


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


def data_files(ctx: dict[str, Any]) -> dict[str, str]:
    """What render writes under docs/<lang>/data/: the models and settings as JSON and as a
    script; each model's fits, and each setting's replay templates, as scripts of their own."""
    top = {key: value for key, value in ctx.items()
           if key not in ("replays", "fits", "formulas", "page")}
    text = json.dumps(top, ensure_ascii=False, indent=1, sort_keys=True)
    files = {f"{DATA_NAME}.json": text + "\n",
             f"{DATA_NAME}.js": f"window.CALCULATOR_DATA = {text};\n"}
    for model in ctx["models"]:
        own = [f for f in ctx["fits"] if f["model"] == model["id"]]
        files[f"{DATA_NAME}/model-{model['slug']}.js"] = (
            f"(window.CALCULATOR_FITS = window.CALCULATOR_FITS || {{}})"
            f"[{json.dumps(model['id'])}] = {_compact(own)};\n")
    for fit in ctx["fits"]:
        if not fit["replays"]:
            continue
        lines = [f"(window.CALCULATOR_REPLAYS = window.CALCULATOR_REPLAYS || {{}})"
                 f"[{json.dumps(entry['name'])}] = {_compact(ctx['replays'][entry['name']])};"
                 for entry in fit["replays"]]
        files[f"{DATA_NAME}/{fit['name']}.js"] = "\n".join(lines) + "\n"
    return files


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


PAGE_MODULE = PageModule(PAGES, context, tables=tables, data_files=data_files,
                         own_results=own_results)
