""""Why not a formula": the rules of thumb people use beside this project's estimate.

For each model of the fine-tuning suite at one common setting (decoder LLMs: batch 4,
sequence 2,048; encoders: batch 16, sequence 256; AMP bf16, AdamW, no lever; full fine-tuning
and LoRA rank 16), what each rule of `generator.plan.rules_of_thumb` gives and its signed error
against the estimated allocated peak, (rule − estimate) ÷ estimate. And, where a published
real-GPU measurement exists with a held-out estimate of the same step, the rules at the
measurement's own setting against that measurement.

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
from generator.plan import rules_of_thumb as rules
from generator.results.reference_runs import DATA, HeldOutPoint, held_out
from generator.site.escaping import code, markdown_text
from generator.site.pages.accuracy.held_out import estimated_figure
from generator.site.pages.accuracy.held_out import label as held_out_label
from generator.site.tables import markdown_table
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
#: The rules, in the table's order.
RULES = ("params_times_16", "accelerate", "korthikanti")
#: accelerate's dtype row for a precision: AMP reads the 16-bit row (fp32 master weights).
ACCELERATE_DTYPE = {"fp32": "float32", "amp-fp16": "float16", "fp16": "float16",
                    "amp-bf16": "bfloat16", "bf16": "bfloat16"}
MEASUREMENTS = DATA / "fine_tune_measurements.json"
#: The configs shipped with the package (generator.measure.models.hf_config.SHIPPED), named
#: here: importing that module imports generator.measure, and so PyTorch.
SHIPPED = Path(__file__).parents[3] / "measure" / "models" / "hf_configs"

TEXT: dict[str, Words] = {
    "model": Words("Model", "模型"),
    "method": Words("Method", "方法"),
    "setting": Words("Batch × sequence", "批大小 × 序列长度"),
    "parameters": Words("Trainable / all parameters", "可训练 / 全部参数"),
    "params_times_16": Words("16 B/parameter (GiB, error)", "每参数 16 字节（GiB，误差）"),
    "accelerate": Words("accelerate estimate-memory (GiB, error)",
                        "accelerate estimate-memory（GiB，误差）"),
    "korthikanti": Words("Korthikanti et al. states + activations (GiB, error)",
                         "Korthikanti 等人：模型状态 + 激活值（GiB，误差）"),
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
    """One row per (model, method) at the common setting: the rules' bytes, this estimate's
    peaks and each rule's signed error against the estimated allocated peak. A model or method
    with no error-free estimate at the setting has no row, nor has a model whose config the
    package does not ship (the formulas need its shape). `order`: model ids in the order the
    calculator lists them (models not in it follow, by kind, family and size)."""
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


def _row(result: dict[str, Any], method: str, shape: dict[str, Any],
         task_parameters: int | None) -> dict[str, Any]:
    exp, allocator = result["experiment"], result["allocator"]
    batch, seq = exp["batch_size"], exp["seq_len"]
    parameters, trainable = result["parameter_count"], result["trainable_parameter_count"]
    allocated = allocator["peak_allocated_bytes"]
    size = accelerate_size(shape, r_task(result), task_parameters)
    dtype = ACCELERATE_DTYPE[exp["precision"]]
    by_rule = {
        "params_times_16": rules.params_times_16(parameters, trainable),
        # accelerate knows no LoRA: the same figure for both methods of a model
        "accelerate": None if size is None else rules.accelerate_training_estimate(size, dtype),
        "korthikanti": rules.states_plus_activations(
            parameters, shape["layers"], shape["hidden"], shape["heads"], batch, seq,
            trainable_parameters=trainable, vocabulary=shape["vocab"]),
    }
    return {"model": exp["model"], "label": exp["model"].removeprefix("hf:"), "method": method,
            "task": r_task(result), "batch": batch, "seq": seq, "parameters": parameters,
            "trainable": trainable, "rules": by_rule, "allocated": allocated,
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


def model_config(model: str) -> dict[str, Any] | None:
    """The model's shipped config.json as a dict, or None where the package ships none (the
    site imports nothing of the measuring layer, so hf_config.find_config is not asked)."""
    path = SHIPPED / f"{model.removeprefix('hf:').replace('/', '--')}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _field(config: dict[str, Any], *names: str) -> Any:
    """The first of `names` the config sets, at its top or in a multimodal model's
    text_config (families name fields differently: GPT-2's n_layer is BERT's
    num_hidden_layers)."""
    for part in (config, config.get("text_config") or {}):
        for name in names:
            if part.get(name) is not None:
                return part[name]
    return None


def model_shape(model: str) -> dict[str, Any] | None:
    """Korthikanti's L, h, a and v from the shipped config, plus what accelerate's size
    needs; None for a model without a shipped config."""
    config = model_config(model)
    if config is None:
        return None
    shape = {"layers": _field(config, "num_hidden_layers", "n_layer", "num_layers"),
             "hidden": _field(config, "hidden_size", "n_embd", "d_model"),
             "heads": _field(config, "num_attention_heads", "n_head"),
             "vocab": _field(config, "vocab_size"),
             # transformers' default where a config leaves it out (Gemma's files do)
             "tied": _field(config, "tie_word_embeddings") is not False,
             "labels": len(config.get("id2label") or {}) or 2}
    missing = [k for k in ("layers", "hidden", "heads", "vocab") if shape[k] is None]
    if missing:
        raise ValueError(f"{model}: its config has no {', '.join(missing)} for the formulas")
    return shape


def accelerate_size(shape: dict[str, Any], task: str, task_parameters: int | None) -> int | None:
    """What accelerate sizes: 4 bytes per parameter of the *base* model class (AutoModel,
    float32), tied weights once. The task model's count less its head: an untied LM head
    (vocab × hidden, no bias), or a sequence classifier (hidden × labels + labels, BERT's).
    Approximation: the buffers accelerate also counts (rotary inv_freq, BERT's position and
    token-type ids: 256 B to 8 KiB for the models here) are left out, and a head with a bias
    or another shape than these is not recognised. None without a full fine-tuning result."""
    if task_parameters is None:
        return None
    if task == "sequence-classification":
        head = shape["hidden"] * shape["labels"] + shape["labels"]
    else:
        head = 0 if shape["tied"] else shape["vocab"] * shape["hidden"]
    return 4 * (task_parameters - head)


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
    context, the allocator's cache). The rules take the step's micro-batch (activations of one
    forward pass), Korthikanti's full-recomputation form where the run checkpointed, and
    accelerate's row of the run's precision; Korthikanti's activations stay 16-bit ones for an
    fp32 run, as published; the 16-byte rule and accelerate assume 32-bit
    Adam states even for a run with 8-bit Adam. None of these runs is at the table's setting.
    A measurement whose model has no full fine-tuning result here (for the parameter count)
    or no shipped config has no row."""
    measurements = load_measurements() if measurements is None else measurements
    by_id = {p.id: p for p in (held_out() if points is None else points)}
    counts = task_parameter_counts(results)
    found = []
    for entry in measurements:
        point = by_id.get(entry.get("held_out_id") or "")
        estimate = None if point is None else estimated_figure(point)
        if estimate is None:
            continue
        words = shlex.split(point.command)
        model = next(w for w in words if w.startswith("hf:"))
        task = words[words.index("--hf-task") + 1] if "--hf-task" in words else "auto"
        parameters, shape = counts.get((model, task)), model_shape(model)
        if parameters is None or shape is None:
            continue
        micro = point.batch_size // point.micro_batches
        measured = entry["value_bytes"]
        size = accelerate_size(shape, task, parameters)
        by_rule = {
            "params_times_16": rules.params_times_16(parameters),
            "accelerate": rules.accelerate_training_estimate(
                size, ACCELERATE_DTYPE[point.precision]),
            "korthikanti": rules.states_plus_activations(
                parameters, shape["layers"], shape["hidden"], shape["heads"], micro,
                point.seq_len, recompute=point.checkpointing, vocabulary=shape["vocab"]),
        }
        found.append({"id": entry["id"], "model": model, "label": held_out_label(point),
                      "gpu": point.source.gpu, "figure": point.source.figure,
                      "source_url": point.source.url, "measured": measured,
                      "estimate": estimate, "estimate_error": error(estimate, measured),
                      "rules": by_rule,
                      "errors": {k: error(v, measured) for k, v in by_rule.items()}})
    return found


def load_measurements(path: Path = MEASUREMENTS) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))


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
    headers = [TEXT[k][lang] for k in ("model", "method", "setting", "parameters", *RULES,
                                       "allocated", "reserved")]
    body = [[code(r["label"]), TEXT[r["method"]][lang], f"{r['batch']} × {r['seq']:,}",
             f"{count(r['trainable'], lang)} / {count(r['parameters'], lang)}",
             *[_with_error(r["rules"][k], r["errors"][k]) for k in RULES],
             gib(r["allocated"]), gib(r["reserved"])] for r in found]
    return markdown_table(headers, body, numeric_from=2)


