"""The scale page's sentences that assert a relation (the same, shrinks as 1/N, does not
shrink, less than, stops falling): each is checked here on the rows it speaks of, and where
it does not hold the sentence says what does. Rows are the sharding study's (one rank's
peak, what is live at it and each category's own maximum, in bytes).
"""

from __future__ import annotations

import re
from typing import Any

from generator.site.labels import CATEGORY_LABELS
from generator.site.wording import listed
from generator.units import gib, pct, pct_figures, size
from generator.words import Words, same

Row = dict[str, Any]
#: A factor within this share of 1/N counts as shrinking as 1/N; within it of 1, as not
#: shrinking (slices are padded to equal sizes, and allocator blocks round up).
TOLERANCE = 0.01
#: The last doubling of the GPU count that lowers the peak by less than this share of it is
#: where adding GPUs stops paying in memory.
DIMINISHING = 0.05
#: Differences below this are no difference: the tracker rounds to 512-byte blocks.
SAME_BYTES = 2**20
STATE = ("parameters", "gradients", "optimizer_state")
#: What each category is called inside a sentence (lower case in English).
NAMES = {cat: Words(label.en[0].lower() + label.en[1:], label.zh)
         for cat, label in CATEGORY_LABELS.items()}


def _join(items: list[str], lang: str) -> str:
    """Items of one language in a list, as the site joins names (wording.listed)."""
    return listed([same(item) for item in items])[lang]


def _spaced(text: str) -> str:
    """Chinese text with a space between a Han character and a Latin letter, either way round
    (as the site's Chinese sets "autocast 权重副本")."""
    text = re.sub(r"(?<=[\u4e00-\u9fff])(?=[A-Za-z])", " ", text)
    return re.sub(r"(?<=[A-Za-z])(?=[\u4e00-\u9fff])", " ", text)


def _names(cats: list[str]) -> Words:
    return Words(_join([NAMES[c].en for c in cats], "en"), _join([NAMES[c].zh for c in cats], "zh"))


def _gpus(n: int) -> Words:
    return Words(f"{n} GPU{'s' if n != 1 else ''}", f"{n} 卡")


def _counts(ns: list[int]) -> Words:
    return Words(_join([str(n) for n in ns], "en") + f" GPU{'s' if ns != [1] else ''}",
                 "、".join(map(str, ns)) + " 卡")


def ddp_count(ddp: list[Row]) -> Words | None:
    """Whether DDP's per-GPU peak depends on the GPU count: the same to the byte on every count
    estimated, or how far apart; one count says nothing about it."""
    if not ddp:
        return None
    peaks = [r["peak_bytes"] for r in ddp]
    top = gib(max(peaks))
    if len(ddp) == 1:
        n = ddp[0]["world_size"]
        return Words(f"Under DDP a GPU needs **{top} GiB**; it was estimated on "
                     f"{_gpus(n).en} only.",
                     f"用 DDP 时每张卡要 **{top} GiB**；这里只估算了 {n} 卡。")
    counts = _counts([r["world_size"] for r in ddp])
    if max(peaks) == min(peaks):
        return Words(f"Under DDP the GPU count makes no difference to a GPU's memory: the "
                     f"{len(ddp)} DDP rows ({counts.en}) are the same to the byte, and every GPU "
                     f"needs **{top} GiB**.",
                     f"用 DDP 时，卡数多少对单卡显存毫无影响：{counts.zh}这 {len(ddp)} 行一个字节"
                     f"都不差，每张卡都要 **{top} GiB**。")
    spread = size(max(peaks) - min(peaks))
    return Words(f"Under DDP the {len(ddp)} rows ({counts.en}) are not the same: they differ "
                 f"by up to {spread}, and a GPU needs up to **{top} GiB**.",
                 f"用 DDP 时，{counts.zh}这 {len(ddp)} 行并不完全相同，最多差 {spread}；"
                 f"每张卡最多要 **{top} GiB**。")


