"""Figures derived from results: shares of the peak, AMP savings, estimate accuracy.

Templates only print what this module computes; nothing here runs a model.
"""

from __future__ import annotations

from typing import Any

from generator import units
from generator.experiment import is_plain_step, step_options_of
from generator.results.reference_runs import experiment_keys
from generator.results.shapes import CATEGORIES, StepResult, StudyResult, result_trust
from generator.site.escaping import code, markdown_text, written
from generator.site.labels import CATEGORY_LABELS, PRECISION_LABELS
from generator.site.wording import listed
from generator.words import Words

Result = StepResult
#: The source article's example, the configuration every headline number is about.
ARTICLE = {"model": "bert-base", "batch_size": 32, "seq_len": 128, "optimizer": "adamw"}


def shares(result: Result) -> dict[str, dict[str, float]]:
    """Each category in both views: its bytes live at the peak as a share of the peak, and its
    own maximum as a share of the sum of maxima (the sum the article's table makes)."""
    live, maxima = result["live_at_peak_bytes"], result["category_max_bytes"]
    peak, total_max = result["peak_bytes"], sum(maxima.values())
    return {
        cat: {
            "live_bytes": live[cat],
            "live_share": live[cat] / peak if peak else 0.0,
            "max_bytes": maxima[cat],
            "max_share": maxima[cat] / total_max if total_max else 0.0,
        }
        for cat in CATEGORIES
    }


def saving(before: int, after: int) -> float | None:
    """1 − after/before; None when there was nothing to save."""
    return None if before == 0 else 1 - after / before


def precision_comparison(by_precision: dict[str, Result], view: str = "live") -> dict[str, Any]:
    """Bytes per category for each precision, and each AMP precision's saving against fp32.

    view "live": bytes live at the peak, closing with the peak; view "max": each category's
    own maximum, closing with the sum of maxima (the article's way of adding up)."""
    if view not in ("live", "max"):
        raise ValueError(f"unknown view {view!r}; choose live or max")
    field = "live_at_peak_bytes" if view == "live" else "category_max_bytes"

    def value(result: Result, cat: str) -> int:
        if cat == "total":
            return result["peak_bytes"] if view == "live" else sum(result[field].values())
        return result[field][cat]

    base = by_precision.get("fp32")
    rows = []
    for cat in CATEGORIES + ("total",):
        row: dict[str, Any] = {"category": cat, "bytes": {}, "saving": {}}
        for precision, result in by_precision.items():
            row["bytes"][precision] = value(result, cat)
            if base is not None and precision != "fp32":
                row["saving"][precision] = saving(value(base, cat), row["bytes"][precision])
        rows.append(row)
    return {"precisions": list(by_precision), "rows": rows, "view": view}


def result_id(result: Result) -> str:
    """Unique per result, for file names and HTML ids: the same experiment may come from two
    machines."""
    return f"{result['key']}-{result['environment']['machine_id']}"


def usable(results: list[Result]) -> list[Result]:
    return [r for r in results if not r.get("error")]


def beside_published(results: list[Result]) -> list[Result]:
    """The results that are not a published H100 run's step (estimated or measured on a
    GPU): those belong to the accuracy page alone."""
    published = experiment_keys()
    return [r for r in results if r["key"] not in published]


def best_by_precision(results: list[Result], *, model: str, batch_size: int, seq_len: int,
                      optimizer: str = "adamw") -> dict[str, Result]:
    """For one configuration, the result of each precision closest to a GPU (shapes.trust)."""
    chosen: dict[str, Result] = {}
    for result in usable(results):
        exp = result["experiment"]
        if (exp["model"], exp["batch_size"], exp["seq_len"], exp["optimizer"]) != \
                (model, batch_size, seq_len, optimizer):
            continue
        if (exp["backend"] == "estimate" and exp["device"] != "cuda") or \
                not is_plain_step(exp):
            continue
        current = chosen.get(exp["precision"])
        if current is None or result_trust(result) < result_trust(current):
            chosen[exp["precision"]] = result
    order = tuple(PRECISION_LABELS)
    return {p: chosen[p] for p in order if p in chosen}


