"""The levers page's tables, in Chinese or English: the ranking by peak saving, the
combinations, and the step times measured with and without each lever."""

from __future__ import annotations

from html import escape
from typing import Any

from markupsafe import Markup

from generator.site.labels import BACKEND_LABELS
from generator.site.tables import markdown_table, swatch
from generator.units import gib, mib, pct
from generator.words import Words

Row = dict[str, Any]

#: Each lever's name; `-off` names the opposite, for levers that PyTorch already applies.
LABELS: dict[str, Words] = {
    "checkpointing": Words("Activation checkpointing", "激活检查点"),
    "sdpa": Words("SDPA attention", "融合注意力 SDPA"),
    "amp-bf16": Words("AMP bf16", "AMP bf16"),
    "amp-fp16": Words("AMP fp16", "AMP fp16"),
    "sgd": Words("SGD (momentum) for AdamW", "SGD（动量）代替 AdamW"),
    "set-to-none": Words("`set_to_none=True`", "`set_to_none=True`"),
    "set-to-none-off": Words("`set_to_none=False`", "`set_to_none=False`"),
    "fused": Words("Fused AdamW", "fused AdamW"),
    "for-loop": Words("For-loop AdamW", "for-loop AdamW"),
    "accumulation": Words("Gradient accumulation", "梯度累积"),
    "masked-logits": Words("Logits at masked positions only", "只在遮盖位置算 logits"),
    "adamw-8bit": Words("8-bit AdamW (bitsandbytes)", "8 位 AdamW（bitsandbytes）"),
    "lora": Words("LoRA (PEFT, adapters only)", "LoRA（PEFT，只训练适配器）"),
    "amp-bf16+sdpa": Words("AMP bf16 + SDPA", "AMP bf16 + SDPA"),
    "amp-bf16+sdpa+checkpointing": Words("AMP bf16 + SDPA + checkpointing",
                                         "AMP bf16 + SDPA + 激活检查点"),
    "baseline": Words("Baseline", "基线"),
}

TEXT: dict[str, Words] = {
    "rank": Words("#", "#"),
    "lever": Words("Lever", "手段"),
    "levers": Words("Levers together", "组合"),
    "peaks": Words("Peak (GiB)", "峰值（GiB）"),
    "peak": Words("Peak (GiB)", "峰值（GiB）"),
    "run_peaks": Words("Peak GiB (without → with)", "峰值 GiB（不用 → 用）"),
    "saving": Words("Saving", "节省"),
    "saving_base": Words("Saving on the baseline", "比基线节省"),
    "acts_on": Words("Acts on", "作用于"),
    "time": Words("Step time", "训练步耗时"),
    "best_part": Words("Best of its parts alone", "其中单项最好的"),
    "in_optimizer": Words(" (optimizer step)", "（优化器步内）"),
    "default": Words(" (default)", "（默认）"),
    "not_measured": Words("–", "–"),
    "source": Words("Source", "来源"),
    "setting": Words("Setting", "配置"),
    "seconds": Words("s/step (without → with)", "秒/步（不用 → 用）"),
    "colon": Words(": ", "："),
    "change": Words("Change", "变化"),
    "batch": Words("batch {b}, sequence {s}", "batch {b}，序列 {s}"),
    "cores": Words(" ({n} cores)", "（{n} 核）"),
}
#: Where a step time was measured, in a word.
WHERE = {"cpu": Words("CPU", "CPU"), "cuda": Words("GPU", "GPU")}
NBSP = "\u00a0"


def label(lever_id: str, lang: str) -> str:
    return LABELS[lever_id][lang]


def signed_pct(ratio: float) -> str:
    """A step-time ratio as a change: 1.42 → '+42.0 %', 0.78 → '−22.0 %'."""
    change = ratio - 1
    return ("+" if change >= 0 else "−") + pct(abs(change))


def time_cell(row: Row, lang: str) -> str:
    cost = row["cost"]
    if not cost:
        return TEXT["not_measured"][lang]
    return nowrap(signed_pct(cost["ratio"])) + f"<br>{WHERE[cost['backend']][lang]}"


def saving_cell(row: Row) -> str:
    return nowrap(f"{gib(row['saving_bytes'])} GiB") + "<br>" + nowrap(pct(row["saving"]))


def nowrap(text: str) -> str:
    """Numbers and their units stay on one line in a narrow column."""
    return text.replace(" ", NBSP)


def ranking(rows: list[Row], lang: str) -> Markup:
    """The levers by how much they lower the example's peak; the category each acts on, how
    much of it goes, and the step time it costs where a real run measured it."""
    mixed = len({row["backend"] for row in rows}) > 1
    headers = [TEXT[k][lang] for k in ("rank", "lever", "acts_on", "peaks", "saving", "time")]
    if mixed:
        headers.append(TEXT["source"][lang])
    lines = []
    for row in rows:
        name = label(row["id"], lang) + (TEXT["default"][lang] if row["in_baseline"] else "")
        acts = swatch(row["category"], lang) + (TEXT["in_optimizer"][lang] if row["phase"] else "")
        acts += "<br>" + nowrap(f"{mib(row['category_before'])} → {mib(row['category_after'])} MiB")
        cells = [str(row["rank"]), name, acts,
                 nowrap(f"{gib(row['ref_peak'])} → **{gib(row['peak'])}**"),
                 saving_cell(row), time_cell(row, lang)]
        if mixed:
            cells.append(escape(BACKEND_LABELS[row["backend"]][lang]))
        lines.append(cells)
    return markdown_table(headers, lines, numeric_from=3)


def combos(rows: list[Row], lang: str) -> Markup:
    """Levers together against the baseline, and beside the best of their parts alone."""
    headers = [TEXT[k][lang] for k in ("levers", "best_part", "peak", "saving_base", "time")]
    lines = []
    for row in rows:
        part = row["best_part"]
        best = f"{label(part['id'], lang)}: {nowrap(gib(part['peak']) + ' GiB')}" if part else "–"
        lines.append([label(row["id"], lang), best, f"**{gib(row['peak'])}**",
                      saving_cell(row), time_cell(row, lang)])
    return markdown_table(headers, lines, numeric_from=2)


def costs(rows: list[Row], lang: str) -> Markup:
    """The step times behind the 'step time' column: which runs, where, how long."""
    headers = [TEXT[k][lang] for k in ("lever", "source", "run_peaks", "seconds", "change")]
    lines = []
    for row in rows:
        cost = row["cost"]
        machine = cost["device_name"] or cost["cpu"] or cost["machine"]
        if cost["backend"] == "cpu" and cost["cpu_count"]:
            machine += TEXT["cores"][lang].format(n=cost["cpu_count"])
        setting = f"{cost['model']}, " + TEXT["batch"][lang].format(b=cost["batch_size"],
                                                                     s=cost["seq_len"])
        where = BACKEND_LABELS[cost["backend"]][lang] + TEXT["colon"][lang] + machine
        lines.append([label(row["id"], lang), f"{escape(where)}<br>{escape(setting)}",
                      nowrap(f"{gib(cost['ref_peak'])} → {gib(cost['peak'])}"),
                      nowrap(f"{cost['ref_seconds']:.3f} → {cost['seconds']:.3f}"),
                      f"**{nowrap(signed_pct(cost['ratio']))}**"])
    return markdown_table(headers, lines, numeric_from=2)
