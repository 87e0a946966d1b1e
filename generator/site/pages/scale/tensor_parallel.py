"""The scale page's sentences on tensor parallelism (TP, FSDP2 × TP) against FSDP2: what a
TP group splits of what a GPU computes with, and why a GPU under TP holds more gradient than
parameter bytes. Each relation is checked on the rows it speaks of (rows as in sentences.py),
and where it does not hold the sentence says what does.
"""

from __future__ import annotations

from generator.site.pages.scale.sentences import (
    NAMES,
    SAME_BYTES,
    TOLERANCE,
    Row,
    joined,
    on_gpus,
    spaced,
)
from generator.units import gib
from generator.words import Words

#: What tensor parallelism splits that FSDP2 does not: what a GPU computes with.
COMPUTED = ("activations", "autocast_copies")


def _tp_size(row: Row) -> int:
    """The GPUs of a row's TP group (its mesh's "tp"), its GPU count where not recorded."""
    return row.get("tp_size") or row["world_size"]


def _computed(cat: str, fb: int, tb: int, t: int, checkpointing: bool) -> Words:
    """One category a GPU computes with, under TP (tb) against FSDP2 (fb), with a TP group of
    t GPUs: split as 1/t, not at all, or by how much; and why, where the plans say why (no
    plan here uses sequence parallelism: tensor_parallel.py translates no such style)."""
    name = NAMES[cat]
    pair = Words(f"{gib(tb)} GiB against {gib(fb)}", f"{gib(tb)} GiB 对 {gib(fb)} GiB")
    factor = fb / tb if tb else None
    if factor is not None and abs(factor / t - 1) <= TOLERANCE:
        return Words(f"{name.en} shrink as a TP group of {t} splits them, {pair.en}",
                     f"{name.zh}按 {t} 卡的 TP 组等分缩小，{pair.zh}")
    if factor is not None and abs(factor - 1) <= TOLERANCE:
        if cat == "activations" and checkpointing:
            return Words(f"{name.en} are the same, {pair.en}: under activation checkpointing "
                         "what a GPU keeps for backward is each block's input and what the loss "
                         "saves, which TP without sequence parallelism does not split",
                         f"{name.zh}一样大，{pair.zh}：用激活检查点时，一张卡为反向留下的是每个 "
                         "block 的输入和损失保存的张量，没有序列并行的 TP 不切它们")
        return Words(f"{name.en} are the same, {pair.en}", f"{name.zh}一样大，{pair.zh}")
    if factor is not None and 1 < factor < t:
        why = (Words("without sequence parallelism TP splits only what is inside attention and "
                     "the MLP; the norms', the residual stream's and the loss's tensors are "
                     "whole on every GPU of the group",
                     "没有序列并行时，TP 只切注意力和 MLP 里面的东西；归一化层、残差流和损失的张量"
                     "在组里每张卡上都是完整的")
               if cat == "activations" else
               Words("the weights the plan leaves whole are cast whole",
                     "切分方案没有切开的权重，转换出的副本也是完整的"))
        return Words(f"{name.en} shrink by {factor:.2f}×, where a TP group of {t} splitting "
                     f"them all would give {t}×, {pair.en}: {why.en}",
                     f"{name.zh}缩小了 {factor:.2f}×（{pair.zh}），全部按 {t} 卡的 TP 组切开应是 "
                     f"{t}×：{why.zh}")
    return Words(f"{name.en}: {pair.en}", f"{name.zh}：{pair.zh}")


