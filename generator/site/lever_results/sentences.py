"""The levers page's sentences that assert a relation, in both languages, each built from the
check in relations.py that decides it, so that what a sentence says is what the data holds:
the strongest lever (and what its rank owes to a count the site chose), the levers that do
not lower a peak, levers printed once because their figures match, what levers save together,
where the peak lies in real runs with another optimizer kernel, and why no step time is shown.
tests/unit/test_levers_sentences.py covers each branch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from generator.site.labels import CATEGORY_LABELS
from generator.site.lever_results import relations
from generator.site.wording import capital, listed, spaced
from generator.units import gib, pct, size
from generator.words import Words

Row = Mapping[str, Any]
Names = Mapping[str, Words]

#: The phases of a step, as the sentences name them.
PHASES = {"forward": Words("the forward pass", "前向"),
          "backward": Words("the backward pass", "反向"),
          "optimizer": Words("the optimizer step", "优化器那一步")}
#: Gradient accumulation without its counts, where a sentence gives the counts itself.
ACCUMULATION = Words("gradient accumulation", "梯度累积")
#: What the peaks are called.
PEAK_NAMES = {"reserved": Words("reserved peak", "已预留峰值"),
              "peak": Words("tensors' peak", "张量峰值")}


def names_of(rows: Sequence[Row], names: Names) -> Words:
    """The levers' names in a list (wording.listed)."""
    return listed([names[row["id"]] for row in rows])


def splits_batch(row: Row) -> bool:
    """Whether a lever splits the batch into micro-batches (gradient accumulation)."""
    return "micro_batches" in row["use"]


def strongest(top: Sequence[Row], names: Names, whole: Sequence[Row] = ()) -> Words:
    """The intro's strongest lever and what it saves. Where it is gradient accumulation, its
    rank follows from the number of micro-batches this site chose, so the sentence says so,
    and names the strongest of the levers that keep the batch whole (`whole`)."""
    split = [row for row in top if splits_batch(row)]
    if not split:
        saved = top[0]["saved"]
        name = names_of(top, names)
        return Words(f"The strongest lever here is {name.en}: {saved.en}.",
                     spaced("效果最大的是", name.zh, "：", saved.zh, "。"))
    row = split[0]
    n, b = row["micro_batches"], row["micro_batch"]
    batch = n * b
    en = (f"The strongest lever here is {ACCUMULATION.en}, the batch of {batch} split into "
          f"{n} micro-batches of {b}: {row['saved'].en}. It ranks first because of that "
          f"count, which this site chose: what accumulation saves depends on it.")
    zh = (f"效果最大的是{ACCUMULATION.zh}：把 {batch} 个样本的 batch 拆成 {n} 个微批次、每个 "
          f"{b} 个样本，{row['saved'].zh}。它排第一，是因为本站选了拆成 {n} 个；梯度累积能省"
          f"多少，取决于这个个数。")
    if whole:
        name = names_of(whole, names)
        en += f" Of the levers that keep the batch whole, the strongest is {name.en}: " \
              f"{whole[0]['saved'].en}."
        zh += spaced("不拆 batch 的手段里，效果最大的是", name.zh, "：", whole[0]["saved"].zh, "。")
    return Words(en, zh)


def unmoved(rows: Mapping[str, Sequence[Row]], names: Names) -> Words | None:
    """Which levers leave a peak where it was, peak by peak ("reserved", "peak"): those
    whose peak prints the same in GiB "stay at" that figure (grouped by it), those that
    print higher "raise" it; None where every lever lowers both."""
    en, zh = [], []
    for peak, found in rows.items():
        before, after = relations.PEAKS[peak]
        groups: dict[tuple[str, str], list[Row]] = {}
        for row in found:
            groups.setdefault((gib(row[before]), gib(row[after])), []).append(row)
        what = PEAK_NAMES[peak]
        for (was, now), group in groups.items():
            name = names_of(group, names)
            if was == now:
                en.append(f"The {what.en} stays at {was} GiB with {name.en}.")
                zh.append(spaced("换上", name.zh, f"，{what.zh}仍是 {was} GiB。"))
            else:
                en.append(f"The {what.en} rises from {was} to {now} GiB with {name.en}.")
                zh.append(spaced("换上", name.zh, f"，{what.zh}从 {was} GiB 升到 {now} GiB。"))
    if not en:
        return None
    return Words("Not every lever lowers both peaks. " + " ".join(en) +
                 " Each section below says why.",
                 "并不是每项手段都能把两个峰值都压下来。" + "".join(zh) + "原因见下文各节。")