def shrink(items: list[dict[str, Any]], *, cpu: bool = False) -> Words | None:
    """What the shrink table shows, category by category: as 1/N, not at all, or by how much
    (items: _shrink's, each category's own maximum at the fewest and the most GPUs). cpu: the
    CPU's Adam keeps a step counter per tensor, which no slice divides."""
    if not items:
        return None
    ideal = items[0]["ideal"]
    exact, flat, partial = [], [], []
    for item in items:
        factor = item["factor"]
        if factor is not None and abs(factor / ideal - 1) <= TOLERANCE:
            exact.append(item)
        elif factor is not None and abs(factor - 1) <= TOLERANCE:
            flat.append(item)
        else:
            partial.append(item)
    en, zh = [], []
    if exact:
        cats = _names([x["category"] for x in exact])
        error = pct_figures(max(abs(x["factor"] / x["ideal"] - 1) for x in exact))
        en.append(f"{cats.en[0].upper() + cats.en[1:]} shrink as 1/N (within {error}; the rest "
                  "is padding to equal slices"
                  + (" and Adam's per-tensor step counters" if cpu else "") + ").")
        zh.append(f"{cats.zh}按 1/N 缩小（偏差不超过 {error}，来自为了等分而补的 padding"
                  + ("和 Adam 每个张量的 step 计数器" if cpu else "") + "）。")
    for item in partial:
        name = NAMES[item["category"]]
        if item["factor"] is None:  # nothing left of it on the most GPUs
            en.append(f"{name.en[0].upper() + name.en[1:]} fall to nothing.")
            zh.append(f"{name.zh}降到了零。")
            continue
        en.append(f"{name.en[0].upper() + name.en[1:]} shrink by {item['factor']:.2f}×, where "
                  f"1/N would give {ideal:g}×.")
        zh.append(f"{name.zh}缩小了 {item['factor']:.2f}×，按 1/N 应是 {ideal:g}×。")
    if flat:
        cats = [x["category"] for x in flat]
        names = _names(cats)
        en.append(f"{names.en[0].upper() + names.en[1:]} do not shrink at all.")
        zh.append(f"{names.zh}纹丝不动。")
        if "activations" in cats:
            en.append("Every GPU still runs forward and backward on a full batch of its own: "
                      "sharding splits the model, not the data.")
            zh.append("每张卡照样要对自己那一整份 batch 做前向和反向：分片切的是模型，不是数据。")
        if "autocast_copies" in cats:
            en.append("Autocast casts the gathered weights, whole, and each bf16 copy stays "
                      "until backward has used it.")
            zh.append("autocast 转换的是收集回来的完整权重，每份 bf16 副本都要留到反向用完为止。")
    return Words(" ".join(en), "".join(zh))


def floor(lo: Row, hi: Row) -> Words:
    """What is left at the most GPUs once the model state is sharded away, by category, and
    whether its share of the peak grew from the fewest GPUs to the most."""
    def rest(row: Row) -> int:
        return row["peak_bytes"] - sum(row["live_at_peak_bytes"][c] for c in STATE)

    share_lo, share_hi = rest(lo) / lo["peak_bytes"], rest(hi) / hi["peak_bytes"]
    live = hi["live_at_peak_bytes"]
    parts = sorted((c for c in live if c not in STATE and live[c]), key=lambda c: -live[c])
    listed = Words(_join([f"{NAMES[c].en} ({gib(live[c])} GiB)" for c in parts], "en"),
                   _join([f"{NAMES[c].zh}（{gib(live[c])} GiB）" for c in parts], "zh"))
    n, peak = hi["world_size"], gib(hi["peak_bytes"])
    body = Words(f"On {_gpus(n).en}, {pct(share_hi)} of the {peak} GiB peak is {listed.en}.",
                 _spaced(f"{n} 卡时，{peak} GiB 的峰值里有 {pct(share_hi)} 是{listed.zh}。"))
    if share_hi > share_lo:
        return Words("So the more GPUs, the larger the share of the peak that sharding cannot "
                     "touch. " + body.en, "所以卡越多，峰值里“分片管不着”的部分占比越大。" + body.zh)
    return Words(f"What sharding cannot touch is no larger a share of the peak on "
                 f"{_gpus(n).en} than on {_gpus(lo['world_size']).en} ({pct(share_lo)}). "
                 + body.en,
                 f"分片管不着的部分，{n} 卡时的占比并不比 {lo['world_size']} 卡时"
                 f"（{pct(share_lo)}）大。" + body.zh)


def last_doubling(fsdp: list[Row]) -> Words | None:
    """How much the last step up in GPU count lowered the peak: under DIMINISHING of it, more
    GPUs no longer pay in memory; else they still do."""
    if len(fsdp) < 2:
        return None
    a, b = fsdp[-2], fsdp[-1]
    fall = a["peak_bytes"] - b["peak_bytes"]
    share = fall / a["peak_bytes"]
    span = Words(f"From {a['world_size']} to {_gpus(b['world_size']).en}",
                 f"从 {a['world_size']} 卡到 {b['world_size']} 卡")
    if share < DIMINISHING:
        return Words(f"{span.en} the peak falls by only {size(fall)} ({pct(share)}): past that "
                     "point more GPUs hardly lower what each one needs.",
                     f"{span.zh}，峰值只降了 {size(fall)}（{pct(share)}）：再往上加卡，"
                     "每张卡要的显存几乎不再下降。")
    return Words(f"{span.en} the peak still falls by {size(fall)} ({pct(share)}).",
                 f"{span.zh}，峰值仍然降了 {size(fall)}（{pct(share)}）。")


