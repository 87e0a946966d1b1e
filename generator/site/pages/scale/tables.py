"""The scale page's Markdown tables, and the names and colours of its categories.

Sizes in GiB (binary, as PyTorch and nvidia-smi count). Cells are escaped here: the Jinja
environment treats what these functions return as safe.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from generator.experiment.strategies import STRATEGIES
from generator.site.escaping import markdown_text as escape
from generator.site.labels import CATEGORY_LABELS
from generator.site.palette import CATEGORY_COLORS
from generator.site.tables import markdown_table, swatch
from generator.units import gib, pct
from generator.words import Words

#: A multi-GPU rank's seventh category (generator/measure/tracking/sharded_tracker.py):
#: FSDP2's gathered weights, DDP's gradient buckets; its label and colour are in labels.py and
#: palette.py.
COMM = "comm_buffers"
#: Model state first (what sharding divides), then what each GPU keeps whole.
ORDER = ("parameters", "gradients", "optimizer_state", "activations", "autocast_copies",
         COMM, "temporaries")
#: What the tables call each strategy (its record's words, strategies.py), and one GPU;
#: FSDP2's mixed-precision policy is another regime than the others' autocast, and says so
#: wherever it stands.
STRATEGY_NAMES = {"single": Words("1 GPU", "单卡"),
                  **{name: s.words for name, s in STRATEGIES.items()}}
#: Column heads of the wide per-row table: short, so that it fits the page's column.
SHORT = {"parameters": Words("Params", "参数"),
         "gradients": Words("Grads", "梯度"),
         "optimizer_state": Words("Optimizer", "优化器状态"),
         "activations": Words("Activations", "激活值"),
         "autocast_copies": Words("Autocast copies", "autocast 副本"),
         COMM: Words("Comm. buffers", "通信缓冲"),
         "temporaries": Words("Temporaries", "临时张量")}
TEXT: dict[str, Words] = {
    "setup": Words("Strategy, GPUs", "方式，卡数"),
    "row": Words("{}, {}", "{}，{} 卡"),
    "peak": Words("Tensors' peak", "张量峰值"),
    "reserved": Words("Reserved peak", "已预留峰值"),
    "reserved_on": Words("Reserved peak ({} replay)", "已预留峰值（按 {} 回放）"),
    "category": Words("Category (own maximum)", "类别（各自最大值）"),
    "on": Words("{} GPUs", "{} 卡"), "on1": Words("{} GPU", "{} 卡"),
    "factor": Words("Shrinks by", "缩小倍数"),
    "ideal": Words("1/N would give", "按 1/N 应缩小"),
    "gpu": Words("GPU (memory for a process)", "GPU（进程可用显存）"),
    "needs": Words("needs {} GiB", "需要 {} GiB"),
    "none": Words("no count estimated fits (on {n}: {word}, needs {need} GiB)",
                  "估算过的卡数都放不下（{n} 卡时{word}，需要 {need} GiB）"),
    "below": Words("; on {n}: {word}", "；{n} 卡时{word}"),
    "unestimated": Words("; {} to {} not estimated", "；{}–{} 卡没有估算"),
    "unestimated1": Words("; {} not estimated", "；{} 卡没有估算"),
    "paren": Words(" ({})", "（{}）"),
}


def strategy_words(line: str, result: dict[str, Any]) -> Words:
    """A line's name: its strategy, FSDP2's policy and options, and its precision where it
    is not the group's (line ids: scale.line_of)."""
    exp = result["experiment"]
    base = STRATEGY_NAMES.get(exp.get("parallel", "none") if line != "single" else "single",
                              Words(line, line))
    en, zh = base.en, base.zh
    policy = exp.get("fsdp_mixed_precision", "none")
    if policy != "none":
        en, zh = f"{en}, {policy} policy", f"{zh}，{policy} 策略"
    elif line.startswith(exp.get("parallel", "")) and f"-{exp['precision']}" in line:
        en, zh = f"{en}, {exp['precision']}", f"{zh}，{exp['precision']}"
    if exp.get("reshard_after_forward") is False:
        en, zh = f"{en}, kept gathered", f"{zh}，前向后不释放"
    if exp.get("cpu_offload"):
        en, zh = f"{en}, CPU offload", f"{zh}，CPU 卸载"
    for field, label in (("shard_size", Words("shard groups of {}", "每 {} 卡一个分片组")),
                         ("tp_size", Words("TP groups of {}", "每 {} 卡一个 TP 组"))):
        if exp.get(field):
            en, zh = f"{en}, {label.en.format(exp[field])}", f"{zh}，{label.zh.format(exp[field])}"
    return Words(en, zh)


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


def _row_name(row: dict[str, Any], words: Words, lang: str) -> str:
    if row["strategy"] == "single":
        return words[lang]
    return _t("row", lang).format(words[lang], row["world_size"])


