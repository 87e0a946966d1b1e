"""The levers page's tables, in Chinese or English: the ranking by peak saving, the
combinations, and the step times measured with and without each lever."""

from __future__ import annotations

from html import escape
from typing import Any

from markupsafe import Markup

from generator.site.style.labels import BACKEND_LABELS
from generator.site.style.tables import markdown_table, swatch
from generator.units import gib, mib, pct

Row = dict[str, Any]

#: Each lever's name; `-off` names the opposite, for levers that PyTorch already applies.
LABELS: dict[str, dict[str, str]] = {
    "checkpointing": {"zh": "激活检查点", "en": "Activation checkpointing"},
    "sdpa": {"zh": "融合注意力 SDPA", "en": "SDPA attention"},
    "amp-bf16": {"zh": "AMP bf16", "en": "AMP bf16"},
    "amp-fp16": {"zh": "AMP fp16", "en": "AMP fp16"},
    "sgd": {"zh": "SGD（动量）代替 AdamW", "en": "SGD (momentum) for AdamW"},
    "set-to-none": {"zh": "`set_to_none=True`", "en": "`set_to_none=True`"},
    "set-to-none-off": {"zh": "`set_to_none=False`", "en": "`set_to_none=False`"},
    "fused": {"zh": "fused AdamW", "en": "Fused AdamW"},
    "for-loop": {"zh": "for-loop AdamW", "en": "For-loop AdamW"},
    "amp-bf16+sdpa": {"zh": "AMP bf16 + SDPA", "en": "AMP bf16 + SDPA"},
    "amp-bf16+sdpa+checkpointing": {"zh": "AMP bf16 + SDPA + 激活检查点",
                                    "en": "AMP bf16 + SDPA + checkpointing"},
    "baseline": {"zh": "基线", "en": "Baseline"},
}

TEXT: dict[str, dict[str, str]] = {
    "rank": {"zh": "#", "en": "#"},
    "lever": {"zh": "手段", "en": "Lever"},
    "levers": {"zh": "组合", "en": "Levers together"},
    "peaks": {"zh": "峰值（GiB）", "en": "Peak (GiB)"},
    "peak": {"zh": "峰值（GiB）", "en": "Peak (GiB)"},
    "run_peaks": {"zh": "峰值 GiB（不用 → 用）", "en": "Peak GiB (without → with)"},
    "saving": {"zh": "节省", "en": "Saving"},
    "saving_base": {"zh": "比基线节省", "en": "Saving on the baseline"},
    "acts_on": {"zh": "作用于", "en": "Acts on"},
    "time": {"zh": "训练步耗时", "en": "Step time"},
    "best_part": {"zh": "其中单项最好的", "en": "Best of its parts alone"},
    "in_optimizer": {"zh": "（优化器步内）", "en": " (optimizer step)"},
    "default": {"zh": "（默认）", "en": " (default)"},
    "not_measured": {"zh": "–", "en": "–"},
    "source": {"zh": "来源", "en": "Source"},
    "setting": {"zh": "配置", "en": "Setting"},
    "seconds": {"zh": "秒/步（不用 → 用）", "en": "s/step (without → with)"},
    "colon": {"zh": "：", "en": ": "},
    "change": {"zh": "变化", "en": "Change"},
    "batch": {"zh": "batch {b}，序列 {s}", "en": "batch {b}, sequence {s}"},
    "cores": {"zh": "（{n} 核）", "en": " ({n} cores)"},
}
#: Where a step time was measured, in a word.
WHERE = {"cpu": {"zh": "CPU", "en": "CPU"}, "cuda": {"zh": "GPU", "en": "GPU"}}
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