def published_table(found: Sequence[dict[str, Any]], lang: str) -> Markup:
    """The published measurements' table: each rule and this estimate against the run."""
    headers = [TEXT["measurement"][lang], TEXT["published"][lang], TEXT["estimate_vs"][lang],
               *[TEXT[k][lang] for k in RULES]]
    body = [[f"[{markdown_text(r['label'][lang])}]({r['source_url']}) · "
              f"{markdown_text(r['gpu'])} · {markdown_text(r['figure'])}",
             gib(r["measured"]), _with_error(r["estimate"], r["estimate_error"]),
             *[_with_error(r["rules"][k], r["errors"][k]) for k in RULES]] for r in found]
    return markdown_table(headers, body)


#: Each rule as a sentence names it.
RULE_NAMES = {"params_times_16": Words("16 bytes per parameter", "每参数 16 字节"),
              "accelerate": Words("accelerate's estimate-memory", "accelerate 的 estimate-memory"),
              "korthikanti": Words("Korthikanti et al.'s states plus activations",
                                   "Korthikanti 等人的状态加激活值公式")}


def rule_words(rule: str, span: dict[str, float]) -> Words:
    """One rule's errors over the rows, and which way they go: always under the estimate,
    always over, or either way (the sign read off the range, never assumed)."""
    low, high = signed_pct(span["min"]), signed_pct(span["max"])
    name = RULE_NAMES[rule]
    if span["max"] < 0:
        return Words(f"{name.en} always falls short, by {low} to {high}",
                     f"{name.zh}总是偏低，偏差 {low} 到 {high}")
    if span["min"] > 0:
        return Words(f"{name.en} always comes out higher, by {low} to {high}",
                     f"{name.zh}总是偏高，偏差 {low} 到 {high}")
    return Words(f"{name.en} errs both ways, from {low} to {high}",
                 f"{name.zh}时高时低，偏差从 {low} 到 {high}")


def summary(found: Sequence[dict[str, Any]]) -> Words | None:
    """What the table shows, rule by rule, from the rows' own errors; None without rows."""
    ranges = error_ranges(found)
    if not ranges:
        return None
    parts = [rule_words(rule, span) for rule, span in ranges.items()]
    return Words("Against this estimate's allocated peak, " + "; ".join(p.en for p in parts) + ".",
                 "与本站估算的已分配峰值相比，" + "；".join(p.zh for p in parts) + "。")
