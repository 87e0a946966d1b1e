"""The scale page's Markdown tables, and the names and colours of its categories.

Sizes in GiB (binary, as PyTorch and nvidia-smi count). Cells are escaped here: the Jinja
environment treats what these functions return as safe.
"""

from __future__ import annotations

from html import escape
from typing import Any

from markupsafe import Markup

from generator.site.labels import CATEGORY_LABELS
from generator.site.palette import CATEGORY_COLORS
from generator.site.tables import markdown_table, swatch
from generator.units import gib, pct
from generator.words import Words

#: The sharding study's seventh category (generator/measure/tracking/sharded_tracker.py):
#: FSDP2's gathered weights, DDP's gradient buckets; its label and colour are in labels.py and
#: palette.py.
COMM = "comm_buffers"
#: Model state first (what sharding divides), then what each GPU keeps whole.
ORDER = ("parameters", "gradients", "optimizer_state", "activations", "autocast_copies",
         COMM, "temporaries")
STRATEGY_LABELS = {"ddp": "DDP", "fsdp2": "FSDP2", "fsdp2-mp": "FSDP2 MP"}
#: What the tables call each strategy: FSDP2's bf16 MixedPrecisionPolicy is another regime
#: than DDP's and FSDP2's autocast, and says so in every row.
STRATEGY_WORDS = {"ddp": Words("DDP", "DDP"), "fsdp2": Words("FSDP2", "FSDP2"),
                  "fsdp2-mp": Words("FSDP2 MP (bf16 policy)", "FSDP2 MP（bf16 策略）")}
#: Column heads of the wide per-row table: short, so that it fits the page's column.
SHORT = {"parameters": Words("Params", "参数"),
         "gradients": Words("Grads", "梯度"),
         "optimizer_state": Words("Optimizer", "优化器状态"),
         "activations": Words("Activations", "激活值"),
         "autocast_copies": Words("Autocast copies", "autocast 副本"),
         COMM: Words("Comm. buffers", "通信缓冲"),
         "temporaries": Words("Temporaries", "临时张量")}
TEXT: dict[str, Words] = {
    "strategy": Words("Strategy", "方式"),
    "setup": Words("Strategy, GPUs", "方式，卡数"),
    "row": Words("{}, {}", "{}，{} 卡"),
    "gpus": Words("GPUs", "GPU 数"),
    "peak": Words("Peak", "峰值"),
    "category": Words("Category (own maximum)", "类别（各自最大值）"),
    "on": Words("{} GPUs", "{} 卡"), "on1": Words("{} GPU", "{} 卡"),
    "factor": Words("Shrinks by", "缩小倍数"),
    "ideal": Words("1/N would give", "按 1/N 应缩小"),
    "gpu": Words("GPU (memory for a process)", "GPU（进程可用显存）"),
    "fsdp_need": Words("FSDP2, {r}: fewest GPUs (needed per GPU)",
                       "FSDP2，{r}：最少 GPU 数（单卡需要）"),
    "ddp_need": Words("DDP, {r} (needed per GPU)", "DDP，{r}（单卡需要）"),
    "mp_need": Words("FSDP2 MP, bf16 policy (another regime): fewest GPUs",
                     "FSDP2 MP，bf16 策略（另一种精度方式）：最少 GPU 数"),
    "none": Words("none of the GPU counts run fits", "跑过的卡数都放不下"),
    "fits": Words("fits", "放得下"), "no": Words("does not fit", "放不下"),
    "too_few": Words("; {} are not enough", "，{} 卡不够"),
    "too_few1": Words("; {} is not enough", "，{} 卡不够"),
    "paren": Words(" ({})", "（{}）"),
    "estimate": Words("Estimated peak", "估算峰值"),
    "measured": Words("Peak measured on a GPU (largest rank)", "GPU 实测峰值（各卡最大）"),
    "error": Words("Estimate error", "估算误差"),
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
    return swatch(category, lang, SHORT[category][lang] if short else label(category, lang))



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
        head = [_t("row", lang).format(STRATEGY_WORDS[row["strategy"]][lang], row["world_size"])]
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


def plan_table(group: dict[str, Any], lang: str, regime: str) -> Markup:
    """Per GPU size: the fewest GPUs measured under FSDP2 that fit and whether DDP fits, both
    in `regime` (the study's precision, named); then FSDP2 with its bf16 policy, where run."""
    headers = [_t("gpu", lang), _t("fsdp_need", lang).format(r=regime),
               _t("ddp_need", lang).format(r=regime)]
    mp = bool(group["mp"])
    if mp:
        headers.append(_t("mp_need", lang))
    rows = []
    for plan in group["plan"]:
        ddp = "–" if plan["ddp"] is None else _t("fits" if plan["ddp_fits"] else "no", lang) \
            + _t("paren", lang).format(f"{gib(plan['ddp_needed'])} GiB")
        gpu = plan["gpu"]
        rows.append([f"{escape(gpu.short_name)} ({gib(gpu.memory_bytes)} GiB)",
                     _fewest_cell(plan, "fsdp", lang), ddp]
                    + ([_fewest_cell(plan, "mp", lang)] if mp else []))
    return markdown_table(headers, rows, numeric_from=len(headers))


def _fewest_cell(plan: dict[str, Any], key: str, lang: str) -> str:
    """The fewest GPUs that fit (key fsdp or mp), what each then needs, and the count below."""
    fewest = plan[key]
    if fewest is None:
        return _t("none", lang)
    inner = f"{gib(plan[f'{key}_needed'])} GiB"
    if plan[f"{key}_too_few"]:
        n = plan[f"{key}_too_few"]["world_size"]
        inner += _t("too_few1" if n == 1 else "too_few", lang).format(n)
    return f"**{fewest['world_size']}**" + _t("paren", lang).format(inner)


def compare_table(group: dict[str, Any], lang: str) -> Markup:
    """GPU measurements beside the estimate of the same strategy and GPU count."""
    headers = [_t("strategy", lang), _t("gpus", lang), _t("estimate", lang) + " (GiB)",
               _t("measured", lang) + " (GiB)", _t("error", lang)]
    rows = [[STRATEGY_WORDS[c["strategy"]][lang], str(c["world_size"]), gib(c["estimate"]),
             gib(c["measured"]), pct(c["error"])] for c in group["comparison"]]
    return markdown_table(headers, rows)