def floor_levers(hi: Row, batch_size: int, policy: list[Row]) -> Words:
    """What lowers what sharding cannot touch: the activations' levers (fewer samples only where
    a GPU has more than one); and, where autocast's weight copies are part of it and FSDP2's
    bf16 policy ran without any, that policy."""
    en = ("To lower what sharding cannot touch, shrink the activations: activation checkpointing"
          + (", a shorter sequence or fewer samples per GPU" if batch_size > 1
             else " or a shorter sequence"))
    zh = ("想把分片管不着的这部分压下去，要从激活值下手："
          + ("激活检查点、更短的序列，或者每张卡少放几个样本" if batch_size > 1
             else "激活检查点，或者更短的序列"))
    copies = hi["live_at_peak_bytes"].get("autocast_copies", 0)
    if copies and policy and not any(r["live_at_peak_bytes"].get("autocast_copies")
                                     for r in policy):
        en += (f". Under autocast it also holds {gib(copies)} GiB of weight copies, "
               "which FSDP2's bf16 policy does not make at all (its rows in the table above)")
        zh += (f"。autocast 下，这部分里还有 {gib(copies)} GiB 的权重副本，FSDP2 的 bf16 策略根本"
               "不会产生它们（见上面表里它的几行）")
    return Words(en + ".", zh + "。")


def strategy_gap(versus: dict[str, Any]) -> Words:
    """DDP's peak against FSDP2's in one regime, split into model state, communication buffers
    and what the computation keeps; a part that does not differ is said to be the same."""
    ddp, fsdp, gap = versus["ddp"], versus["fsdp"], versus["gap"]
    head = Words(f"DDP's {gib(ddp['peak_bytes'])} GiB on {_gpus(ddp['world_size']).en} against "
                 f"FSDP2's {gib(fsdp['peak_bytes'])} GiB on {_gpus(fsdp['world_size']).en}, "
                 f"in the same regime, is a gap of {gib(gap['total'])} GiB",
                 f"同一种精度方式下，DDP {ddp['world_size']} 卡要 {gib(ddp['peak_bytes'])} GiB，"
                 f"FSDP2 {fsdp['world_size']} 卡要 {gib(fsdp['peak_bytes'])} GiB，"
                 f"差了 {gib(gap['total'])} GiB")
    names = {"state": Words("model state", "模型状态"),
             "buffers": Words("communication buffers", "通信缓冲"),
             "compute": Words("what the computation keeps (activations, autocast copies, "
                              "temporaries)", "计算本身留下的东西（激活值、autocast 副本、临时张量）")}
    differ = [k for k in names if abs(gap[k]) >= SAME_BYTES]
    same = [k for k in names if k not in differ]
    en = [f"{gib(gap[k])} GiB {names[k].en}" for k in differ]
    zh = [names[k].zh + ("" if names[k].zh.endswith("）") else " ") + f"{gib(gap[k])} GiB"
          for k in differ]
    text = Words(head.en + (": " + _join(en, "en") if en else ""),
                 head.zh + ("，其中" + _join(zh, "zh") if zh else ""))
    if same:
        text = Words(text.en + "; " + _join([names[k].en for k in same], "en")
                     + " is the same in both",
                     text.zh + "；" + _join([names[k].zh for k in same], "zh") + "两者相同")
    return Words(text.en + ".", text.zh + "。")


def regime_gap(autocast: Row, policy: Row) -> Words:
    """FSDP2 with its bf16 mixed-precision policy against FSDP2 under autocast on the same GPU
    count: less, more or the same, and the categories that differ most."""
    n = autocast["world_size"]
    diff = policy["peak_bytes"] - autocast["peak_bytes"]
    head = Words(f"In the other regime, FSDP2's bf16 policy, a GPU needs "
                 f"{gib(policy['peak_bytes'])} GiB on {_gpus(n).en}",
                 f"换成另一种精度方式，即 FSDP2 的 bf16 策略，{n} 卡时每张卡要 "
                 f"{gib(policy['peak_bytes'])} GiB")
    if abs(diff) < SAME_BYTES:
        return Words(head.en + ", the same as under autocast.", head.zh + "，与 autocast 下相同。")
    a, b = autocast["live_at_peak_bytes"], policy["live_at_peak_bytes"]
    # the categories that moved the way the peak did, largest first: the two largest
    moved = sorted(((c, b.get(c, 0) - a.get(c, 0)) for c in set(a) | set(b)),
                   key=lambda item: item[1] if diff < 0 else -item[1])
    signed = [(c, d) for c, d in moved if abs(d) >= SAME_BYTES and (d < 0) == (diff < 0)][:2]
    en = _join([f"{NAMES[c].en} ({'+' if d > 0 else '−'}{gib(abs(d))} GiB)" for c, d in signed],
               "en")
    zh = _join([f"{NAMES[c].zh}（{'+' if d > 0 else '−'}{gib(abs(d))} GiB）" for c, d in signed],
               "zh")
    word = Words("less", "少") if diff < 0 else Words("more", "多")
    most = abs(sum(d for _, d in signed)) >= abs(diff) / 2
    where = (Words("", "") if not signed
             else Words(f", most of it in {en}", f"，主要差在{zh}") if most
             else Words(f"; the largest parts: {en}", f"；差得最多的是{zh}"))
    return Words(f"{head.en}: {gib(abs(diff))} GiB {word.en} than FSDP2 under autocast"
                 f"{where.en}.",
                 _spaced(f"{head.zh}，比 autocast 下的 FSDP2 {word.zh} {gib(abs(diff))} GiB"
                         f"{where.zh}。"))
