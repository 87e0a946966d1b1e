"""The scale page's sentences that assert a relation (the same, shrinks as 1/N, does not
shrink, less than, stops falling): each is checked here on the rows it speaks of, and where
it does not hold the sentence says what does. Rows are the page's (scale/__init__.py: one
rank's estimated step, its tensors' peak, what is live at it, each category's own maximum and
the caching allocator's reserved peak, in bytes).
"""

from __future__ import annotations

import re
from typing import Any

from generator.site.escaping import written
from generator.site.labels import CATEGORY_LABELS
from generator.site.wording import listed
from generator.units import gib, pct, pct_figures, size
from generator.words import Words, same

Row = dict[str, Any]
#: A factor within this share of 1/N counts as shrinking as 1/N; within it of 1, as not
#: shrinking (slices are padded to equal sizes, and allocator blocks round up).
TOLERANCE = 0.01
#: A doubling of the GPU count that lowers the reserved peak by less than this share of it no
#: longer pays in memory: where every later doubling does so too, the per-GPU memory has
#: stopped falling.
DIMINISHING = 0.05
FSDP2 = Words("FSDP2", "FSDP2")
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
    """Whether DDP's reserved peak per GPU depends on the GPU count: the same on every count
    estimated (within SAME_BYTES), or how far apart; one count says nothing about it. The
    peak in bold (Markdown; the rest is numbers and this module's words)."""
    if not ddp:
        return None
    words = _ddp_count(ddp)
    return written(words)


def _ddp_count(ddp: list[Row]) -> Words:
    peaks = [_reserved(r) for r in ddp]
    top = gib(max(peaks))
    if len(ddp) == 1:
        n = ddp[0]["world_size"]
        return Words(f"Under DDP a GPU's reserved peak is **{top} GiB**; it was estimated on "
                     f"{_gpus(n).en} only.",
                     f"用 DDP 时每张卡的已预留峰值是 **{top} GiB**；这里只估算了 {n} 卡。")
    counts = _counts([r["world_size"] for r in ddp])
    spread = max(peaks) - min(peaks)
    if spread < SAME_BYTES:
        return Words(f"Under DDP the GPU count makes no difference to a GPU's memory: the "
                     f"{len(ddp)} DDP rows ({counts.en}) reserve the same"
                     + (" to the byte" if not spread else f" within {size(spread)}")
                     + f", **{top} GiB** on every GPU.",
                     f"用 DDP 时，卡数多少对单卡显存没有影响：{counts.zh}这 {len(ddp)} 行的已预留峰值"
                     + ("一个字节都不差" if not spread else f"相差不到 {size(spread)}")
                     + f"，每张卡都是 **{top} GiB**。")
    return Words(f"Under DDP the {len(ddp)} rows ({counts.en}) are not the same: their reserved "
                 f"peaks differ by up to {size(spread)}, and a GPU reserves up to **{top} GiB**.",
                 f"用 DDP 时，{counts.zh}这 {len(ddp)} 行并不完全相同，已预留峰值最多差 "
                 f"{size(spread)}；每张卡最多预留 **{top} GiB**。")


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
            en.append("Autocast casts the gathered weights, whole, and keeps each bf16 copy in "
                      "its weight cache until the autocast region ends; backward keeps those it "
                      "saved.")
            zh.append("autocast 转换的是收集回来的完整权重，每份 bf16 副本都留在它的权重缓存里，"
                      "直到 autocast 区域结束；反向要用的那些还会留得更久。")
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
    body = Words(f"On {_gpus(n).en}, {pct(share_hi)} of the tensors' {peak} GiB peak is "
                 f"{listed.en}.",
                 _spaced(f"{n} 卡时，{peak} GiB 的张量峰值里有 {pct(share_hi)} 是{listed.zh}。"))
    if share_hi > share_lo:
        return Words("So the more GPUs, the larger the share of the peak that sharding cannot "
                     "touch. " + body.en, "所以卡越多，峰值里“分片管不着”的部分占比越大。" + body.zh)
    return Words(f"What sharding cannot touch is no larger a share of the peak on "
                 f"{_gpus(n).en} than on {_gpus(lo['world_size']).en} ({pct(share_lo)}). "
                 + body.en,
                 f"分片管不着的部分，{n} 卡时的占比并不比 {lo['world_size']} 卡时"
                 f"（{pct(share_lo)}）大。" + body.zh)


