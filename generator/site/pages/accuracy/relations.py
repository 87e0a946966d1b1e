"""The accuracy page's sentences that assert a relation, each checked on the data it speaks
of: what the development set does not cover, that a reserved peak bounds what a step needs
from above, and how the held-out points compare with the development set."""

from __future__ import annotations

from typing import Any

from generator.units import pct
from generator.words import Words

#: What a reader's step may use that the development set might not: (what, in words, whether
#: an experiment of the set uses it). Experiments are the fields of `Experiment`.
FEATURES: tuple[tuple[Words, Any], ...] = (
    (Words("bf16", "bf16"), lambda e: "bf16" in e["precision"]),
    (Words("a GradScaler", "GradScaler"),
     lambda e: e["precision"] == "amp-fp16" and e.get("loss_scaling", "auto") != "off"),
    (Words("AdamW", "AdamW"), lambda e: e.get("optimizer") == "adamw"),
    (Words("BERT", "BERT"), lambda e: "bert" in e["model"].lower()),
)


def development_gaps(experiments: list[dict[str, Any]]) -> Words | None:
    """'bf16, a GradScaler, AdamW or BERT': what no run of the development set uses, or None
    when its runs use every one of them."""
    missing = [words for words, used in FEATURES if not any(used(e) for e in experiments)]
    if not missing:
        return None
    if len(missing) == 1:
        return missing[0]
    return Words(", ".join(w.en for w in missing[:-1]) + " or " + missing[-1].en,
                 "、".join(w.zh for w in missing[:-1]) + " 或 " + missing[-1].zh)


def reserved_bound(rows: list[dict[str, Any]]) -> Words:
    """Whether every run's allocated peak lies at or below its reserved one on the GPU, which
    is what makes the reserved peak, measured without memory pressure, an upper bound of what
    the step needs: under pressure the allocator frees its cache and retries, down to the
    allocated peak. Rows carry `real_active`, `real_reserved` and a `label` in Words."""
    above = [r for r in rows if r["real_active"] > r["real_reserved"]]
    if not above:
        every = "the one run" if len(rows) == 1 else f"all {len(rows)} runs"
        return Words(
            f"On {every} the allocated peak the GPU reported is at most the reserved one. A "
            "reserved peak found with memory to spare, measured on a GPU or estimated, is "
            "therefore an upper bound of what the step needs: before it raises out of memory, "
            "the allocator frees "
            "the blocks it keeps cached and tries again, so a step can still run, slower, in "
            "less, down to about its allocated peak.",
            f"在全部 {len(rows)} 次运行上，GPU 的已分配峰值都不超过已预留峰值。所以在显存宽裕时"
            "测得（或估算出）的已预留峰值，是训练步所需显存的上限：分配器在报显存不足之前，会先"
            "释放它缓存着的空闲块再试一次，因此显存更少时训练步仍可能跑得下去（慢一些），最低"
            "大约要到已分配峰值。")
    names = Words(", ".join(r["label"]["en"] for r in above),
                  "、".join(r["label"]["zh"] for r in above))
    return Words(
        f"On {len(above)} of {len(rows)} runs the GPU reported an allocated peak above the "
        f"reserved one ({names.en}), which the allocator cannot do: those figures are "
        "inconsistent, and the reserved peak bounds nothing there.",
        f"{len(rows)} 次运行中有 {len(above)} 次（{names.zh}），GPU 报告的已分配峰值高于已"
        "预留峰值，这是分配器不可能出现的情况：这些数字自相矛盾，谈不上以已预留峰值为上限。")


def versus_development(held: dict[str, float], development: dict[str, float]) -> Words:
    """The held-out points' worst error beside the development set's worst reserved-peak
    error (the figure nvidia-smi mostly shows): worse, or no worse. Both are
    stats.errors() dicts."""
    figures = (pct(held["worst"], 1), pct(development["worst"], 1))
    if held["worst"] > development["worst"]:
        return Words(
            "The held-out points miss by more than the development set: at worst by {} "
            "against {} for its reserved peaks.".format(*figures),
            "留出的数据点误差比开发集大：最大 {}，开发集的已预留峰值最大误差为 {}。"
            .format(*figures))
    return Words(
        "The held-out points miss by no more than the development set: at worst by {} "
        "against {} for its reserved peaks.".format(*figures),
        "留出的数据点误差不比开发集大：最大 {}，开发集的已预留峰值最大误差为 {}。"
        .format(*figures))