def estimate_accuracy(results: list[Result]) -> list[dict[str, Any]]:
    """Each real run beside the estimate of the same configuration for the same device:
    the ground-truth peak, the tracker's peak in the real run, the estimate's peak. The
    published H100 runs' steps are left to the accuracy page."""
    results = beside_published(results)
    estimates = {}
    for result in usable(results):
        exp = result["experiment"]
        if exp["backend"] == "estimate":
            estimates[_config_key(exp, exp["device"])] = result
    rows = []
    for result in usable(results):
        exp = result["experiment"]
        truth = result.get("ground_truth")
        if exp["backend"] == "estimate" or not truth:
            continue
        estimate = estimates.get(_config_key(exp, exp["backend"]))
        truth_bytes = truth["peak_bytes"]
        # A cpu result's figures are the allocator's blocks labelled by the tracker; the
        # tracker's own peak stands beside the ground truth (older results: the figures').
        tracker_bytes = truth.get("tracker_peak_bytes", result["peak_bytes"])
        rows.append({
            "result": result,
            "truth_bytes": truth_bytes,
            "tracker_bytes": tracker_bytes,
            "tracker_error": tracker_bytes / truth_bytes - 1,
            "estimate_bytes": estimate["peak_bytes"] if estimate else None,
            "estimate_error": estimate["peak_bytes"] / truth_bytes - 1 if estimate else None,
        })
    return rows


def _config_key(exp: dict[str, Any], device: str) -> tuple:
    options = tuple((opt.help, value) for opt, value in step_options_of(exp))
    return (exp["model"], exp["batch_size"], exp["seq_len"], exp["precision"],
            exp["optimizer"], device, options)


def activation_formula_bytes(*, seq_len: int, batch_size: int, hidden: int, heads: int,
                             intermediate: int, element_bytes: int) -> float:
    """Activations one transformer layer saves for backward, after Korthikanti et al. 2022
    ("Reducing Activation Recomputation in Large Transformer Models", eq. 1: per layer
    s·b·h·(34 + 5·a·s/h) bytes with 16-bit tensors, 1-byte dropout masks and FFN = 4h).

    Counted per element so that other element sizes and FFN widths follow: attention keeps
    5 sbh tensors (QKV input, Q, K, V, output-projection input) plus 2 a·s²·b (softmax output,
    dropout output), the MLP sbh + 2 sbf (its two linear inputs and the GELU input), the two
    LayerNorms 2 sbh; three dropout masks of sbh and one of a·s²·b are 1 byte each.
    element_bytes=2 gives the paper's formula; 4 is its fp32 variant, 66 + 9·a·s/h."""
    s, b, h, a, f, e = seq_len, batch_size, hidden, heads, intermediate, element_bytes
    sbh = s * b * h
    return sbh * (8 * e + 2) + 2 * e * s * b * f + (2 * e + 1) * a * s * s * b


def formula_check(result: Result) -> dict[str, Any] | None:
    """The formula beside the measured activations per layer, for eager-attention
    transformers; None where the formula does not apply."""
    arch = result.get("architecture")
    layers = {k: v for k, v in result.get("module_activation_bytes", {}).items()
              if k.startswith("layers.")}
    if not arch or arch.get("attention") != "eager" or not layers:
        return None
    exp = result["experiment"]
    shape = dict(seq_len=exp["seq_len"], batch_size=exp["batch_size"], hidden=arch["hidden"],
                 heads=arch["heads"], intermediate=arch["intermediate"])
    measured = sum(layers.values()) / len(layers)
    paper = activation_formula_bytes(**shape, element_bytes=2)
    fp32 = activation_formula_bytes(**shape, element_bytes=4)
    predicted = fp32 if exp["precision"] == "fp32" else paper
    return {
        "layers": arch["layers"],
        "measured_per_layer": measured,
        "formula_16bit_per_layer": paper,
        "formula_fp32_per_layer": fp32,
        "predicted_per_layer": predicted,
        "variant": "fp32" if exp["precision"] == "fp32" else "16-bit",
        "error": measured / predicted - 1,
    }


def torch_facts(studies: list[StudyResult]) -> dict[str, Any] | None:
    """What the measuring PyTorch said about its number formats, GradScaler and AMP API (the
    `torch_facts` study), with the formats by name; None when no such study was measured."""
    found = first_study(studies, "torch_facts")
    if found is None:
        return None
    data = found["data"]
    return {**data, "by_name": {row["name"]: row for row in data["formats"]}}