def _reserved(row: Row) -> int:
    return row["reserved_bytes"] if row.get("reserved_bytes") is not None else row["peak_bytes"]


def stops_falling(series: list[Row], name: Words) -> Words | None:
    """Where a line's reserved peak per GPU stops falling: the fewest GPUs from which every
    further step up in GPU count (each a doubling or more) lowers it by less than
    DIMINISHING of it; or, where none does, how much the last step still lowered it."""
    if len(series) < 2:
        return None
    steps = list(zip(series, series[1:]))
    falls = [(a, b, (_reserved(a) - _reserved(b)) / _reserved(a)) for a, b in steps]
    flat_from = None
    for i in range(len(falls)):
        if all(share < DIMINISHING for _, _, share in falls[i:]):
            flat_from = falls[i][0]
            break
    last = series[-1]
    if flat_from is None:
        a, b, share = falls[-1]
        return Words(f"Under {name.en} the reserved peak per GPU still falls from "
                     f"{_gpus(a['world_size']).en} to {_gpus(b['world_size']).en}, by "
                     f"{size(_reserved(a) - _reserved(b))} ({pct(share)}), to "
                     f"{gib(_reserved(b))} GiB.",
                     _spaced(f"用{name.zh}时，从 {a['world_size']} 卡到 {b['world_size']} 卡，"
                             f"单卡已预留峰值仍然降了 {size(_reserved(a) - _reserved(b))}"
                             f"（{pct(share)}），降到 {gib(_reserved(b))} GiB。"))
    n = flat_from["world_size"]
    most = max(share for _, _, share in falls[series.index(flat_from):])
    total = _reserved(flat_from) - _reserved(last)
    if n == series[0]["world_size"]:
        en_head = (f"Under {name.en} the reserved peak per GPU hardly falls at all: from "
                   f"{_gpus(n).en} to {_gpus(last['world_size']).en}")
        zh_head = f"用{name.zh}时，单卡已预留峰值几乎不降：从 {n} 卡到 {last['world_size']} 卡"
    else:
        en_head = (f"Under {name.en} the reserved peak per GPU stops falling at "
                   f"{_gpus(n).en}: from there to {_gpus(last['world_size']).en}")
        zh_head = (f"用{name.zh}时，单卡已预留峰值到 {n} 卡就不再下降：从 {n} 卡到 "
                   f"{last['world_size']} 卡")
    return Words(f"{en_head} it goes from {gib(_reserved(flat_from))} to "
                 f"{gib(_reserved(last))} GiB ({size(abs(total))} {'less' if total >= 0 else 'more'}), "
                 f"no step up in GPU count lowering it by as much as {pct(DIMINISHING)} "
                 f"(at most {pct(max(most, 0))}).",
                 _spaced(f"{zh_head}，从 {gib(_reserved(flat_from))} GiB 变为 "
                         f"{gib(_reserved(last))} GiB（{'少' if total >= 0 else '多'}了 "
                         f"{size(abs(total))}），每次加卡都降不到 {pct(DIMINISHING)}"
                         f"（最多 {pct(max(most, 0))}）。"))


def rises(series: list[Row], name: Words) -> Words | None:
    """Where more GPUs give a GPU more to hold under one strategy (a reserved peak that rises
    by more than TOLERANCE of it from one count to the next): said, never hidden."""
    up = [(a, b) for a, b in zip(series, series[1:])
          if _reserved(b) - _reserved(a) > TOLERANCE * _reserved(a)]
    if not up:
        return None
    a, b = max(up, key=lambda pair: _reserved(pair[1]) - _reserved(pair[0]))
    diff = size(_reserved(b) - _reserved(a))
    return Words(f"Under {name.en} the reserved peak per GPU rises from "
                 f"{_gpus(a['world_size']).en} to {_gpus(b['world_size']).en}, by {diff}.",
                 _spaced(f"用{name.zh}时，从 {a['world_size']} 卡到 {b['world_size']} 卡，"
                         f"单卡已预留峰值反而多了 {diff}。"))


