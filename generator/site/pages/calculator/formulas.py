""""Why not a formula": the rules of thumb people use beside this project's estimate.

For each model of the fine-tuning suite at one common setting (decoder LLMs: batch 4,
sequence 2,048; encoders: batch 16, sequence 256; AMP bf16, AdamW, no lever; full fine-tuning
and LoRA rank 16), what each rule of `generator.plan.rules_of_thumb` gives and its signed error
against the estimated allocated peak, (rule − estimate) ÷ estimate. And, where a published
real-GPU measurement exists with a held-out estimate of the same step, the rules at the
measurement's own setting against that measurement.

Each rule is one record of rules.py (RULES): the bytes it gives for a step, its column's
header, and what the page says it computes, side by side; here, the steps it is applied to.

Pure arithmetic on results and shipped JSON files: no PyTorch (the site renders without it).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from markupsafe import Markup

from generator.experiment.experiment import options, step_options_of
from generator.results.reference_runs import DATA, HeldOutPoint, held_out
from generator.site.escaping import code, markdown_text
from generator.site import held_out as accuracy
from generator.site.held_out import estimated_figure
from generator.site.held_out import label as held_out_label
from generator.site.pages.calculator.rules import (
    RULE_NAMES,
    RULES,
    Step,
    figures,
    model_shape,
    task_of,
)
from generator.site.tables import markdown_table
from generator.site.wording import spaced
from generator.units import gib
from generator.words import Words

#: The table's setting, by kind of model: (batch, sequence, hf_task of the suite).
DECODER = {"batch_size": 4, "seq_len": 2048, "hf_task": "auto"}
ENCODER = {"batch_size": 16, "seq_len": 256, "hf_task": "sequence-classification"}
COMMON = {"precision": "amp-bf16", "optimizer": "adamw", "backend": "estimate", "gpu": ""}
LORA_RANK = 16
METHODS = ("full", "lora")
#: Step options that make the method or the task, not a lever.
NOT_LEVERS = ("lora_rank", "lora_targets", "lora_dropout", "quantization", "hf_task")
MEASUREMENTS = DATA / "fine_tune_measurements.json"
TEXT: dict[str, Words] = {
    "model": Words("Model", "模型"),
    "method": Words("Method", "方法"),
    "setting": Words("Batch × sequence", "批大小 × 序列长度"),
    "parameters": Words("Trainable / all parameters", "可训练 / 全部参数"),
    "allocated": Words("This estimate (allocated peak, GiB)", "本站估算（已分配峰值，GiB）"),
    "reserved": Words("This estimate (reserved peak, GiB)", "本站估算（已预留峰值，GiB）"),
    "measurement": Words("Measurement", "测量"),
    "published": Words("Published (GiB)", "公开数字（GiB）"),
    "estimate_vs": Words("This estimate, same kind of figure (GiB, error)",
                         "本站估算，同类数字（GiB，误差）"),
    "full": Words("full fine-tuning", "全参数微调"),
    "lora": Words(f"LoRA (rank {LORA_RANK})", f"LoRA（秩 {LORA_RANK}）"),
}


# --- the common setting ------------------------------------------------------------------

def method_at_setting(exp: dict[str, Any]) -> str | None:
    """"full" or "lora" if the experiment is a point of the table's setting, else None."""
    setting = ENCODER if exp.get("hf_task") == ENCODER["hf_task"] else DECODER
    if any(exp.get(k) != v for k, v in {**COMMON, **setting}.items()):
        return None
    skip = {id(options()[name]) for name in NOT_LEVERS}
    if any(id(opt) not in skip for opt, _ in step_options_of(exp)):
        return None  # a lever (checkpointing, fused kernels, accumulation, ...)
    if exp.get("quantization", "none") != "none":
        return None  # QLoRA: no rule of thumb has a form for 4-bit weights
    return {0: "full", LORA_RANK: "lora"}.get(exp.get("lora_rank", 0))