def merged(m: Row, names: Names) -> Words:
    """A lever printed once because every figure of it prints as another's (relations.
    identical decided it), with the largest difference in bytes."""
    one, other, within = names[m["id"]], names[m["same_as"]], size(m["within"])
    return Words(f"{capital(one.en)} gives the same figures as {other.en} to within {within} "
                 f"(every peak and every part of memory), so it is printed once.",
                 spaced(one.zh, "和", other.zh, f"的每个峰值、每部分显存相差都不超过 {within}，"
                        "按本页的精度显示出来完全相同，所以只列一次。"))


def together(row: Row, names: Names, by_id: Mapping[str, Row]) -> Words:
    """What levers save together beside their savings alone (relations.combination decided
    the relation): the bullet after the combination's name."""
    t = row["together"]
    parts = [(names[ident], gib(by_id[ident]["saving_bytes"])) for ident in row["parts"]]
    best = names[t["best"]]
    alone_en = listed([Words(f"{name.en} {'saves ' if i == 0 else ''}{saving} GiB", "")
                       for i, (name, saving) in enumerate(parts)]).en
    alone_zh = "，".join(spaced(name.zh, f"省 {saving} GiB") for name, saving in parts)
    en = (f"saves {gib(row['saving_bytes'])} GiB of the tensors' peak; alone, {alone_en}, "
          f"{gib(t['sum'])} GiB in all.")
    zh = (f"张量峰值降低 {gib(row['saving_bytes'])} GiB；单独使用时，{alone_zh}，加起来 "
          f"{gib(t['sum'])} GiB。")
    shared = Words(" and ".join(CATEGORY_LABELS[c].en.lower() for c in t["shared"]),
                   "和".join(CATEGORY_LABELS[c].zh for c in t["shared"]))
    if t["relation"] == "adds_up":
        en += " The savings add up" + (": each lever shrinks a different part of memory."
                                       if not t["shared"] else ".")
        zh += "省下的显存能完全叠加" + ("：每项手段砍的是显存里不同的部分。" if not t["shared"] else "。")
    elif t["relation"] == "nearly":
        share = pct(t["share"], 0)
        en += f" The savings nearly add up ({share} of their sum)" + (
            f": they overlap a little, where more than one shrinks the {shared.en}."
            if t["shared"] else ".")
        zh += f"省下的显存差不多能叠加（是总和的 {share}）" + (
            f"：只在不止一项都会缩小的{shared.zh}上略有重叠。" if t["shared"] else "。")
    elif t["relation"] == "overlaps":
        beyond, short = gib(t["beyond_best"]), gib(t["short_of_sum"])
        en += (f" The savings overlap: together they save {beyond} GiB more than {best.en} "
               f"alone but {short} GiB less than the sum") + (
            f", because more than one of them shrinks the {shared.en}, and what one has "
            f"removed the next cannot remove again." if t["shared"] else ".")
        zh += spaced("省下的显存有重叠：合起来比单用", best.zh,
                     f"多省 {beyond} GiB，却比总和少 {short} GiB") + (
            f"，因为不止一项都在缩小{shared.zh}，前一项已经去掉的，后一项就没法再去掉一次。"
            if t["shared"] else "。")
    else:
        largest = CATEGORY_LABELS[row["largest"]]
        en += (f" That is no more than {best.en} saves alone: once it has removed most of what "
               f"was live at the peak, the peak is made of something else (its largest part is "
               f"now {largest.en.lower()}), and the others have little left to act on.")
        zh += spaced("并不比单用", best.zh, "省得多：它把峰值时刻的大头拿掉之后，峰值就换成由别的东西"
                     f"撑着（现在最大的一块是{largest.zh}），其余手段能省的地方也就所剩无几。")
    return Words(en, zh)


def kernel_state(found: Mapping[str, Any]) -> Words:
    """What AdamW's three kernels keep (relations.extra_state, fused against foreach): the
    same state, or the fused kernel's step counts beside the same moments, and whether they
    are the whole of what the tensors' peak gains with it."""
    if found["extra"] == 0:
        return Words("The three implementations of AdamW compute the same update and keep the "
                     "same state; they differ in the temporaries of the optimizer step.",
                     "AdamW 的三种实现算出来的更新一样，保留的状态也一样，差别在优化器那一步的临时张量。")
    extra = size(abs(found["extra"]))
    more = Words("more", "多") if found["extra"] > 0 else Words("less", "少")
    return Words(
        "The three implementations of AdamW compute the same update and keep the same two "
        "moments; the fused kernel also keeps each parameter's step count on the GPU, where "
        f"the others keep it on the CPU: {extra} {more.en} optimizer state here" +
        (", which is all the tensors' peak gains with it" if found["whole_peak"] else "") +
        ". Otherwise they differ in the temporaries of the optimizer step.",
        "AdamW 的三种实现算出来的更新一样，保留的两份动量也一样；fused 内核还把每个参数的步数放在 "
        f"GPU 上，另外两种放在 CPU 上：这里的优化器状态因此{more.zh}出 {extra}" +
        ("，张量峰值多出的也正是这么多" if found["whole_peak"] else "") +
        "。除此之外，差别在优化器那一步的临时张量。")


