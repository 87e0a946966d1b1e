"""The accuracy page's held-out section: published real-GPU measurements that the estimate was
never developed on (generator/results/reference_data/HELD_OUT.md), each beside the estimate
made of it once, at the commit the data file records.

The sources publish what `nvidia-smi` showed, which is the allocator's reserved memory plus
what lies outside it, so the estimate held against it is the estimated reserved peak plus
the CUDA context the source itself read.
"""

from __future__ import annotations

from html import escape
from typing import Any

from markupsafe import Markup

from generator.results.reference_runs import HELD_OUT_ASSUMED, HeldOutPoint
from generator.site.pages.accuracy.stats import errors as stats
from generator.site.tables import markdown_table
from generator.units import mib
from generator.words import Words

_TEXT: dict[str, Words] = {
    "source": Words("Source", "来源"), "gpu": Words("GPU", "GPU"),
    "config": Words("Configuration", "配置"),
    "published": Words("Published: nvidia-smi (MiB)", "公开数字：nvidia-smi (MiB)"),
    "estimated": Words("Estimated: reserved + context (MiB)", "估算：已预留 + 上下文 (MiB)"),
    "ratio": Words("Estimate ÷ published", "估算 ÷ 公开数字"),
    "commit": Words("Estimated at", "估算所在提交"),
    "hf_guide": Words("Hugging Face guide", "Hugging Face 指南"),
    "batch": Words("batch {}", "batch {}"), "seq": Words("sequence {}", "序列 {}"),
    "micro": Words("batch {} × {} micro-batches", "batch {} × {} 个 micro-batch"),
    "fp32": Words("FP32", "FP32"), "amp-fp16": Words("AMP fp16 + GradScaler", "AMP fp16 + GradScaler"),
    "ac": Words("checkpointing", "激活检查点"),
}


def rows(points: list[HeldOutPoint]) -> list[dict[str, Any]]:
    """One row per point estimated so far: the published figure, the estimate, their ratio."""
    found = []
    for point in points:
        if point.estimated_reserved_bytes is None:
            continue
        estimated = point.estimated_reserved_bytes + point.context_bytes
        found.append({"point": point, "label": label(point), "published": point.published_bytes,
                      "reserved": point.estimated_reserved_bytes, "estimated": estimated,
                      "ratio": estimated / point.published_bytes,
                      "commit": point.commit, "versions": point.versions})
    return found


def label(point: HeldOutPoint) -> Words:
    """'BERT-large · batch 1 × 4 micro-batches · sequence 512 · AMP fp16 + GradScaler · …'."""
    def say(lang: str) -> str:
        batch = (_TEXT["batch"][lang].format(point.batch_size) if point.micro_batches == 1
                 else _TEXT["micro"][lang].format(point.batch_size // point.micro_batches,
                                                  point.micro_batches))
        seq = _TEXT["seq"][lang].format(point.seq_len)
        parts = ["BERT-large", batch, seq, _TEXT[point.precision][lang], point.optimizer]
        return " · ".join(parts + ([_TEXT["ac"][lang]] if point.checkpointing else []))
    return Words(say("en"), say("zh"))


def summary(found: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Worst and median error, how many estimates fall short of the published figure, and the
    sources, GPUs, commits and versions behind them."""
    if not found:
        return None
    return {"errors": stats([r["ratio"] for r in found]),
            "short": sum(r["ratio"] < 1 for r in found), "count": len(found),
            "sources": sorted({(r["point"].source_title, r["point"].source_url) for r in found}),
            "gpus": sorted({r["point"].gpu for r in found}),
            "commits": sorted({r["commit"] for r in found}),
            "context": found[0]["point"].context_bytes,
            "seq_lens": sorted({r["point"].seq_len for r in found}),
            "dates": sorted({r["point"].date for r in found}),
            "modelled_gpus": sorted({r["point"].modelled_gpu for r in found}),
            "assumed": HELD_OUT_ASSUMED,
            "versions": {k: sorted({r["versions"][k] for r in found if k in r["versions"]})
                         for k in ("torch", "transformers", "bitsandbytes")}}


def table(found: list[dict[str, Any]], lang: str) -> Markup:
    headers = [_TEXT[k][lang] for k in ("source", "gpu", "config", "published", "estimated",
                                        "ratio", "commit")]
    body = [[f"[{_TEXT['hf_guide'][lang]}]({r['point'].source_url})",
             escape(r["point"].gpu.removeprefix("Tesla ")), escape(r["label"][lang]),
             mib(r["published"]), mib(r["estimated"]), f"{r['ratio']:.3f}",
             f"`{r['commit'][:10]}`"] for r in found]
    return markdown_table(headers, body, numeric_from=3)
