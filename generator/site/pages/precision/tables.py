"""The precision page's Markdown tables, in Chinese or English: the number formats, the
training runs, gradient underflow per group, and the rounding error of each cast."""

from __future__ import annotations

import math
from typing import Any

from markupsafe import Markup

from generator.site.escaping import markdown_text as escape
from generator.site.labels import PRECISION_LABELS
from generator.site.pages.precision.charts import REFERENCE_COLOR, power_of_two
from generator.site.tables import markdown_table
from generator.site.tables import precision_swatch as swatch
from generator.units import pct
from generator.words import Words

_TEXT: dict[str, Words] = {
    "format": Words("Format: bits (exponent / mantissa)", "格式：位数（指数 / 尾数）"),
    "max": Words("Largest", "最大值"), "normal": Words("Smallest normal", "最小正规数"),
    "subnormal": Words("Smallest subnormal", "最小次正规数"), "eps": Words("eps", "eps"),
    "decades": Words("Decades", "数量级"),
    "run": Words("Run", "运行"), "seed": Words("seed {}", "种子 {}"),
    "final": Words("Training loss, last {} steps", "训练损失（最后 {} 步）"),
    "eval": Words("Held-out loss", "留出集损失"), "acc": Words("Held-out accuracy", "留出集准确率"),
    "gap": Words("Held-out loss minus FP32", "留出集损失减 FP32"), "time": Words("Time (s)", "耗时（秒）"),
    "scaler": Words("GradScaler", "GradScaler"),
    "scaler_cell": Words("{k} steps skipped, scale {s}", "跳过 {k} 步，缩放系数 {s}"),
    "gradients": Words("Gradients", "梯度"), "values": Words("Non-zero values", "非零值"),
    "fp16_lost": Words("fp16", "fp16"), "of_which_zero": Words("of which 0", "其中变成 0"),
    "scaled_lost": Words("fp16 after ×{}", "fp16，先乘 {}"), "bf16_lost": Words("bf16", "bf16"),
    "cast": Words("Cast", "转换"),
    "error_parameters": Words("Mean relative error, parameter gradients", "平均相对误差：参数梯度"),
    "error_activations": Words("Mean relative error, gradients between blocks", "平均相对误差：块与块之间的梯度"),
    "fp16": Words("fp16", "fp16"), "fp16_scaled": Words("fp16 after ×{}", "fp16，先乘 {}"),
    "bf16": Words("bf16", "bf16"),
    "g_embeddings": Words("Embeddings", "嵌入层"),
    "g_attention_qk": Words("Attention: query and key", "注意力：query 与 key"),
    "g_attention": Words("Attention: other projections", "注意力：其余投影"),
    "g_attention_vo": Words("Attention: value and output", "注意力：value 与输出投影"),
    "g_mlp": Words("MLP", "前馈层（MLP）"), "g_layernorm": Words("LayerNorm", "LayerNorm"),
    "g_head": Words("Output head (its own weights)", "输出头（自有权重）"),
    "g_parameters": Words("All parameter gradients", "全部参数梯度"),
    "g_activations": Words("Gradients between blocks", "块与块之间的梯度"),
}


def _t(key: str, lang: str) -> str:
    return _TEXT[key][lang]


def share(fraction: float) -> str:
    """A share in percent with two significant digits when it is small: 0.042 %, not 0.0 %;
    an exact zero prints as 0."""
    if fraction == 0:
        return "0"
    if fraction >= 1e-3:
        return pct(fraction)
    digits = 1 - math.floor(math.log10(fraction * 100))
    return f"{fraction * 100:.{digits}f}".rstrip("0") + " %"


def group_label(name: str, groups: list[dict[str, Any]], lang: str) -> str:
    """A group's name; `attention` is "value and output" when query and key are apart."""
    if name == "attention" and any(g["name"] == "attention_qk" for g in groups):
        return _t("g_attention_vo", lang)
    return _t(f"g_{name}", lang)