def first_study(studies: list[StudyResult], kind: str) -> StudyResult | None:
    """The first study of a kind that did not fail: the one a page reads."""
    return next((s for s in studies if s["study"]["kind"] == kind and not s.get("error")), None)


#: Built-in models and their Hugging Face twins (the same architecture, built by transformers).
HF_TWINS = {"bert-base": "hf:bert-base-uncased", "gpt2-small": "hf:gpt2"}


def hf_parity(results: list[Result]) -> list[dict[str, Any]]:
    """Each built-in model beside its Hugging Face twin at the same settings, same backend
    and modelled device: parameters and peaks, and how far apart the peaks are."""
    def setting(exp: dict[str, Any]) -> tuple:
        return tuple(sorted((k, str(v)) for k, v in exp.items() if k != "model"))

    twins = {(r["experiment"]["model"], setting(r["experiment"])): r for r in usable(results)}
    rows = []
    for result in usable(results):
        exp = result["experiment"]
        twin = twins.get((HF_TWINS.get(exp["model"]), setting(exp)))
        if twin is not None:
            rows.append({"builtin": result, "hf": twin,
                         "same_parameters": result["parameter_count"] == twin["parameter_count"],
                         "difference": twin["peak_bytes"] / result["peak_bytes"] - 1,
                         "gap": parity_gap(result, twin)})
    return rows


def parity_printed(row: dict[str, Any]) -> tuple[str, ...]:
    """A twin pair's figures as the methodology's table prints them: both parameter counts,
    both peaks in MiB and how far apart they are."""
    builtin, hf = row["builtin"], row["hf"]
    return (f"{builtin['parameter_count']:,}", f"{hf['parameter_count']:,}",
            units.mib(builtin["peak_bytes"]), units.mib(hf["peak_bytes"]),
            units.pct(row["difference"], 2))


