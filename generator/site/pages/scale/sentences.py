"""The scale page's sentences that assert a relation (the same, shrinks as 1/N, does not
shrink, less than, stops falling): each is checked here on the rows it speaks of, and where
it does not hold the sentence says what does. Rows are the page's (scale/__init__.py: one
rank's estimated step, its tensors' peak, what is live at it, each category's own maximum and
the caching allocator's reserved peak, in bytes).
"""

from __future__ import annotations

import re
from typing import Any

from generator.experiment.levers import BY_ID
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


def joined(items: list[str], lang: str) -> str:
    """Items of one language in a list, as the site joins names (wording.listed)."""
    return listed([same(item) for item in items])[lang]


def spaced(text: str) -> str:
    """Chinese text with a space between a Han character and a Latin letter or a digit, either
    way round (as the site's Chinese sets "autocast 权重副本", "用 FSDP2 时")."""
    text = re.sub(r"(?<=[\u4e00-\u9fff])(?=[A-Za-z0-9])", " ", text)
    return re.sub(r"(?<=[A-Za-z0-9])(?=[\u4e00-\u9fff])", " ", text)


def _names(cats: list[str]) -> Words:
    return Words(joined([NAMES[c].en for c in cats], "en"),
                 joined([NAMES[c].zh for c in cats], "zh"))


def on_gpus(n: int) -> Words:
    return Words(f"{n} GPU{'s' if n != 1 else ''}", f"{n} 卡")