def kernel_temporaries(nbytes: int) -> Words:
    """What the fused kernel leaves of the optimizer step's temporaries (`nbytes`, their
    largest value in the step, in the estimate): none at all, or how much."""
    en = "The fused kernel does the whole update in one pass, its intermediate values held " \
         "inside the kernel: "
    zh = "fused 内核一遍做完整个更新，中间值都留在内核内部："
    if nbytes == 0:
        return Words(en + "in this estimate its optimizer step allocates no temporaries at all.",
                     zh + "这份估算里，它的优化器那一步一个临时张量都不分配。")
    return Words(en + f"in this estimate its optimizer step allocates only {size(nbytes)} of "
                 "temporaries.", zh + f"这份估算里，它的优化器那一步只分配 {size(nbytes)} 的临时张量。")


def kernel_run(where: Mapping[str, Any], name: Words, kernel: str, run: Words, kind: Words
               ) -> Words | None:
    """Real runs (`run`: "bert-base at batch 1" / "bert-base 在 batch 1") where the optimizer step holds the peak,
    with another optimizer kernel (relations.phase_peaks on their phases' largest totals):
    what the kernel does to the optimizer step's own peak, and where the step's peak lies
    after it, which may be another phase; None where the run without the lever does not
    peak in the optimizer step."""
    if not where["held"]:
        return None
    phase = PHASES[where["phase"]]
    own = relations.went(*where["own"])
    en = (f"Real runs of {run.en}, {kind.en}, are such a case: with the {kernel} kernels "
          f"{phase.en} holds the step's peak ({gib(where['own'][0])} GiB); with {name.en} its "
          f"own peak {own.en}")
    zh = spaced(f"{kind.zh}的 {run.zh} 时正是这种情况：用 {kernel} "
                "内核时，峰值落在", phase.zh, f"（{gib(where['own'][0])} GiB）；换成", name.zh, "，",
                phase.zh, "自身的峰值", own.zh)
    if where["moved"]:
        there = PHASES[where["where"][1]]
        step = relations.went(*where["peaks"])
        en += (f", below {there.en}'s {gib(where['peaks'][1])} GiB, so the step's peak now "
               f"lies in {there.en} and {step.en}.")
        zh += spaced("，低于", there.zh, f"的 {gib(where['peaks'][1])} GiB，于是整步的峰值移到了",
                     there.zh, "，", step.zh, "。")
    else:
        en += ", and it is still the step's peak."
        zh += "，整步的峰值仍在这里。"
    return Words(en, zh)


def untimed(groups: Sequence[Mapping[str, Any]], names: Names, shown: bool,
            why: Mapping[str, Words]) -> Words:
    """Why the step times that were taken are not shown (relations.timing_shown's reasons),
    grouped by where they ran: which levers were timed, at which batch, and why not; where
    none is shown (`shown` False), in one line with what would give them a section."""
    en, zh = [], []
    for group in groups:
        cost = group["cost"]
        by_batch: dict[int, list[Row]] = {}
        for row in group["rows"]:
            by_batch.setdefault(row["cost"]["batch_size"], []).append(row)
        at_en = ", ".join(f"{names_of(rows, names).en} at batch {b}"
                          for b, rows in by_batch.items())
        at_zh = "，".join(spaced(names_of(rows, names).zh, f"是 batch {b}")
                          for b, rows in by_batch.items())
        reasons = [why[reason] for reason in cost["not_shown"]]
        where = Words("on the CPU", "CPU") if cost["backend"] == "cpu" else Words("on a GPU", "GPU")
        en.append(f"the timed runs are {where.en}, {cost['model']} at sequence {cost['seq_len']} "
                  f"({at_en}), and they " + ", and ".join(w.en for w in reasons))
        zh.append(f"计过时的只有 {where.zh} 上 {cost['model']} 在序列长度 {cost['seq_len']} 的几次"
                  f"运行（{at_zh}），而这些运行" + "，而且".join(w.zh for w in reasons))
    if shown:
        return Words("Left out: " + "; ".join(en) + ".", "没有列出的：" + "；".join(zh) + "。")
    return Words("No step times yet: " + "; ".join(en) + "; runs of the example on a GPU that "
                 "record each timed step would give step times a section of their own.",
                 "这里还没有耗时：" + "；".join(zh) + "。在 GPU 上跑这个例子、把每个计时步都记下来，"
                 "耗时才能单独成节。")