def floor_levers(hi: Row, batch_size: int, policy: list[Row], *,
                 checkpointing: bool = False) -> Words:
    """What lowers what sharding cannot touch: the activations' levers (checkpointing where
    the step does not use it yet; fewer samples only where a GPU has more than one); and,
    where autocast's weight copies are part of it and FSDP2's policy ran without any, that
    policy."""
    levers_en = ([] if checkpointing else ["activation checkpointing"]) + ["a shorter sequence"] \
        + (["fewer samples per GPU"] if batch_size > 1 else [])
    levers_zh = ([] if checkpointing else ["激活检查点"]) + ["更短的序列"] \
        + (["每张卡少放几个样本"] if batch_size > 1 else [])
    en = ("To lower what sharding cannot touch, shrink the activations"
          + (" (the step already recomputes each block in backward)" if checkpointing else "")
          + ": " + _join(levers_en, "en").replace(" and ", " or "))
    zh = ("想把分片管不着的这部分压下去，要从激活值下手"
          + ("（这一步已经在反向时重算每个 block）" if checkpointing else "")
          + "：" + "、".join(levers_zh[:-1]) + ("，或者" if len(levers_zh) > 1 else "")
          + levers_zh[-1])
    copies = hi["live_at_peak_bytes"].get("autocast_copies", 0)
    if copies and policy and not any(r["live_at_peak_bytes"].get("autocast_copies")
                                     for r in policy):
        en += (f". Under autocast it also holds {gib(copies)} GiB of bf16 weight copies, "
               "which FSDP2's policy does not make at all (its rows in the tables)")
        zh += (f"。autocast 下，这部分里还有 {gib(copies)} GiB 的 bf16 权重副本，FSDP2 的策略根本"
               "不会产生它们（见表里它的几行）")
    return Words(en + ".", zh + "。")


def strategy_gap(versus: dict[str, Any]) -> Words:
    """DDP's peak against FSDP2's in one regime, split into model state, communication buffers
    and what the computation keeps; a part that does not differ is said to be the same."""
    ddp, fsdp, gap = versus["ddp"], versus["fsdp"], versus["gap"]
    head = Words(f"In the tensors' peaks, DDP's {gib(ddp['peak_bytes'])} GiB on "
                 f"{_gpus(ddp['world_size']).en} against FSDP2's {gib(fsdp['peak_bytes'])} GiB "
                 f"on {_gpus(fsdp['world_size']).en}, in the same regime, is a gap of "
                 f"{gib(gap['total'])} GiB",
                 f"同一种精度方式下，按张量峰值算，DDP {ddp['world_size']} 卡是 "
                 f"{gib(ddp['peak_bytes'])} GiB，FSDP2 {fsdp['world_size']} 卡是 "
                 f"{gib(fsdp['peak_bytes'])} GiB，差了 {gib(gap['total'])} GiB")
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