def rows(results: Sequence[dict[str, Any]], order: Sequence[str] | None = None
         ) -> list[dict[str, Any]]:
    """One row per (model, method) at the common setting: the step the rules take, their
    bytes, this estimate's peaks and each rule's signed error against the estimated allocated
    peak. A model or method with no error-free estimate at the setting has no row, nor has a
    model whose config the package does not ship (the formulas need its shape). `order`:
    model ids in the order the calculator lists them (models not in it follow, by kind,
    family and size)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for result in sorted(results, key=lambda r: r.get("key", "")):  # first key wins a tie
        exp = result["experiment"]
        method = method_at_setting(exp)
        if method is None or result.get("error") or not result.get("allocator"):
            continue
        found.setdefault((exp["model"], method), result)
    counts = task_parameter_counts(results)
    table = [_row(result, method, shape, counts.get((r_model(result), r_task(result))))
             for (model, method), result in found.items()
             if (shape := model_shape(model)) is not None]
    return sorted(table, key=_order_key(order))


def step_of(result: dict[str, Any], shape: dict[str, Any], task_parameters: int | None) -> Step:
    """The step a result estimated, as the rules take it."""
    exp = result["experiment"]
    micro = exp.get("micro_batches", 1) or 1
    return Step(model=exp["model"], label=exp["model"].removeprefix("hf:"),
                parameters=result["parameter_count"],
                trainable=result["trainable_parameter_count"], shape=shape,
                task=task_of(exp["model"], r_task(result)), task_parameters=task_parameters,
                batch=exp["batch_size"] // micro, seq=exp["seq_len"],
                precision=exp["precision"], optimizer=exp["optimizer"],
                checkpointing=bool(exp.get("checkpointing")),
                attention=result.get("attention") or (result.get("architecture") or {}).get(
                    "attention"))


def _row(result: dict[str, Any], method: str, shape: dict[str, Any],
         task_parameters: int | None) -> dict[str, Any]:
    exp, allocator = result["experiment"], result["allocator"]
    step = step_of(result, shape, task_parameters)
    allocated = allocator["peak_allocated_bytes"]
    by_rule = figures(step)
    return {"model": exp["model"], "label": step.label, "method": method,
            "task": r_task(result), "batch": step.batch, "seq": step.seq,
            "parameters": step.parameters, "trainable": step.trainable, "step": step,
            "rules": by_rule, "allocated": allocated,
            "reserved": allocator["peak_reserved_bytes"], "tensors": result["peak_bytes"],
            "errors": {k: error(v, allocated) for k, v in by_rule.items()},
            "key": result.get("key")}


def error(rule: int | None, reference: int) -> float | None:
    """Signed relative error: (rule − reference) ÷ reference; None without a rule figure."""
    return None if rule is None else (rule - reference) / reference


def error_ranges(found: Sequence[dict[str, Any]], method: str | None = None
                 ) -> dict[str, dict[str, float]]:
    """Per rule, the smallest and largest error over the rows (of one method if given), as
    data for the sentence the template prints: {"params_times_16": {"min": …, "max": …}, …}.
    A rule with no error in any row is left out."""
    ranges = {}
    for rule in RULES:
        errors = [r["errors"][rule] for r in found
                  if r["errors"][rule] is not None and method in (None, r["method"])]
        if errors:
            ranges[rule] = {"min": min(errors), "max": max(errors)}
    return ranges


# --- what each model is --------------------------------------------------------------------

def r_model(result: dict[str, Any]) -> str:
    return result["experiment"]["model"]


def r_task(result: dict[str, Any]) -> str:
    return result["experiment"].get("hf_task", "auto")


def task_parameter_counts(results: Sequence[dict[str, Any]]) -> dict[tuple[str, str], int]:
    """(model, hf_task) → the task model's parameter count, read off any full fine-tuning
    result (a LoRA result's count includes the adapters)."""
    counts = {}
    for result in results:
        exp = result["experiment"]
        if not exp.get("lora_rank") and result.get("parameter_count") and not result.get("error"):
            counts.setdefault((r_model(result), r_task(result)), result["parameter_count"])
    return counts


def _family(model: str) -> str:
    """"hf:meta-llama/Llama-3.2-1B" → "llama": the letters that start the model's name."""
    name = model.removeprefix("hf:").rsplit("/", 1)[-1]
    return re.match(r"[A-Za-z]*", name).group(0).lower()


def _order_key(order: Sequence[str] | None):
    place = {model: i for i, model in enumerate(order or ())}

    def key(row: dict[str, Any]) -> tuple:
        return (place.get(row["model"], len(place)), row["task"] == ENCODER["hf_task"],
                _family(row["model"]), row["parameters"], row["model"],
                METHODS.index(row["method"]))
    return key


# --- published measurements ----------------------------------------------------------------

def _flag(words: list[str], flag: str, default: str | None = None) -> str | None:
    return words[words.index(flag) + 1] if flag in words else default


def published(results: Sequence[dict[str, Any]], measurements: list[dict[str, Any]] | None = None,
              points: list[HeldOutPoint] | None = None) -> list[dict[str, Any]]:
    """The published real-GPU measurements (fine_tune_measurements.json) that are held-out
    points with an estimate (held_out.json): the measurement, this project's estimate as
    recorded there, and the rules at the measurement's own setting, each with its signed
    error against the measurement, (figure − measured) ÷ measured.

    What is comparable: the estimate's figure is the one of the kind the source printed
    (held_out.estimated_figure: for nvidia-smi, the reserved peak plus the CUDA context the
    source read), so its error is like for like. The rules predict no particular figure of a
    real GPU: they are set against what the source printed as a reader deciding "will it fit"
    would set them, so their errors include what they leave out by construction (the CUDA
    context, the allocator's cache). The rules take the step as the estimate's command gives
    it (step_of_point): its micro-batch, task, precision and checkpointing. None of these runs
    is at the table's setting. A measurement whose model has no full fine-tuning result here
    (for the parameter count) or no shipped config has no row."""
    measurements = load_measurements() if measurements is None else measurements
    by_id = {p.id: p for p in (held_out() if points is None else points)}
    counts = task_parameter_counts(results)
    found = []
    for entry in measurements:
        point = by_id.get(entry.get("held_out_id") or "")
        estimate = None if point is None else estimated_figure(point)
        if estimate is None:
            continue
        step = step_of_point(point, counts)
        if step is None:
            continue
        measured = entry["value_bytes"]
        by_rule = figures(step)
        found.append({"id": entry["id"], "model": step.model, "label": held_out_label(point),
                      "point": point, "step": step,
                      "gpu": point.source.gpu, "figure": point.source.figure,
                      "source_url": point.source.url, "measured": measured,
                      "estimate": estimate, "estimate_error": error(estimate, measured),
                      "rules": by_rule,
                      "errors": {k: error(v, measured) for k, v in by_rule.items()}})
    return found


def step_of_point(point: HeldOutPoint, counts: dict[tuple[str, str], int]) -> Step | None:
    """A held-out point's step as its estimate's command gives it; None without the model's
    parameter count (a full fine-tuning result) or shipped config."""
    words = shlex.split(point.command)
    model = next(w for w in words if w.startswith("hf:"))
    hf_task = _flag(words, "--hf-task", "auto")
    parameters, shape = counts.get((model, hf_task)), model_shape(model)
    if parameters is None or shape is None:
        return None
    return Step(model=model, label=model.removeprefix("hf:"), parameters=parameters,
                trainable=parameters, shape=shape, task=task_of(model, hf_task),
                task_parameters=parameters, batch=point.batch_size // point.micro_batches,
                seq=point.seq_len, precision=point.precision,
                optimizer=_flag(words, "--optimizer", "adamw"),
                checkpointing=point.checkpointing, attention=_flag(words, "--attention"))


def published_intro(found: Sequence[dict[str, Any]], table_rows: Sequence[dict[str, Any]]
                    ) -> Words:
    """Whether any published run is at a setting of the table (batch, sequence, precision)."""
    settings = {(r["step"].batch, r["step"].seq, r["step"].precision) for r in table_rows}
    at = [r for r in found if (r["step"].batch, r["step"].seq, r["step"].precision) in settings]
    if not at:
        return Words("No published real-GPU measurement of these models at the table's "
                     "settings was found. The rules and this project's held-out estimates meet "
                     "published runs at the runs' own settings instead:",
                     "没有找到这些模型在上表设置下的公开真实 GPU 测量。下面改在公开运行自己的设置下，"
                     "把各公式和本站的留出估算与它们对照：")
    return Words(f"{len(at)} of the published runs below are at a setting of the table; the "
                 "rules and this project's held-out estimates meet each at its own setting:",
                 f"下面的公开运行中有 {len(at)} 个与上表的某个设置相同；各公式和本站的留出估算"
                 "都在每个运行自己的设置下与它对照：")


def published_sources(found: Sequence[dict[str, Any]],
                      points: list[HeldOutPoint] | None = None) -> list[Words]:
    """One paragraph per source of the published rows, from held_out.json: what it ran and
    printed, how many of its points the table shows, the versions it states (or its date
    says) beside the estimates', the GPU the estimates model, and what else they substitute
    (the source's notes). The accuracy page's own sentences (site/held_out)."""
    points = held_out() if points is None else points
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in found:
        groups.setdefault(row["point"].source.id, []).append(row)
    said = []
    for rows_of in groups.values():
        source = rows_of[0]["point"].source
        estimated = [p for p in points if p.source.id == source.id and p.estimated]
        ran = {k: sorted({r["point"].versions[k] for r in rows_of if k in r["point"].versions})
               for k in ("torch", "transformers", "bitsandbytes")}
        shown, of = len(rows_of), len(estimated)
        count = (Words(f"all {of} of its estimated points, in the table below",
                       f"它已估算的 {of} 个数据点全部列在下表")
                 if shown == of else
                 Words(f"{shown} of its {of} estimated points, in the table below",
                       f"下表列出它已估算的 {of} 个数据点中的 {shown} 个"))
        name = markdown_text(source.label.en), markdown_text(source.label.zh)
        parts = [accuracy.compared(source), accuracy.versions(source, ran),
                 accuracy.modelled(source, sorted({r["point"].modelled_gpu for r in rows_of})),
                 source.notes]
        said.append(Words(
            f"[{name[0]}]({source.url}) ({source.date}), {markdown_text(source.model_name)} on "
            f"a {markdown_text(source.gpu)}: {count.en}. "
            + " ".join(markdown_text(p.en) for p in parts),
            spaced(f"[{name[1]}]({source.url})（{source.date}），", markdown_text(source.gpu),
                   "上的", markdown_text(source.model_name), f"：{count.zh}。")
            + "".join(markdown_text(p.zh) for p in parts)))
    return said


def load_measurements(path: Path = MEASUREMENTS) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))


