"""The relations the levers page asserts, each checked on the data: what a lever acts on,
whether levers' savings add up, whether two figures are the same, which timings may be shown,
what a CPU run and a CUDA estimate differ in. Plain data in; flags, numbers or Words out
(tests/unit/test_levers_relations.py covers each branch)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from generator.experiment.option import resolved_optimizer_impl
from generator.units import gib, mib, pct, print_alike
from generator.words import Words

#: "Acts on" lists the categories whose changes, biggest first, make up this share of all the
#: changes at the peak; the rest are small beside them.
ACTS_ON_SHARE = 0.9
#: Levers' savings "add up" when together they save at least this share of the sum of their
#: savings alone, and "nearly add up" from the second share on; below, they overlap.
ADDS_UP, NEARLY = 0.97, 0.85
#: A step time is shown only where each run timed at least this many steps and recorded
#: their spread: the median of fewer says nothing of the noise of a shared machine.
MIN_TIMED_STEPS = 5
#: ... and only at a step of at least this many tokens (the article's example: 32 × 128): in
#: smaller steps the costs that do not grow with the batch (the optimizer's passes over every
#: weight and its state, kernel launches) are a large share, and a lever's change in compute
#: is diluted in them.
MIN_TOKENS = 4096
#: The precision the page prints sizes at: two figures are "the same" (a lever "stays at" a
#: size, "gives the same figures") only where they print alike at their unit; a statement of
#: sameness never rests on a tolerance the reader is not shown.
UNITS = {"GiB": gib, "MiB": mib}


def acts_on(before: Mapping[str, int], after: Mapping[str, int],
            share: float = ACTS_ON_SHARE) -> list[tuple[str, int, int]]:
    """(category, before, after) for the categories whose changes make up `share` of all
    the changes, the largest change first; [] where nothing changed (a lever that acts on
    the allocator, not on the tensors)."""
    changes = sorted(((abs(after.get(c, 0) - before.get(c, 0)), c) for c in before),
                     key=lambda item: -item[0])
    total = sum(change for change, _ in changes)
    found: list[tuple[str, int, int]] = []
    covered = 0
    for change, category in changes:
        if found and covered >= share * total:
            break
        if same(before[category], after.get(category, 0), "MiB"):
            continue  # a change the table would print as "x → x" is none to list
        found.append((category, before[category], after.get(category, 0)))
        covered += change
    return found


def combination(saving: int, parts: Mapping[str, int],
                shrinks: Mapping[str, Iterable[str]]) -> dict[str, Any]:
    """How levers together compare with their savings alone: `relation` is "adds_up",
    "nearly" (a few percent short of the sum), "overlaps" (more than the best part, well
    short of the sum) or "no_better" (no more than the best part); with the sum, the best
    part, the share of the sum saved, and the categories two or more parts shrink (what
    they overlap on)."""
    total = sum(parts.values())
    best = max(parts, key=lambda ident: parts[ident])
    share = saving / total if total > 0 else 0.0
    if saving <= parts[best] or same(saving, parts[best]):
        relation = "no_better"
    elif share >= ADDS_UP:
        relation = "adds_up"
    elif share >= NEARLY:
        relation = "nearly"
    else:
        relation = "overlaps"
    counts: dict[str, int] = {}
    for cats in shrinks.values():
        for cat in set(cats):
            counts[cat] = counts.get(cat, 0) + 1
    shared = [cat for cat, n in counts.items() if n > 1]
    return {"relation": relation, "sum": total, "best": best, "best_saving": parts[best],
            "share": share, "short_of_sum": total - saving,
            "beyond_best": saving - parts[best], "shared": sorted(shared)}


def timing_shown(cost: Mapping[str, Any]) -> list[str]:
    """Why a step time may not be shown; [] where it means something. "no_count": the runs
    record neither how many steps they timed nor their spread; "few_steps"; "small_step":
    too few tokens for compute to dominate; "within_spread": the change is no larger than
    the runs' spread."""
    steps, spread = cost.get("timed_steps"), cost.get("spread")
    found = []
    if steps is None or spread is None:
        found.append("no_count")
    elif steps < MIN_TIMED_STEPS:
        found.append("few_steps")
    if cost["batch_size"] * cost["seq_len"] < MIN_TOKENS:
        found.append("small_step")
    if spread is not None and abs(cost["ratio"] - 1) <= spread:
        found.append("within_spread")
    return found