def ranges_table(ranges: dict[str, dict[str, Any]], lang: str) -> Markup:
    # Name and bits share a column: seven columns would not fit the page's text width.
    rows = [[f"`{r['name']}`: {r['bits']} ({r['exponent_bits']} / {r['mantissa_bits']})",
             f"{r['max']:.3g}", f"{r['smallest_normal']:.3g}", f"{r['smallest_subnormal']:.3g}",
             f"{r['eps']:.3g}", f"{r['decades']:.1f}"] for r in ranges.values()]
    headers = [_t(k, lang) for k in ("format", "max", "normal", "subnormal", "eps", "decades")]
    return markdown_table(headers, rows)


def runs_table(view: dict[str, Any], lang: str) -> Markup:
    """One row per run: where its loss ended, what it learned, how far from FP32, how long."""
    scaled = any(r.get("skipped_steps") is not None for r in view["runs"])
    rows = []
    for run in view["runs"]:
        name = swatch(run["precision"], lang) if not run["reference"] else (
            f'<span class="swatch" style="background:{REFERENCE_COLOR}"></span>'
            + escape(PRECISION_LABELS["fp32"][lang]))
        opening, closing = (" (", ")") if lang == "en" else ("（", "）")
        name += opening + escape(_t("seed", lang).format(run["seed"])) + closing
        row = [name, f"{run['final_loss']:.4f}", f"{run['eval_loss']:.4f}",
               pct(run["eval_accuracy"]),
               "–" if run is view["fp32"] else f"{run['eval_loss_difference']:+.4f}",
               f"{run['seconds']:.1f}"]
        if scaled:
            row.append("–" if run.get("skipped_steps") is None else _t("scaler_cell", lang).format(
                k=run["skipped_steps"], s=power_of_two(round(math.log2(run["final_scale"])))))
        rows.append(row)
    headers = [_t("run", lang), _t("final", lang).format(view["final_steps"]), _t("eval", lang),
               _t("acc", lang), _t("gap", lang), _t("time", lang)]
    return markdown_table(headers + ([_t("scaler", lang)] if scaled else []), rows)


def underflow_table(view: dict[str, Any], lang: str) -> Markup:
    """Per group, the share of non-zero gradient values each cast leaves below the normal
    range (subnormal or 0), and for plain fp16 how much of it is 0."""
    scale = power_of_two(view["scale_log2"])
    rows = []
    for g in view["groups"]:
        label = escape(group_label(g["name"], view["groups"], lang))
        if g["name"] == "parameters":
            label = f"**{label}**"
        rows.append([label, f"{g['nonzero']:,}", share(g["fp16"]["lost_fraction"]),
                     share(g["fp16"]["zero_fraction"]), share(g["fp16_scaled"]["lost_fraction"]),
                     share(g["bf16"]["lost_fraction"])])
    headers = [_t("gradients", lang), _t("values", lang), _t("fp16_lost", lang),
               _t("of_which_zero", lang), _t("scaled_lost", lang).format(scale),
               _t("bf16_lost", lang)]
    return markdown_table(headers, rows)


def rounding_table(view: dict[str, Any], ranges: dict[str, dict[str, Any]], lang: str) -> Markup:
    """Per cast: the format's eps beside the mean relative error it made on the gradients."""
    scale = power_of_two(view["scale_log2"])
    shown = [g for g in (view["parameters"], view["activations"]) if g]
    rows = []
    for cast, fmt in (("fp16", "fp16"), ("fp16_scaled", "fp16"), ("bf16", "bf16")):
        rows.append([_t(cast, lang).format(scale), f"{ranges[fmt]['eps']:.3g}"]
                    + [f"{g[cast]['mean_relative_error']:.2e}" for g in shown])
    headers = [_t("cast", lang), _t("eps", lang)] + [_t(f"error_{g['name']}", lang)
                                                    for g in shown]
    return markdown_table(headers, rows)