def unlisted_points(measurements: list[dict[str, Any]] | None = None,
                    points: list[HeldOutPoint] | None = None) -> list[HeldOutPoint]:
    """The held-out points of a source the measurements draw on that no measurement lists:
    a point left out of the published table without a word (none, while the file is whole)."""
    measurements = load_measurements() if measurements is None else measurements
    points = held_out() if points is None else points
    listed_ids = {m.get("held_out_id") for m in measurements}
    sources = {p.source.id for p in points if p.id in listed_ids}
    return [p for p in points if p.source.id in sources and p.id not in listed_ids]


# --- tables ------------------------------------------------------------------------------

def signed_pct(fraction: float | None) -> str:
    """A signed error in whole percent: "−38 %", "+12 %", "0 %"; "–" for none."""
    if fraction is None:
        return "–"
    value = round(fraction * 100)
    return f"{'+' if value > 0 else '−' if value < 0 else ''}{abs(value)} %"


def count(n: int, lang: str) -> str:
    """A parameter count: "1.24 B" / "12.4 亿", "1.70 M" / "170 万"."""
    if lang == "zh":
        return f"{n / 1e8:.1f} 亿" if n >= 1e8 else f"{n / 1e4:,.0f} 万"
    return f"{n / 1e9:.2f} B" if n >= 1e9 else f"{n / 1e6:.2f} M"


