"""The scale page's Markdown tables, and the names and colours of its categories.

Sizes in GiB (binary, as PyTorch and nvidia-smi count). Cells are escaped here: the Jinja
environment treats what these functions return as safe.
"""

from __future__ import annotations

from html import escape
from typing import Any

from markupsafe import Markup

from generator.site.style.labels import CATEGORY_LABELS
from generator.site.style.palette import CATEGORY_COLORS
from generator.site.style.tables import markdown_table
from generator.units import gib, pct

#: The sharding study's seventh category (studies/_sharded_tracker.py): FSDP2's gathered
#: weights, DDP's gradient buckets; its label and colour are in labels.py and palette.py.
COMM = "comm_buffers"
#: Model state first (what sharding divides), then what each GPU keeps whole.
ORDER = ("parameters", "gradients", "optimizer_state", "activations", "autocast_copies",
         COMM, "temporaries")
STRATEGY_LABELS = {"ddp": "DDP", "fsdp2": "FSDP2"}
#: Column heads of the wide per-row table: short, so that it fits the page's column.
SHORT = {"parameters": {"zh": "参数", "en": "Params"},
         "gradients": {"zh": "梯度", "en": "Grads"},
         "optimizer_state": {"zh": "优化器状态", "en": "Optimizer"},
         "activations": {"zh": "激活值", "en": "Activations"},
         "autocast_copies": {"zh": "autocast 副本", "en": "Autocast copies"},
         COMM: {"zh": "通信缓冲", "en": "Comm. buffers"},
         "temporaries": {"zh": "临时张量", "en": "Temporaries"}}
TEXT = {
    "strategy": {"zh": "方式", "en": "Strategy"},
    "setup": {"zh": "方式，卡数", "en": "Strategy, GPUs"},
    "row": {"zh": "{}，{} 卡", "en": "{}, {}"},
    "gpus": {"zh": "GPU 数", "en": "GPUs"},
    "peak": {"zh": "峰值", "en": "Peak"},
    "category": {"zh": "类别（各自最大值）", "en": "Category (own maximum)"},
    "on": {"zh": "{} 卡", "en": "{} GPUs"}, "on1": {"zh": "{} 卡", "en": "{} GPU"},
    "factor": {"zh": "实际缩小", "en": "Shrinks by"},
    "ideal": {"zh": "按 1/N 应缩小", "en": "1/N would give"},
    "gpu": {"zh": "单卡显存", "en": "GPU memory"},
    "fsdp_need": {"zh": "FSDP2：最少 GPU 数（单卡峰值）",
                  "en": "FSDP2: fewest GPUs (peak per GPU)"},
    "ddp_need": {"zh": "DDP（单卡需要）", "en": "DDP (needed per GPU)"},
    "none": {"zh": "测过的卡数都不够", "en": "none of the GPU counts measured"},
    "fits": {"zh": "放得下", "en": "fits"}, "no": {"zh": "放不下", "en": "does not fit"},
    "too_few": {"zh": "，{} 卡不够", "en": "; {} are not enough"},
    "too_few1": {"zh": "，{} 卡不够", "en": "; {} is not enough"},
    "paren": {"zh": "（{}）", "en": " ({})"},
    "estimate": {"zh": "估算峰值", "en": "Estimated peak"},
    "measured": {"zh": "实测峰值（各卡最大）", "en": "Measured peak (largest rank)"},
    "error": {"zh": "估算误差", "en": "Estimate error"},
}


def label(category: str, lang: str) -> str:
    return CATEGORY_LABELS[category][lang]


def color(category: str) -> str:
    return CATEGORY_COLORS[category]


def shown_categories(group: dict[str, Any]) -> list[str]:
    """The categories some row of the group has bytes in, in ORDER."""
    rows = [r for r in group["rows"] if not r.get("error")]
    return [c for c in ORDER if any(r["live_at_peak_bytes"].get(c) for r in rows)]


def _swatch(category: str, lang: str, short: bool = False) -> str:
    name = SHORT[category][lang] if short else label(category, lang)
    return f'<span class="swatch" style="background:{color(category)}"></span>{escape(name)}'



def _t(key: str, lang: str) -> str:
    return TEXT[key][lang]


def peak_table(group: dict[str, Any], lang: str) -> Markup:
    """One row per strategy and GPU count: what is live at the peak (sums to the peak), GiB.
    Seven numbers a row is what the page's column holds; the peak's phase goes in the text."""
    shown = shown_categories(group)
    headers = [_t("setup", lang)] + [_swatch(c, lang, short=True) for c in shown] + \
        [_t("peak", lang)]
    rows = []
    for row in group["rows"]:
        head = [_t("row", lang).format(STRATEGY_LABELS[row["strategy"]], row["world_size"])]
        if row.get("error"):
            rows.append(head + ["–"] * len(shown) + [escape(row["error"])])
            continue
        live = row["live_at_peak_bytes"]
        rows.append(head + [gib(live.get(c, 0)) for c in shown]
                    + [f"**{gib(row['peak_bytes'])}**"])
    return markdown_table(headers, rows)


def shrink_table(group: dict[str, Any], lang: str) -> Markup:
    """FSDP2: each category's own maximum at the fewest and the most GPUs, against 1/N."""
    lo, hi = group["fsdp"][0]["world_size"], group["fsdp"][-1]["world_size"]
    on = [_t("on1" if n == 1 else "on", lang).format(n) + " (GiB)" for n in (lo, hi)]
    headers = [_t("category", lang), *on, _t("factor", lang), _t("ideal", lang)]
    rows = [[_swatch(s["category"], lang), gib(s["first"]), gib(s["last"]),
             "–" if s["factor"] is None else f"{s['factor']:.2f}×", f"{s['ideal']:g}×"]
            for s in group["shrink"]]
    return markdown_table(headers, rows)


def plan_table(group: dict[str, Any], lang: str) -> Markup:
    """Per GPU size: the fewest GPUs measured under FSDP2 that fit, and whether DDP fits."""
    headers = [_t("gpu", lang), _t("fsdp_need", lang), _t("ddp_need", lang)]
    rows = []
    for plan in group["plan"]:
        fsdp = plan["fsdp"]
        if fsdp is None:
            cell = _t("none", lang)
        else:
            inner = f"{gib(fsdp['peak_bytes'])} GiB"
            if plan["fsdp_too_few"]:
                n = plan["fsdp_too_few"]["world_size"]
                inner += _t("too_few1" if n == 1 else "too_few", lang).format(n)
            cell = f"**{fsdp['world_size']}**" + _t("paren", lang).format(inner)
        ddp = "–" if plan["ddp"] is None else _t("fits" if plan["ddp_fits"] else "no", lang) \
            + _t("paren", lang).format(f"{gib(plan['ddp_needed'])} GiB")
        rows.append([f"{plan['gpu_gib']} GiB", cell, ddp])
    return markdown_table(headers, rows, numeric_from=3)


def compare_table(group: dict[str, Any], lang: str) -> Markup:
    """GPU measurements beside the estimate of the same strategy and GPU count."""
    headers = [_t("strategy", lang), _t("gpus", lang), _t("estimate", lang) + " (GiB)",
               _t("measured", lang) + " (GiB)", _t("error", lang)]
    rows = [[STRATEGY_LABELS[c["strategy"]], str(c["world_size"]), gib(c["estimate"]),
             gib(c["measured"]), pct(c["error"])] for c in group["comparison"]]
    return markdown_table(headers, rows)