def transformer_flops(arch: Mapping[str, int], seq_len: int) -> dict[str, float]:
    """Computed, not timed: one sample's forward FLOPs (2 per multiply-add) in the blocks
    and in the MLM head, from the model's config (hidden h, intermediate i, layers, vocab V,
    sequence s): a block's Q, K, V, output and two MLP projections, 2·s·(4h² + 2hi), and its
    attention scores and weighted sum, 4·s²·h; the head's transform and decoder, 2·s·(h² + hV).
    Backward costs twice the forward (a gradient for the input and one for the weight)."""
    h, s = arch["hidden"], seq_len
    block = 2 * s * (4 * h * h + 2 * h * arch["intermediate"]) + 4 * s * s * h
    blocks = arch["layers"] * block
    head = 2 * s * (h * h + h * arch["vocab"])
    forward = blocks + head
    return {"blocks_forward": blocks, "forward": forward, "step": 3 * forward,
            "recompute_share": blocks / (3 * forward)}


def same(a: int, b: int, unit: str = "GiB") -> bool:
    """Two sizes that print alike at `unit` (GiB to two decimals, MiB to one)."""
    return print_alike(a, b, UNITS[unit])


def from_to(before: int, after: int, unit: str = "MiB") -> Words:
    """'from 417.8 to 0.0 MiB', or 'stays at 5.64 GiB' where the two print alike."""
    fmt = UNITS[unit]
    if same(before, after, unit):
        return Words(f"stays at {fmt(before)} {unit}", f"保持 {fmt(before)} {unit} 不变")
    return Words(f"from {fmt(before)} to {fmt(after)} {unit}",
                 f"从 {fmt(before)} {unit} 变为 {fmt(after)} {unit}")


def went(before: int, after: int, unit: str = "GiB", plural: bool = False) -> Words:
    """'falls from 2.04 to 1.63 GiB', 'rises from … to …', or 'stays at 2.04 GiB' where the
    two print alike; 'fall', 'rise', 'stay' after a `plural` subject."""
    if same(before, after, unit):
        kept = from_to(before, after, unit)
        return Words(kept.en.replace("stays", "stay"), kept.zh) if plural else kept
    fmt = UNITS[unit]
    verb = ("fall" if plural else "falls", "降到") if after < before else \
        ("rise" if plural else "rises", "升到")
    return Words(f"{verb[0]} from {fmt(before)} to {fmt(after)} {unit}",
                 f"从 {fmt(before)} {unit} {verb[1]} {fmt(after)} {unit}")


def amount(nbytes: int, of: int | None = None) -> Words:
    """A saving as the page prints it: 'no change' only where there is none to the byte;
    else at a precision that shows it (MiB where GiB would print 0.00, KiB where MiB would
    print 0.0), negative where the lever adds; a share of `of` beside it where the share
    does not print as 0.0 %."""
    if nbytes == 0:
        return Words("no change", "没有变化")
    if abs(nbytes) >= 0.005 * 2**30:
        text = f"{gib(nbytes)} GiB"
    elif abs(nbytes) >= 0.05 * 2**20:
        text = f"{mib(nbytes)} MiB"
    else:
        text = f"{nbytes / 2**10:,.1f} KiB"
    text = text.replace("-", "−")
    share = pct(nbytes / of).replace("-", "−") if of else None
    if share is None or share.lstrip("−") == pct(0):
        return Words(text, text)
    return Words(f"{text} ({share})", f"{text}（{share}）")