def parity_table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The methodology's table of twin pairs: pairs at the same settings but for the
    precision, on the same machine, whose every figure prints alike (`parity_printed`) share
    one row; `precisions` names the precisions a row stands for (Words: "AMP bf16 and AMP
    fp16"). A pair that prints differently keeps a row of its own."""
    found: dict[tuple, dict[str, Any]] = {}
    for row in rows:
        builtin = row["builtin"]
        exp = builtin["experiment"]
        key = (row["hf"]["experiment"]["model"],
               tuple(sorted((k, str(v)) for k, v in exp.items() if k != "precision")),
               (builtin.get("environment") or {}).get("device_name"), parity_printed(row))
        found.setdefault(key, {**row, "covers": []})["covers"].append(exp["precision"])
    return [{**row, "precisions": listed([PRECISION_LABELS[p] for p in sorted(row["covers"])])}
            for row in found.values()]


#: How close a category's change must come to a whole number of vocabulary-sized tensors.
VOCAB_TENSOR_TOLERANCE = 0.02


def parity_gap(builtin: Result, hf: Result) -> dict[str, Any] | None:
    """Where a Hugging Face twin's peak differs from the built-in model's, read off what is
    live at the two peaks: for each category that moved by a whole number of the step's
    vocabulary-sized tensors (batch × sequence × vocabulary entries, in FP32 or 16 bits),
    how many and of which width; None where the peaks differ by less than one such tensor
    in every category, or the model has no vocabulary."""
    arch = builtin.get("architecture") or {}
    if not arch.get("vocab"):
        return None
    exp = builtin["experiment"]
    entries = exp["batch_size"] * exp["seq_len"] * arch["vocab"]
    moved = []
    for category, before in builtin["live_at_peak_bytes"].items():
        change = hf["live_at_peak_bytes"].get(category, 0) - before
        for width in (4, 2):
            count = round(abs(change) / (entries * width))
            off = abs(abs(change) / (entries * width) - count)
            if count and off < VOCAB_TENSOR_TOLERANCE * count:
                moved.append({"category": category, "count": count if change > 0 else -count,
                              "bits": 8 * width, "bytes": entries * width, "change": change})
                break
    return {"entries": entries, "moved": moved} if moved else None


def parity_gap_words(row: dict[str, Any]) -> Words | None:
    """A twin pair's gap in words, from parity_gap: the vocabulary-sized tensors one side
    holds and the other does not, and why, where one FP32 tensor among the Hugging Face
    model's temporaries is its loss's upcast of the logits (transformers' causal-LM loss
    calls `logits.float()`); None where no category moved by such a tensor."""
    gap = row["gap"]
    if gap is None:
        return None
    exp = row["builtin"]["experiment"]
    arch = row["builtin"]["architecture"]
    shape = f"{exp['batch_size']} × {exp['seq_len']:,} × {arch['vocab']:,}"
    en, zh = [], []
    for m in sorted(gap["moved"], key=lambda m: -m["count"]):
        name = CATEGORY_LABELS[m["category"]]
        size = f"{shape} × {m['bits'] // 8} B = {units.gib(m['bytes'])} GiB"
        n = abs(m["count"])
        width = "FP32" if m["bits"] == 32 else "16-bit"
        tensors = Words(("one" if n == 1 else str(n)) + f" {width} vocabulary-sized "
                        + ("tensor" if n == 1 else "tensors"),
                        ("一" if n == 1 else str(n)) + f"份{' FP32 ' if m['bits'] == 32 else ' 16 位'}"
                        "词表大小的张量")
        more = m["count"] > 0
        en.append(f"{tensors.en} {'more' if more else 'fewer'} among its "
                  f"{name.en.lower()} at the peak ({size})")
        zh.append(f"峰值时刻的{name.zh}{'多了' if more else '少了'}{tensors.zh}（{size}）")
    upcast = any(m["count"] > 0 and m["bits"] == 32 and m["category"] == "temporaries"
                 and exp["precision"] != "fp32" for m in gap["moved"])
    why = Words("", "")
    if upcast:
        why = Words(": transformers' loss casts the logits to FP32 (`logits.float()`) before "
                    "the cross-entropy, where the built-in model hands it the 16-bit logits",
                    "：transformers 的损失函数先把 logits 转成 FP32（`logits.float()`）再算交叉熵，"
                    "而内置模型直接把 16 位的 logits 交给交叉熵")
    model = markdown_text(row["hf"]["experiment"]["model"])  # Markdown: a code span in `why`
    return written(Words(f"{model} holds " + ", and ".join(en) + why.en + ".",
                         f"{model} " + "，".join(zh) + why.zh + "。"))


def parity_notes(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The twins' gaps explained, one sentence per distinct explanation, headed by the pair
    and the settings it covers; and the largest gap among the pairs with none to explain."""
    notes: dict[tuple, list[str]] = {}
    for row in rows:
        words = parity_gap_words(row)
        if words is not None:
            e = row["builtin"]["experiment"]
            head = (f"{code(e['model'])} / {code(row['hf']['experiment']['model'])}",
                    f"b{e['batch_size']} s{e['seq_len']}")
            notes.setdefault((head, words), []).append(e["precision"])
    rest = [abs(row["difference"]) for row in rows if row["gap"] is None]
    comma = {"en": ", ", "zh": "，"}
    return {"explained": [{"head": written(Words(*(comma[lang].join([*head, markdown_text(
                              listed([PRECISION_LABELS[p] for p in sorted(precisions)])[lang])])
                              for lang in ("en", "zh")))),
                           "words": words}
                          for (head, words), precisions in notes.items()],
            "rest_within": max(rest) if rest else None}


def peak_phase(result: StepResult) -> str | None:
    """The phase (forward, backward, optimizer) in which the step peaks; None if unknown.
    The stored timeline keeps the highest point of each bucket, so its maximum is the peak."""
    timeline, phases = result.get("timeline") or {}, result.get("phases") or []
    ticks = timeline.get("tick") or []
    if not ticks or not phases:
        return None
    series = list((timeline.get("bytes") or {}).values())
    # column sums, a tick at a time (zip walks the series in C: a page reads thousands)
    totals = [sum(column) for column in zip(*series)] if series else [0] * len(ticks)
    at = ticks[max(range(len(ticks)), key=totals.__getitem__)]
    started = [p for p in sorted(phases, key=lambda p: p["tick"]) if p["tick"] <= at]
    return started[-1]["name"] if started else None
