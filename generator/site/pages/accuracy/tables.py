"""The accuracy page's Markdown tables, in Chinese or English: every run beside its
estimates, and the summary held against the targets."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from generator.experiment import options
from generator.site.escaping import markdown_text as escape
from generator.site.tables import markdown_table
from generator.units import gib, pct
from generator.words import LANGS, Words

_TEXT: dict[str, Words] = {
    "run": Words("Run", "运行"),
    "real_active": Words("H100 allocated (GiB)", "H100 已分配 (GiB)"),
    "active": Words("Estimated (GiB)", "估算 (GiB)"),
    "ratio": Words("Estimate ÷ real", "估算 ÷ GPU 实测"),
    "real_reserved": Words("H100 reserved (GiB)", "H100 已预留 (GiB)"),
    "reserved": Words("Estimated (GiB)", "估算 (GiB)"),
    "memtracker": Words("MemTracker ÷ real", "MemTracker ÷ GPU 实测"),
    "batch": Words("batch {}", "batch {}"), "seq": Words("sequence {}", "序列 {}"),
    "image": Words("image {}", "图像边长 {}"),
    "ac": options()["checkpointing"].words(True),  # as the option names itself
    "FP": Words("FP32", "FP32"), "MP": Words("AMP fp16, no GradScaler", "AMP fp16，无 GradScaler"),
    "HP": Words("pure fp16", "纯 fp16"),
    "FP_short": Words("FP32", "FP32"), "MP_short": Words("AMP", "AMP"),
    "HP_short": Words("fp16", "fp16"),
    "what": Words("What", "项目"), "worst": Words("Worst error", "最大误差"),
    "median": Words("Median error", "误差中位数"), "rows": Words("Runs", "运行数"),
    "target": Words("Target (worst / median)", "目标（最大 / 中位数）"),
    "s_active": Words("Allocated peak, this project", "已分配峰值：本项目"),
    "s_memtracker": Words("Allocated peak, PyTorch MemTracker", "已分配峰值：PyTorch MemTracker"),
    "s_reserved": Words("Reserved peak, no checkpointing", "已预留峰值：无激活检查点"),
    "s_reserved_ac": Words("Reserved peak, with checkpointing", "已预留峰值：有激活检查点"),
    "none": Words("no target", "不设目标"),
}


def _t(key: str, lang: str) -> str:
    return _TEXT[key][lang]


def run_fields(run: Any) -> dict[str, Any]:
    """What a page row says of a published run (a reference_runs.ReferenceRun) whatever it is
    held against: the fields run_label and the rows' order read, and its label in each
    language, long and short."""
    from generator.results.reference_runs import DISPLAY_NAMES

    fields = {"name": run.name, "model": DISPLAY_NAMES[run.model], "family": run.model,
              "batch_size": run.batch_size, "seq_len": run.seq_len,
              "image_size": run.image_size, "precision": run.precision,
              "checkpointing": run.checkpointing}
    return {**fields, "label": {lang: run_label(fields, lang) for lang in LANGS},
            "short_label": {lang: run_label(fields, lang, short=True) for lang in LANGS}}


def run_label(row: dict[str, Any], lang: str, short: bool = False) -> str:
    """'Llama 3.2 1B Instruct · batch 4 · sequence 1024 · FP32 · checkpointing', or for a
    chart's axis 'Llama 3.2 1B Instruct b4 s1024 FP32 ckpt'."""
    if short:
        size = f"s{row['seq_len']}" if row["seq_len"] > 0 else f"{row['image_size']}px"
        words = [row["model"], f"b{row['batch_size']}", size,
                 _t(row["precision"] + "_short", lang)]
        return " ".join(words + (["ckpt"] if row["checkpointing"] else []))
    parts = [row["model"], _t("batch", lang).format(row["batch_size"])]
    if row["seq_len"] > 0:
        parts.append(_t("seq", lang).format(row["seq_len"]))
    if row["image_size"] > 0:
        parts.append(_t("image", lang).format(row["image_size"]))
    parts.append(_t(row["precision"], lang))
    if row["checkpointing"]:
        parts.append(_t("ac", lang))
    return " · ".join(parts)


def ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def rows_table(rows: list[dict[str, Any]], lang: str) -> Markup:
    headers = [_t(k, lang) for k in ("run", "real_active", "active", "ratio", "real_reserved",
                                     "reserved", "ratio", "memtracker")]
    body = [[escape(r["label"][lang]), gib(r["real_active"]), gib(r["active"]),
             ratio(r["active_ratio"]), gib(r["real_reserved"]), gib(r["reserved"]),
             ratio(r["reserved_ratio"]), ratio(r["memtracker_ratio"])] for r in rows]
    return markdown_table(headers, body)


def summary_table(summary: dict[str, Any], targets: dict[str, float], lang: str) -> Markup:
    headers = [_t(k, lang) for k in ("what", "worst", "median", "rows", "target")]
    lines = [("s_active", summary["active"], "active"),
             ("s_memtracker", summary["memtracker"], None),
             ("s_reserved", summary["reserved"], "reserved"),
             ("s_reserved_ac", summary["reserved_ac"], None)]
    body = []
    for key, stats, target in lines:
        if stats is None:
            continue
        goal = (f"{pct(targets[target + '_worst'])} / {pct(targets[target + '_median'])}"
                if target else _t("none", lang))
        body.append([_t(key, lang), pct(stats["worst"], 2), pct(stats["median"], 2),
                     str(stats["count"]), goal])
    return markdown_table(headers, body)