def peak_table(group: dict[str, Any], lang: str) -> Markup:
    """One row per line and GPU count: what is live at the tensors' peak (sums to it), GiB,
    then the caching allocator's reserved peak (what a GPU must hold)."""
    shown = shown_categories(group)
    headers = [_t("setup", lang)] + [_swatch(c, lang, short=True) for c in shown] + \
        [_t("peak", lang), reserved_head(group.get("replayed_for"), lang)]
    rows = []
    for line in group["lines"]:
        for row in line["rows"]:
            live = row["live_at_peak_bytes"]
            reserved = row["reserved_bytes"]
            rows.append([escape(_row_name(row, line["words"], lang))]
                        + [gib(live.get(c, 0)) for c in shown]
                        + [gib(row["peak_bytes"]),
                           "–" if reserved is None else f"**{gib(reserved)}**"])
    return markdown_table(headers, rows)


def reserved_head(gpu: str | None, lang: str) -> str:
    """The reserved column's head: which GPU's replay it holds (its cuBLAS workspaces change
    where the simulated allocator places blocks), where the rows share one."""
    return _t("reserved", lang) if gpu is None else escape(_t("reserved_on", lang).format(gpu))


def shrink_table(group: dict[str, Any], lang: str) -> Markup:
    """FSDP2: each category's own maximum at the fewest and the most GPUs, against 1/N."""
    lo, hi = group["fsdp"][0]["world_size"], group["fsdp"][-1]["world_size"]
    on = [_t("on1" if n == 1 else "on", lang).format(n) + " (GiB)" for n in (lo, hi)]
    headers = [_t("category", lang), *on, _t("factor", lang), _t("ideal", lang)]
    rows = [[_swatch(s["category"], lang), gib(s["first"]), gib(s["last"]),
             "–" if s["factor"] is None else f"{s['factor']:.2f}×", f"{s['ideal']:g}×"]
            for s in group["shrink"]]
    return markdown_table(headers, rows)


def verdict_table(group: dict[str, Any], lang: str) -> Markup:
    """Each line and GPU count against each GPU of the plan: the one rule's word (plan/fit.py)
    and what the rank needs there (its reserved peak with that GPU's workspaces, plus the top
    of the CUDA context's range and of its NCCL communicators')."""
    from generator.plan.fit import WORD_TEXT

    plan_gpus = [p["gpu"] for p in group["plan"]]
    headers = [_t("setup", lang)] + [f"{escape(g.short_name)} ({gib(g.memory_bytes)} GiB)"
                                     for g in plan_gpus]
    names = {line["id"]: line["words"] for line in group["lines"]}
    rows = []
    for item in group["verdicts"]:
        row = item["row"]
        cells = []
        for v in item["verdicts"]:
            word = WORD_TEXT[v.word][lang]
            cells.append((f"**{word}**" if v.fits else word)
                         + _t("paren", lang).format(_t("needs", lang).format(gib(v.needed_bytes))))
        rows.append([escape(_row_name(row, names[row["strategy"]], lang))] + cells)
    return markdown_table(headers, rows, numeric_from=len(headers))


def fewest_table(group: dict[str, Any], lang: str) -> Markup:
    """Per GPU of the plan and per line: the fewest GPU counts estimated whose rank fits, what
    each GPU then needs, and the count below it that is too few."""
    lines = [line for line in group["lines"] if line["id"] != "single"]
    headers = [_t("gpu", lang)] + [escape(line["words"][lang]) for line in lines]
    rows = []
    for plan in group["plan"]:
        gpu = plan["gpu"]
        rows.append([f"{escape(gpu.short_name)} ({gib(gpu.memory_bytes)} GiB)"]
                    + [fewest_cell(cell, lang) for cell in plan["lines"]])
    return markdown_table(headers, rows, numeric_from=len(headers))


def fewest_cell(cell: dict[str, Any], lang: str) -> str:
    """One cell of the fewest-GPUs table (cell: scale.fewest's): the fewest count that fits
    and what it needs there; the count below it with the one rule's own word for it (plan/
    fit.py WORD_TEXT: may fit, only just, does not fit), never a word of its own; the counts
    below it that were not estimated, as such. Where no count fits, the rule's word on the
    most GPUs estimated."""
    from generator.plan.fit import WORD_TEXT

    fewest = cell["fewest"]
    if fewest is None:
        most = cell["most_verdict"]
        return _t("none", lang).format(n=cell["most"], word=WORD_TEXT[most.word][lang],
                                       need=gib(most.needed_bytes))
    inner = _t("needs", lang).format(gib(cell["needed"]))
    if cell["below"] is not None:
        inner += _t("below", lang).format(n=cell["below"]["world_size"],
                                          word=WORD_TEXT[cell["below_verdict"].word][lang])
    if cell["unestimated"] is not None:
        first, last = cell["unestimated"]
        inner += (_t("unestimated1", lang).format(first) if first == last
                  else _t("unestimated", lang).format(first, last))
    return f"**{fewest['world_size']}**" + _t("paren", lang).format(inner)