def tensor_parallel(fsdp: list[Row], tp: list[Row], name: Words, *,
                    checkpointing: bool = False) -> Words | None:
    """Tensor parallelism (`name`: TP, or FSDP2 × TP) against FSDP2 on the largest GPU count
    both were estimated on: the tensors' peak, less or more; and of what each GPU computes
    with (activations, autocast's weight copies, each one's own maximum), whether the TP
    group splits it as 1/t, not at all, or in part (_computed). None where no count has
    both."""
    shared = sorted({r["world_size"] for r in fsdp} & {r["world_size"] for r in tp})
    if not shared:
        return None
    n = shared[-1]
    a = next(r for r in fsdp if r["world_size"] == n)
    b = next(r for r in tp if r["world_size"] == n)
    t = _tp_size(b)
    parts = [_computed(c, a["category_max_bytes"].get(c, 0), b["category_max_bytes"].get(c, 0),
                       t, checkpointing)
             for c in COMPUTED if a["category_max_bytes"].get(c, 0) >= SAME_BYTES]
    word = Words("less", "少") if b["peak_bytes"] < a["peak_bytes"] else Words("more", "多")
    head = Words(f"On {on_gpus(n).en}, {name.en} leaves a GPU {gib(b['peak_bytes'])} GiB of "
                 f"tensors at their peak, {gib(abs(a['peak_bytes'] - b['peak_bytes']))} GiB "
                 f"{word.en} than FSDP2's {gib(a['peak_bytes'])} GiB",
                 f"{n} 卡时，{name.zh}下每张卡的张量峰值是 {gib(b['peak_bytes'])} GiB，比 "
                 f"FSDP2 的 {gib(a['peak_bytes'])} GiB {word.zh} "
                 f"{gib(abs(a['peak_bytes'] - b['peak_bytes']))} GiB")
    if not parts:
        return Words(head.en + ".", spaced(head.zh + "。"))
    en = "; ".join(w.en for w in parts)
    zh = "；".join(w.zh for w in parts)
    return Words(f"{head.en}. Of what a GPU computes with (each one's largest during the step, "
                 f"under {name.en} against FSDP2): {en}.",
                 spaced(f"{head.zh}。计算时要用的东西（各自在一步中的最大值，{name.zh}对 "
                         f"FSDP2）：{zh}。"))


def tp_gradients(tp: list[Row], name: Words, embedding_bytes: int) -> Words | None:
    """Where TP leaves a GPU more gradient than parameter bytes at the tensors' peak: the
    rows, and, where on every such row the excess is (t−1)/t of the token embeddings'
    `embedding_bytes` (within SAME_BYTES; t: its TP group), why: the plan splits the
    embeddings by vocabulary, and DTensor's embedding backward gives a replicated gradient
    from replicated token ids (torch/distributed/tensor/_ops/_embedding_ops.py has no
    strategy for a vocabulary-sharded one), which each GPU keeps whole; a real run of two
    CPU processes over gloo shows it (tests/slow/test_tp_embedding_gradient.py). None where
    no row has more gradient than parameters."""
    over = [r for r in tp if r["live_at_peak_bytes"].get("gradients", 0)
            - r["live_at_peak_bytes"].get("parameters", 0) >= SAME_BYTES]
    if not over:
        return None
    pairs = [(r, r["live_at_peak_bytes"]["gradients"], r["live_at_peak_bytes"]["parameters"])
             for r in over]
    listed = Words(joined([f"{gib(g)} against {gib(p)} GiB on {on_gpus(r['world_size']).en}"
                          for r, g, p in pairs], "en"),
                   "，".join(f"{r['world_size']} 卡时 {gib(g)} GiB 对 {gib(p)} GiB"
                            for r, g, p in pairs))
    head = Words(f"Under {name.en} a GPU holds more gradients than parameters at the tensors' "
                 f"peak: {listed.en}",
                 f"用{name.zh}时，张量峰值处每张卡的梯度比参数多：{listed.zh}")
    embedding = all(abs((g - p) - embedding_bytes * (_tp_size(r) - 1) / _tp_size(r))
                    < SAME_BYTES for r, g, p in pairs)
    if not embedding:
        return Words(head.en + ".", spaced(head.zh + "。"))
    return Words(
        f"{head.en}. The difference is (t−1)/t of the token embeddings' {gib(embedding_bytes)} "
        "GiB, t the GPUs of the TP group: the model's plan splits the embeddings by vocabulary, "
        "but the token ids are whole on every GPU of the group, and PyTorch's DTensor has no "
        "rule that computes an embedding's gradient from them in vocabulary slices; it computes "
        "the whole gradient, replicated, and each GPU keeps it beside its share of the weights. "
        "A real run of two processes on the CPU (gloo) shows the same: each rank's embedding "
        "weight holds half the vocabulary, its gradient all of it.",
        spaced(f"{head.zh}。多出来的正好是词嵌入 {gib(embedding_bytes)} GiB 的 (t−1)/t，t 是 "
                "TP 组的卡数：模型的切分方案按词表切开词嵌入，但 token id 在组里每张卡上都是完整的，"
                "PyTorch 的 DTensor 没有按词表分片由它们算词嵌入梯度的规则，只能算出完整的、复制的"
                "（replicated）梯度，每张卡除了自己那份权重，还留着整个词表的梯度。在 CPU 上用两个"
                "进程（gloo）实际运行也是这样：每个 rank 的词嵌入权重只有一半词表，它的梯度却是整个词表。"))