def identical(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Whether two results give the same figures everywhere the page prints one (the peaks,
    the reserved peak, every category at the peak, at its largest and in each phase), each
    printing alike in MiB and in GiB: `identical`, and `within`, the largest difference in
    bytes (what the page says they differ by)."""
    pairs = [(a["peak_bytes"], b["peak_bytes"])]
    ra, rb = ((r.get("allocator") or {}).get("peak_reserved_bytes") for r in (a, b))
    if ra is not None and rb is not None:
        pairs.append((ra, rb))
    for field in ("live_at_peak_bytes", "category_max_bytes"):
        pairs += [(a[field][c], b[field].get(c, 0)) for c in a[field]]
    phases_a, phases_b = a.get("phase_max_bytes") or {}, b.get("phase_max_bytes") or {}
    pairs += [(phases_a[p][c], (phases_b.get(p) or {}).get(c, 0))
              for p in phases_a for c in phases_a[p]]
    largest = max(abs(x - y) for x, y in pairs)
    alike = all(same(x, y, "MiB") and same(x, y, "GiB") for x, y in pairs)
    return {"identical": alike, "within": largest}


def strongest(rows: list[Mapping[str, Any]], held: str) -> list[Mapping[str, Any]]:
    """The levers that save most of `held` (ties: all whose savings print alike in GiB)."""
    top = max(row[held] for row in rows)
    return [row for row in rows if same(row[held], top)]


#: A peak's fields on a row: (without the lever, with it).
PEAKS = {"reserved": ("ref_reserved", "reserved"), "peak": ("ref_peak", "peak")}


def unmoved(rows: list[Mapping[str, Any]], peak: str) -> list[Mapping[str, Any]]:
    """The levers that do not lower a peak ("reserved" or the tensors' "peak") as the page
    prints it: with the lever it prints the same in GiB, or higher."""
    before, after = PEAKS[peak]
    return [row for row in rows if row[after] is not None
            and round(row[after] / 2**30, 2) >= round(row[before] / 2**30, 2)]


def change(before: int, after: int) -> str:
    """How a size printed in MiB changes: "halves" (to 45-55 %), "shrinks", "same" (prints
    alike), "grows"."""
    if same(before, after, "MiB"):
        return "same"
    if after > before:
        return "grows"
    return "halves" if 0.45 <= after / before <= 0.55 else "shrinks"


def phase_peaks(before: Mapping[str, int], after: Mapping[str, int],
                phase: str = "optimizer") -> dict[str, Any]:
    """Where a step's peak lies without and with a lever that acts within `phase`, from each
    run's largest total per phase ({"forward": bytes, "backward": …, "optimizer": …}, the
    results' phase_max_bytes): `where` (the phase holding each run's peak, the earlier on a
    tie), `peaks` and `own` (the phase's own largest totals), and whether the peak `moved`
    to another phase. `held`: the run without the lever peaks in `phase`, the case where
    the lever can lower the step's peak."""
    order = list(before)
    where = [max(order, key=lambda name: (run[name], -order.index(name)))
             for run in (before, after)]
    return {"phase": phase, "where": where, "held": where[0] == phase,
            "moved": where[0] != where[1],
            "peaks": (before[where[0]], after[where[1]]),
            "own": (before[phase], after[phase])}


def extra_state(state: tuple[int, int], peak: tuple[int, int]) -> dict[str, Any]:
    """What another optimizer kernel adds to the optimizer state, from (without, with) its
    largest size and the tensors' peaks: `extra` bytes, and `whole_peak`, whether that is
    the tensors' peak's whole change, to the byte."""
    extra = state[1] - state[0]
    return {"extra": extra, "whole_peak": extra != 0 and peak[1] - peak[0] == extra}


def unchanged(before: Mapping[str, int], after: Mapping[str, int],
              categories: Iterable[str]) -> bool:
    """Whether every one of `categories` keeps its size to the byte."""
    return all(before.get(c, 0) == after.get(c, 0) for c in categories)


def largest_parameter(result: Mapping[str, Any]) -> dict[str, Any]:
    """The largest parameter of a BERT-like model, computed from its config: the word
    embeddings (vocab × hidden) or an MLP projection (hidden × intermediate), at the bytes per
    weight the result holds (its parameters' bytes over their count, rounded)."""
    arch = result["architecture"]
    shapes = {"word embeddings": (arch["vocab"], arch["hidden"]),
              "MLP projection": (arch["intermediate"], arch["hidden"])}
    name, shape = max(shapes.items(), key=lambda item: item[1][0] * item[1][1])
    per = round(result["category_max_bytes"]["parameters"] / result["parameter_count"])
    return {"name": name, "shape": shape, "bytes": shape[0] * shape[1] * per,
            "bytes_per_weight": per}


def copies(nbytes: int, unit: int) -> dict[str, Any]:
    """`nbytes` as a count of `unit`: a whole number where it is one to 1 %."""
    ratio = nbytes / unit
    return {"ratio": ratio, "whole": round(ratio) if abs(ratio - round(ratio)) < 0.01 else None}


def differences(measured: Mapping[str, Any], estimated: Mapping[str, Any]) -> list[Words]:
    """Why a run measured on the CPU and a CUDA estimate beside it give different figures,
    read from the two results' experiments: each difference that changes memory."""
    m, e = measured["experiment"], estimated["experiment"]
    run = "CPU 实测" if m["device"] == "cpu" else "GPU 实测"  # never 实测 without its device
    found = []
    if (m["batch_size"], m["seq_len"]) != (e["batch_size"], e["seq_len"]):
        found.append(Words(
            f"the run's step is batch {m['batch_size']}, sequence {m['seq_len']}, the "
            f"estimate's batch {e['batch_size']}, sequence {e['seq_len']}",
            f"{run}的那一步是 batch {m['batch_size']}、序列长度 {m['seq_len']}，估算的是 "
            f"batch {e['batch_size']}、序列长度 {e['seq_len']}"))
    kernels = [resolved_optimizer_impl(x["optimizer_impl"], x["device"]) for x in (m, e)]
    if kernels[0] != kernels[1]:
        picked = m["optimizer_impl"] == "auto"
        found.append(Words(
            f"the run's optimizer uses the {kernels[0]} kernels"
            + (" (PyTorch's pick on the CPU)" if picked else "")
            + f", the estimate's the {kernels[1]} kernels, whose temporaries differ in size",
            f"{run}的优化器用 {kernels[0]} 内核" + ("（PyTorch 在 CPU 上的默认）" if picked else "")
            + f"，估算用 {kernels[1]} 内核，两者的临时张量大小不同"))
    amp = [x["precision"].startswith("amp") for x in (m, e)]
    if amp[0] or amp[1]:
        found.append(Words(
            "CPU autocast and CUDA autocast cast different operations to 16 bits",
            "CPU 和 CUDA 上的 autocast 转成 16 位的运算并不相同"))
    block = next((note["values"].get("block") for note in estimated.get("notes") or []
                  if note["id"] == "models_cuda"), None)
    if m["device"] != e["device"] and block:
        found.append(Words(
            f"the CPU run counts its tensors as the CPU allocates them, the estimate in "
            f"CUDA's {block}-byte blocks",
            f"CPU 实测按 CPU 分配的大小数张量，估算则按 CUDA 的 {block} 字节块来算"))
    return found


def moves(before: int, after: int) -> Words:
    """What a lever does to one peak: 'falls by 2.28 GiB (38.7 %)', 'rises by …', or 'stays
    at 5.64 GiB' where the two print alike in GiB."""
    if same(before, after):
        return from_to(before, after, "GiB")
    if after < before:
        saving = amount(before - after, before)
        return Words(f"falls by {saving.en}", f"降低 {saving.zh}")
    extra = amount(after - before, before)
    return Words(f"rises by {extra.en}", f"增加 {extra.zh}")


def saved(row: Mapping[str, Any]) -> Words:
    """What a lever does to the two peaks, in a clause: both fall; the tensors fall while
    the reserved peak stays (the allocator keeps its segments); otherwise each peak's own
    move (relations.moves: a peak "stays" where it prints alike in GiB, and the clause
    names the figure). Without a reserved peak (no allocator modelled), the tensors' alone."""
    tensors = moves(row["ref_peak"], row["peak"])
    if row.get("reserved") is None:
        return Words(f"the peak {tensors.en}", f"峰值{tensors.zh}")
    reserved = moves(row["ref_reserved"], row["reserved"])
    falls = [row["reserved"] < row["ref_reserved"] and not same(row["ref_reserved"], row["reserved"]),
             row["peak"] < row["ref_peak"] and not same(row["ref_peak"], row["peak"])]
    if falls == [True, True]:
        return Words(f"the reserved peak {reserved.en} and the tensors' peak "
                     f"{tensors.en.replace('falls by', 'by')}",
                     f"已预留峰值{reserved.zh}，张量峰值{tensors.zh}")
    if falls == [False, True] and same(row["ref_reserved"], row["reserved"]):
        gap = from_to(row["gap_before"], row["gap_after"]) if row.get("gap_before") is not None \
            else None
        return Words(
            f"the tensors' peak {tensors.en}, but the reserved peak {reserved.en}: "
            f"the allocator keeps the segments it reserved" +
            (f", and reserved − allocated goes {gap.en}" if gap else ""),
            f"张量峰值{tensors.zh}，已预留峰值却{reserved.zh}：分配器留着已经预留的段" +
            (f"，已预留 − 已分配{gap.zh}" if gap else ""))
    return Words(f"the reserved peak {reserved.en} and the tensors' peak {tensors.en}",
                 f"已预留峰值{reserved.zh}，张量峰值{tensors.zh}")


#: Why a step time is not shown (timing_shown's reasons).
NOT_SHOWN = {
    "no_count": Words("record only a median, neither how many steps it was taken over nor "
                      "their spread",
                      "只记了一个中位数，既没记是多少步取的，也没记波动"),
    "few_steps": Words("timed too few steps", "计时的步数太少"),
    "small_step": Words("ran steps too small for compute to dominate",
                        "那一步太小，计算不是大头"),
    "within_spread": Words("changed by less than the runs' own spread",
                           "变化比两次运行本身的波动还小"),
}