def regime_gap(autocast: Row, policy: Row, name: Words) -> Words:
    """FSDP2 with its mixed-precision policy (`name`) against FSDP2 under autocast on the same
    GPU count, on the tensors' peak: less, more or the same, and the categories that differ
    most."""
    n = autocast["world_size"]
    diff = policy["peak_bytes"] - autocast["peak_bytes"]
    head = Words(f"In the other regime, {name.en}, a GPU's tensors peak at "
                 f"{gib(policy['peak_bytes'])} GiB on {_gpus(n).en}",
                 f"换成另一种精度方式，即{name.zh}，{n} 卡时每张卡的张量峰值是 "
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


#: What tensor parallelism splits that FSDP2 does not: what a GPU computes with.
COMPUTED = ("activations", "autocast_copies")


def tensor_parallel(fsdp: list[Row], tp: list[Row], name: Words) -> Words | None:
    """Tensor parallelism (`name`: TP, or FSDP2 × TP) against FSDP2 on the largest GPU count
    both were estimated on: the tensors' peak, and the own maxima of what each GPU computes
    with (activations, autocast's weight copies), which FSDP2 leaves whole and TP splits.
    None where no count has both."""
    shared = sorted({r["world_size"] for r in fsdp} & {r["world_size"] for r in tp})
    if not shared:
        return None
    n = shared[-1]
    a = next(r for r in fsdp if r["world_size"] == n)
    b = next(r for r in tp if r["world_size"] == n)
    parts = [(c, a["category_max_bytes"].get(c, 0), b["category_max_bytes"].get(c, 0))
             for c in COMPUTED if a["category_max_bytes"].get(c, 0) >= SAME_BYTES]
    compared = Words(
        _join([f"{NAMES[c].en} {gib(tb)} GiB against {gib(fb)}" for c, fb, tb in parts], "en"),
        _join([f"{NAMES[c].zh} {gib(tb)} GiB 对 {gib(fb)} GiB" for c, fb, tb in parts], "zh"))
    word = Words("less", "少") if b["peak_bytes"] < a["peak_bytes"] else Words("more", "多")
    head = Words(f"On {_gpus(n).en}, {name.en} leaves a GPU {gib(b['peak_bytes'])} GiB of "
                 f"tensors at their peak, {gib(abs(a['peak_bytes'] - b['peak_bytes']))} GiB "
                 f"{word.en} than FSDP2's {gib(a['peak_bytes'])} GiB",
                 f"{n} 卡时，{name.zh}下每张卡的张量峰值是 {gib(b['peak_bytes'])} GiB，比 "
                 f"FSDP2 的 {gib(a['peak_bytes'])} GiB {word.zh} "
                 f"{gib(abs(a['peak_bytes'] - b['peak_bytes']))} GiB")
    if not parts:
        return Words(head.en + ".", _spaced(head.zh + "。"))
    return Words(f"{head.en}; of what a GPU computes with, the largest each holds during the "
                 f"step: {compared.en} under FSDP2.",
                 _spaced(f"{head.zh}；计算时要用的东西，各自在一步中的最大值："
                         f"{compared.zh}（后者为 FSDP2）。"))


def cpu_offload(fsdp: list[Row], offload: list[Row]) -> Words | None:
    """FSDP2 with CPU offload against FSDP2 on the fewest GPUs both were estimated on, where
    each GPU's share of the model state is the largest: each one's reserved peak, the model
    state FSDP2 held on the GPU at its tensors' peak (what offload moves to the host) and the
    host memory a rank then needs. None where no count has both, or a row lacks the
    allocator's figures."""
    shared = sorted({r["world_size"] for r in fsdp} & {r["world_size"] for r in offload})
    if not shared:
        return None
    n = shared[0]
    a = next(r for r in fsdp if r["world_size"] == n)
    b = next(r for r in offload if r["world_size"] == n)
    host = (b["result"].get("parallel") or {}).get("host_bytes")
    if a["reserved_bytes"] is None or b["reserved_bytes"] is None or host is None:
        return None
    state = sum(a["live_at_peak_bytes"].get(c, 0) for c in STATE)
    word = Words("less", "少") if b["reserved_bytes"] < a["reserved_bytes"] else \
        Words("more", "多")
    gap = gib(abs(a["reserved_bytes"] - b["reserved_bytes"]))
    return Words(
        f"On {_gpus(n).en}, FSDP2 with CPU offload reserves {gib(b['reserved_bytes'])} GiB a "
        f"GPU, {gap} GiB {word.en} than without it ({gib(a['reserved_bytes'])} GiB): without "
        f"offload, the shards of parameters, gradients and optimizer state held "
        f"{gib(state)} GiB of the GPU's tensors at their peak; with it they are in host "
        f"memory, {gib(host)} GiB a rank as the optimizer starts.",
        _spaced(f"{n} 卡时，FSDP2 开 CPU 卸载后每张卡预留 {gib(b['reserved_bytes'])} GiB，比不卸载"
                f"（{gib(a['reserved_bytes'])} GiB）{word.zh} {gap} GiB：不卸载时，参数、梯度和优化器"
                f"状态的分片在张量峰值处占 {gib(state)} GiB 显存；卸载后它们在主机内存里，优化器开始"
                f"时每个 rank 占 {gib(host)} GiB 主机内存。"))