def _with_error(nbytes: int | None, fraction: float | None) -> str:
    return "–" if nbytes is None else f"{gib(nbytes)} ({signed_pct(fraction)})"


def table(found: Sequence[dict[str, Any]], lang: str) -> Markup:
    """The common setting's table in Markdown: the rules beside this estimate's peaks."""
    steps = [r["step"] for r in found]
    headers = [*(TEXT[k][lang] for k in ("model", "method", "setting", "parameters")),
               *(rule.header(steps)[lang] for rule in RULES.values()),
               TEXT["allocated"][lang], TEXT["reserved"][lang]]
    body = [[code(r["label"]), TEXT[r["method"]][lang], f"{r['batch']} × {r['seq']:,}",
             f"{count(r['trainable'], lang)} / {count(r['parameters'], lang)}",
             *[_with_error(r["rules"][k], r["errors"][k]) for k in RULES],
             gib(r["allocated"]), gib(r["reserved"])] for r in found]
    return markdown_table(headers, body, numeric_from=2)


def published_table(found: Sequence[dict[str, Any]], lang: str) -> Markup:
    """The published measurements' table: each rule and this estimate against the run."""
    steps = [r["step"] for r in found]
    headers = [TEXT["measurement"][lang], TEXT["published"][lang], TEXT["estimate_vs"][lang],
               *(rule.header(steps)[lang] for rule in RULES.values())]
    body = [[f"[{markdown_text(r['label'][lang])}]({r['source_url']}) · "
              f"{markdown_text(r['gpu'])} · {markdown_text(r['figure'])}",
             gib(r["measured"]), _with_error(r["estimate"], r["estimate_error"]),
             *[_with_error(r["rules"][k], r["errors"][k]) for k in RULES]] for r in found]
    return markdown_table(headers, body)