def _counts(ns: list[int]) -> Words:
    return Words(joined([str(n) for n in ns], "en") + f" GPU{'s' if ns != [1] else ''}",
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
                     f"{on_gpus(n).en} only.",
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


def trained(parameter_count: int, trainable: int | None) -> Words:
    """How much of the model the step trains: every weight (fully fine-tuned) where the
    trainable count is the whole count, else how many of them."""
    if trainable is None or trainable == parameter_count:
        return Words("fully fine-tuned (every weight trained)", "全参数微调（每个权重都训练）")
    return Words(f"{trainable:,} of its {parameter_count:,} parameters trained",
                 f"{parameter_count:,} 个参数里训练 {trainable:,} 个")


def ddp_state(row: Row, parameter_count: int) -> Words:
    """What DDP's model state takes on a GPU (each category's own maximum), per parameter, and
    whether its gradient buckets hold the gradients a second time (the same bytes, within
    SAME_BYTES) or how much they hold beside them."""
    cats = row["category_max_bytes"]
    state = sum(cats.get(c, 0) for c in STATE)
    buckets, grads = cats.get("comm_buffers", 0), cats.get("gradients", 0)
    head = Words(f"Weights, gradients and optimizer state alone take {gib(state)} GiB",
                 f"光是权重、梯度和优化器状态就占 {gib(state)} GiB")
    if parameter_count:
        per = state / parameter_count
        head = Words(f"{head.en}, {per:.0f} bytes for each of the {parameter_count:,} "
                     "parameters", f"{head.zh}，{parameter_count:,} 个参数每个 {per:.0f} 字节")
    if abs(buckets - grads) < SAME_BYTES:  # Markdown: a code span, written here
        return written(Words(f"{head.en}, and DDP's buckets hold the gradients a second time "
                     f"({gib(buckets)} GiB; `gradient_as_bucket_view=True` would make the "
                     "gradients views into the buckets and save that copy).",
                     f"{head.zh}；DDP 的梯度桶又存了一份梯度（{gib(buckets)} GiB；"
                     "`gradient_as_bucket_view=True` 会让梯度成为桶的视图，省下这一份）。"))
    return Words(f"{head.en}, and DDP's buckets hold {gib(buckets)} GiB beside the gradients' "
                 f"{gib(grads)} GiB.",
                 f"{head.zh}；DDP 的梯度桶另占 {gib(buckets)} GiB，梯度本身 {gib(grads)} GiB。")


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
    listed = Words(joined([f"{NAMES[c].en} ({gib(live[c])} GiB)" for c in parts], "en"),
                   joined([f"{NAMES[c].zh}（{gib(live[c])} GiB）" for c in parts], "zh"))
    n, peak = hi["world_size"], gib(hi["peak_bytes"])
    body = Words(f"On {on_gpus(n).en}, {pct(share_hi)} of the tensors' {peak} GiB peak is "
                 f"{listed.en}.",
                 spaced(f"{n} 卡时，{peak} GiB 的张量峰值里有 {pct(share_hi)} 是{listed.zh}。"))
    if share_hi > share_lo:
        return Words("So the more GPUs, the larger the share of the peak that sharding cannot "
                     "touch. " + body.en, "所以卡越多，峰值里“分片管不着”的部分占比越大。" + body.zh)
    return Words(f"What sharding cannot touch is no larger a share of the peak on "
                 f"{on_gpus(n).en} than on {on_gpus(lo['world_size']).en} ({pct(share_lo)}). "
                 + body.en,
                 f"分片管不着的部分，{n} 卡时的占比并不比 {lo['world_size']} 卡时"
                 f"（{pct(share_lo)}）大。" + body.zh)


def _reserved(row: Row) -> int:
    return row["reserved_bytes"] if row.get("reserved_bytes") is not None else row["peak_bytes"]


def stops_falling(series: list[Row], name: Words) -> Words | None:
    """Where a line's tensors' peak per GPU stops falling: the fewest GPUs from which every
    further step up in GPU count (each a doubling or more) lowers it by less than
    DIMINISHING of it; or, where none does, how much the last step still lowered it. On the
    tensors' peak, not the reserved one: the reserved peak also moves with where the
    simulated allocator places its blocks (reserved_moves)."""
    if len(series) < 2:
        return None
    steps = list(zip(series, series[1:]))
    falls = [(a, b, (a["peak_bytes"] - b["peak_bytes"]) / a["peak_bytes"]) for a, b in steps]
    flat_from = None
    for i in range(len(falls)):
        if all(share < DIMINISHING for _, _, share in falls[i:]):
            flat_from = falls[i][0]
            break
    last = series[-1]
    if flat_from is None:
        a, b, share = falls[-1]
        fell = a["peak_bytes"] - b["peak_bytes"]
        return Words(f"Under {name.en} the tensors' peak per GPU still falls from "
                     f"{on_gpus(a['world_size']).en} to {on_gpus(b['world_size']).en}, by "
                     f"{size(fell)} ({pct(share)}), to {gib(b['peak_bytes'])} GiB.",
                     spaced(f"用{name.zh}时，从 {a['world_size']} 卡到 {b['world_size']} 卡，"
                             f"单卡张量峰值仍然降了 {size(fell)}（{pct(share)}），降到 "
                             f"{gib(b['peak_bytes'])} GiB。"))
    n = flat_from["world_size"]
    most = max(share for _, _, share in falls[series.index(flat_from):])
    total = flat_from["peak_bytes"] - last["peak_bytes"]
    if n == series[0]["world_size"]:
        en_head = (f"Under {name.en} the tensors' peak per GPU hardly falls at all: from "
                   f"{on_gpus(n).en} to {on_gpus(last['world_size']).en}")
        zh_head = f"用{name.zh}时，单卡张量峰值几乎不降：从 {n} 卡到 {last['world_size']} 卡"
    else:
        en_head = (f"Under {name.en} the tensors' peak per GPU stops falling at "
                   f"{on_gpus(n).en}: from there to {on_gpus(last['world_size']).en}")
        zh_head = (f"用{name.zh}时，单卡张量峰值到 {n} 卡就不再下降：从 {n} 卡到 "
                   f"{last['world_size']} 卡")
    return Words(f"{en_head} it goes from {gib(flat_from['peak_bytes'])} to "
                 f"{gib(last['peak_bytes'])} GiB ({size(abs(total))} "
                 f"{'less' if total >= 0 else 'more'}), no step up in GPU count lowering it by "
                 f"as much as {pct(DIMINISHING)} (at most {pct(max(most, 0))}).",
                 spaced(f"{zh_head}，从 {gib(flat_from['peak_bytes'])} GiB 变为 "
                         f"{gib(last['peak_bytes'])} GiB（{'少' if total >= 0 else '多'}了 "
                         f"{size(abs(total))}），每次加卡都降不到 {pct(DIMINISHING)}"
                         f"（最多 {pct(max(most, 0))}）。"))


def reserved_moves(series: list[Row], name: Words) -> Words | None:
    """Where more GPUs give a GPU a larger reserved peak under one strategy (by more than
    TOLERANCE of it from one count to the next): said on the tensors' peak. Where the
    tensors' peak rises too, by how much; where it does not, the reserved difference is
    where the simulated caching allocator places its blocks, not what the tensors need, and
    the same ranks replayed with another cuBLAS workspace (a row's `replays`, the result's
    allocator.other_workspaces) show how far placement alone moves it. None where the
    reserved peak rises nowhere."""
    up = [(a, b) for a, b in zip(series, series[1:])
          if _reserved(b) - _reserved(a) > TOLERANCE * _reserved(a)]
    if not up:
        return None
    a, b = max(up, key=lambda pair: _reserved(pair[1]) - _reserved(pair[0]))
    na, nb = a["world_size"], b["world_size"]
    rise = size(_reserved(b) - _reserved(a))
    tensors = b["peak_bytes"] - a["peak_bytes"]
    if tensors > TOLERANCE * a["peak_bytes"]:
        return Words(f"Under {name.en} the tensors' peak per GPU rises from {on_gpus(na).en} to "
                     f"{on_gpus(nb).en}, by {size(tensors)} (the reserved peak by {rise}).",
                     spaced(f"用{name.zh}时，从 {na} 卡到 {nb} 卡，单卡张量峰值反而多了 "
                             f"{size(tensors)}（已预留峰值多了 {rise}）。"))
    peaks = [r["peak_bytes"] for r in series]
    if max(peaks) - min(peaks) < SAME_BYTES:
        counts = _counts([r["world_size"] for r in series])
        head = Words(f"Under {name.en} the tensors' peak per GPU is the same on {counts.en} "
                     f"({gib(peaks[0])} GiB)",
                     f"用{name.zh}时，{counts.zh}的单卡张量峰值都一样（{gib(peaks[0])} GiB）")
    else:
        head = Words(f"Under {name.en} the tensors' peak per GPU does not rise from "
                     f"{on_gpus(na).en} to {on_gpus(nb).en} ({gib(a['peak_bytes'])} and "
                     f"{gib(b['peak_bytes'])} GiB)",
                     f"用{name.zh}时，从 {na} 卡到 {nb} 卡，单卡张量峰值并没有增加"
                     f"（{gib(a['peak_bytes'])} GiB 和 {gib(b['peak_bytes'])} GiB）")
    reserved = [_reserved(r) for r in series]
    text = Words(f"{head.en}; its reserved peak still moves between {gib(min(reserved))} and "
                 f"{gib(max(reserved))} GiB (from {on_gpus(na).en} to {on_gpus(nb).en} it rises by "
                 f"{rise}). That difference is where the simulated caching allocator places its "
                 "blocks, not what the tensors need",
                 f"{head.zh}；已预留峰值却在 {gib(min(reserved))} 到 {gib(max(reserved))} GiB "
                 f"之间变动（从 {na} 卡到 {nb} 卡多了 {rise}）。这个差别来自模拟的缓存分配器"
                 "怎样摆放内存块，不是张量需要的")
    sizes = set.intersection(*(set(r.get("replays") or {}) for r in series))
    if sizes and all(r.get("workspace_bytes") for r in series):
        other = min(sizes)
        again = [r["replays"][other] for r in series]
        text = Words(f"{text.en}: replayed with a cuBLAS workspace of {size(other)} instead of "
                     f"{size(series[0]['workspace_bytes'])}, the same ranks reserve between "
                     f"{gib(min(again))} and {gib(max(again))} GiB",
                     f"{text.zh}：把 cuBLAS 工作区从 {size(series[0]['workspace_bytes'])} 换成 "
                     f"{size(other)} 重放，同样这些 rank 预留 {gib(min(again))} 到 "
                     f"{gib(max(again))} GiB")
    return Words(text.en + ".", spaced(text.zh + "。"))


def floor_levers(hi: Row, batch_size: int, policy: list[Row], *,
                 checkpointing: bool = False) -> Words:
    """What lowers what sharding cannot touch: the activations' levers (checkpointing where
    the step does not use it yet; fewer samples only where a GPU has more than one); and,
    where autocast's weight copies are part of it and FSDP2's policy ran without any, that
    policy."""
    ckpt = BY_ID["checkpointing"].name  # the lever registry's name for it
    levers_en = ([] if checkpointing else [ckpt.en]) + ["a shorter sequence"] \
        + (["fewer samples per GPU"] if batch_size > 1 else [])
    levers_zh = ([] if checkpointing else [ckpt.zh]) + ["更短的序列"] \
        + (["每张卡少放几个样本"] if batch_size > 1 else [])
    en = ("To lower what sharding cannot touch, shrink the activations"
          + (" (the step already recomputes each block in backward)" if checkpointing else "")
          + ": " + joined(levers_en, "en").replace(" and ", " or "))
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
                 f"{on_gpus(ddp['world_size']).en} against FSDP2's {gib(fsdp['peak_bytes'])} GiB "
                 f"on {on_gpus(fsdp['world_size']).en}, in the same regime, is a gap of "
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
    text = Words(head.en + (": " + joined(en, "en") if en else ""),
                 head.zh + ("，其中" + joined(zh, "zh") if zh else ""))
    if same:
        text = Words(text.en + "; " + joined([names[k].en for k in same], "en")
                     + " is the same in both",
                     text.zh + "；" + joined([names[k].zh for k in same], "zh") + "两者相同")
    return Words(text.en + ".", text.zh + "。")


def regime_gap(autocast: Row, policy: Row, name: Words) -> Words:
    """FSDP2 with its mixed-precision policy (`name`) against FSDP2 under autocast on the same
    GPU count, on the tensors' peak: less, more or the same, and the categories that differ
    most."""
    n = autocast["world_size"]
    diff = policy["peak_bytes"] - autocast["peak_bytes"]
    head = Words(f"In the other regime, {name.en}, a GPU's tensors peak at "
                 f"{gib(policy['peak_bytes'])} GiB on {on_gpus(n).en}",
                 f"换成另一种精度方式，即{name.zh}，{n} 卡时每张卡的张量峰值是 "
                 f"{gib(policy['peak_bytes'])} GiB")
    if abs(diff) < SAME_BYTES:
        return Words(head.en + ", the same as under autocast.", head.zh + "，与 autocast 下相同。")
    a, b = autocast["live_at_peak_bytes"], policy["live_at_peak_bytes"]
    # the categories that moved the way the peak did, largest first: the two largest
    moved = sorted(((c, b.get(c, 0) - a.get(c, 0)) for c in set(a) | set(b)),
                   key=lambda item: item[1] if diff < 0 else -item[1])
    signed = [(c, d) for c, d in moved if abs(d) >= SAME_BYTES and (d < 0) == (diff < 0)][:2]
    en = joined([f"{NAMES[c].en} ({'+' if d > 0 else '−'}{gib(abs(d))} GiB)" for c, d in signed],
               "en")
    zh = joined([f"{NAMES[c].zh}（{'+' if d > 0 else '−'}{gib(abs(d))} GiB）" for c, d in signed],
               "zh")
    word = Words("less", "少") if diff < 0 else Words("more", "多")
    most = abs(sum(d for _, d in signed)) >= abs(diff) / 2
    where = (Words("", "") if not signed
             else Words(f", most of it in {en}", f"，主要差在{zh}") if most
             else Words(f"; the largest parts: {en}", f"；差得最多的是{zh}"))
    return Words(f"{head.en}: {gib(abs(diff))} GiB {word.en} than FSDP2 under autocast"
                 f"{where.en}.",
                 spaced(f"{head.zh}，比 autocast 下的 FSDP2 {word.zh} {gib(abs(diff))} GiB"
                         f"{where.zh}。"))


def cpu_offload(fsdp: list[Row], offload: list[Row]) -> Words | None:
    """FSDP2 with CPU offload against FSDP2 on the fewest GPUs both were estimated on, where
    each GPU's share of the model state is the largest: each one's tensors' peak (less or
    more; their reserved peaks beside), the model state FSDP2 held on the GPU at its
    tensors' peak (what offload moves to the host) and the host memory a rank then needs.
    None where no count has both, or a row lacks the allocator's figures."""
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
    word = Words("less", "少") if b["peak_bytes"] < a["peak_bytes"] else Words("more", "多")
    gap = gib(abs(a["peak_bytes"] - b["peak_bytes"]))
    return Words(
        f"On {on_gpus(n).en}, FSDP2 with CPU offload leaves a GPU {gib(b['peak_bytes'])} GiB of "
        f"tensors at their peak, {gap} GiB {word.en} than without it "
        f"({gib(a['peak_bytes'])} GiB; reserved: {gib(b['reserved_bytes'])} against "
        f"{gib(a['reserved_bytes'])} GiB): without offload, the shards of parameters, "
        f"gradients and optimizer state held {gib(state)} GiB of the GPU's tensors at their "
        f"peak; with it they are in host memory, {gib(host)} GiB a rank as the optimizer "
        "starts.",
        spaced(f"{n} 卡时，FSDP2 开 CPU 卸载后每张卡的张量峰值是 {gib(b['peak_bytes'])} GiB，"
                f"比不卸载（{gib(a['peak_bytes'])} GiB）{word.zh} {gap} GiB（已预留峰值："
                f"{gib(b['reserved_bytes'])} GiB 对 {gib(a['reserved_bytes'])} GiB）：不卸载时，"
                f"参数、梯度和优化器状态的分片在张量峰值处占 {gib(state)} GiB 显存；卸载后它们在"
                f"主机内存里，优化器开始时每个 rank 占 {gib(host)} GiB 主机内存。"))