def rule_words(rule: str, span: dict[str, float]) -> Words:
    """One rule's errors over the rows, and which way they go: always under the estimate,
    always over, or either way (the sign read off the range, never assumed)."""
    low, high = signed_pct(span["min"]), signed_pct(span["max"])
    name = RULE_NAMES[rule]
    if span["max"] < 0:
        return Words(f"{name.en} always falls short, by {low} to {high}",
                     spaced(name.zh, f"总是偏低，偏差 {low} 到 {high}"))
    if span["min"] > 0:
        return Words(f"{name.en} always comes out higher, by {low} to {high}",
                     spaced(name.zh, f"总是偏高，偏差 {low} 到 {high}"))
    return Words(f"{name.en} errs both ways, from {low} to {high}",
                 spaced(name.zh, f"时高时低，偏差从 {low} 到 {high}"))


def summary(found: Sequence[dict[str, Any]]) -> Words | None:
    """What the table shows, rule by rule, from the rows' own errors; None without rows."""
    ranges = error_ranges(found)
    if not ranges:
        return None
    parts = [rule_words(rule, span) for rule, span in ranges.items()]
    return Words("Against this estimate's allocated peak, " + "; ".join(p.en for p in parts) + ".",
                 "与本站估算的已分配峰值相比，" + "；".join(p.zh for p in parts) + "。")
