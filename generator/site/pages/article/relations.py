"""The relations the article's pages assert between figures (the same, lower, the largest,
more than, mostly because of), each checked here on the data, so that a sentence changes with
the figures instead of being written once and left standing. Each function takes plain
figures and returns branch flags (the templates switch on them) or, where the branches are
many, the sentences themselves as Words; tests/unit/test_article_relations.py covers the
branches of each."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from generator import units
from generator.results.shapes import StepResult
from generator.site.labels import PRECISION_LABELS
from generator.words import Words

Result = StepResult
#: Where the pages print a result's figures, per category: the checks of `twins`.
_PRINTED = ("live_at_peak_bytes", "category_max_bytes", "module_activation_bytes")


def alike(first: int, second: int, unit: Callable[[int], str] = units.gib) -> bool:
    """Whether two sizes print alike in `unit`, GiB to two places unless told
    (units.print_alike, whose default is `size`)."""
    return units.print_alike(first, second, unit)


def change(before: int, after: int) -> dict[str, Any]:
    """A peak before and after a change, as the pages say it: "the same" where the two print
    alike (never "-0.00 GiB"), else lower or higher, with the saving."""
    same = alike(before, after)
    return {"before": before, "after": after, "same": same,
            "lower": not same and after < before, "higher": not same and after > before,
            "saving": None if before == 0 else 1 - after / before}


def twins(first: Result, second: Result) -> dict[str, Any]:
    """Whether two results print alike in every figure the article's pages show of them (the
    peak, the allocator's peaks, every category and block in MiB to a tenth): then one
    column, bar and tab stands for both. `gap`: the largest difference in bytes among them."""
    pairs = [(first["peak_bytes"], second["peak_bytes"])]
    for name in ("peak_allocated_bytes", "peak_reserved_bytes"):
        a, b = ((r.get("allocator") or {}).get(name) for r in (first, second))
        if a is not None or b is not None:
            pairs.append((a or 0, b or 0))
    for field in _PRINTED:
        one, other = first.get(field) or {}, second.get(field) or {}
        pairs += [(one.get(k, 0), other.get(k, 0)) for k in sorted(set(one) | set(other))]
    return {"same": all(alike(a, b, units.mib) for a, b in pairs),
            "gap": max(abs(a - b) for a, b in pairs)}


def formula_row(check: dict[str, Any] | None) -> tuple[str, ...]:
    """A precision's row of the explainer's formula table as printed (derived.formula_check
    in, the cells out; none where the formula does not apply)."""
    if not check:
        return ()
    return (units.size(check["measured_per_layer"]), units.size(check["predicted_per_layer"]),
            check["variant"], units.pct(check["error"]))


def shown_precisions(article: dict[str, Result],
                     rows: dict[str, tuple[str, ...]] | None = None
                     ) -> tuple[dict[str, Result], dict[str, Any]]:
    """The precisions the pages chart and tabulate: AMP bf16 is left out where it prints
    alike with AMP fp16 (`twins`) and in the pages' derived rows (`rows`: per precision, a
    row as printed, e.g. `formula_row`), and the pages say so. Returns those results and
    what the pages say: {"same": bool, "kept", "left_out", "gap"}, "same" False where there
    is no pair to compare or it differs."""
    fp16, bf16 = article.get("amp-fp16"), article.get("amp-bf16")
    if fp16 is None or bf16 is None or fp16["backend"] != bf16["backend"]:
        return dict(article), {"same": False}
    pair = twins(fp16, bf16)
    rows = rows or {}
    pair["same"] = pair["same"] and rows.get("amp-fp16") == rows.get("amp-bf16")
    if not pair["same"]:
        return dict(article), {**pair, "kept": "amp-fp16", "left_out": "amp-bf16"}
    shown = {p: r for p, r in article.items() if p != "amp-bf16"}
    return shown, {**pair, "kept": "amp-fp16", "left_out": "amp-bf16"}


def peak_moment(result: Result, phase: str | None) -> dict[str, Any]:
    """When the step peaks: the phase (levers.peak_phase), and whether it is the very start
    of backward, before the first gradient exists (no gradient live at the peak)."""
    live = result["live_at_peak_bytes"]
    return {"phase": phase,
            "backward_start": phase == "backward" and live.get("gradients", 0) == 0}


def adds_up(result: Result) -> dict[str, Any]:
    """The two ways a breakdown adds up: the categories live at the peak sum to the peak; the
    categories' own maxima sum to more than it (they peak at different moments)."""
    live, maxima = result["live_at_peak_bytes"], result["category_max_bytes"]
    total = sum(maxima.values())
    return {"live_is_peak": sum(live.values()) == result["peak_bytes"],
            "maxima_sum": total, "maxima_overstate": total > result["peak_bytes"]}


def compared(first: int, second: int) -> str:
    """"more", "same" or "less": the first size against the second, as printed."""
    if alike(first, second, units.size):
        return "same"
    return "more" if first > second else "less"


def below_half(before: int, after: int) -> bool:
    """Whether a change shrinks a size, but by less than half (AMP's activations)."""
    return after < before and after > before / 2


def amp_keeps(fp32: Result, amp: Result,
              categories: tuple[str, ...] = ("parameters", "gradients", "optimizer_state")
              ) -> dict[str, Any]:
    """Which of the model's own categories AMP leaves as they are (their maxima print alike):
    the page says "what stays" of them only where all do."""
    kept = [c for c in categories if alike(fp32["category_max_bytes"][c],
                                           amp["category_max_bytes"][c], units.mib)]
    return {"all": len(kept) == len(categories), "kept": kept}


def formula_gap(amp_formula: dict[str, Any], exp: dict[str, Any],
                arch: dict[str, Any]) -> dict[str, Any]:
    """What three of autocast's rules add per layer beyond the 16-bit formula, against the
    gap between the measured and the formula's bytes: the FP32 residual stream saved at both
    LayerNorms (4·s·b·h), FP32 attention probabilities (2·a·s²·b more than 16-bit), the Q, K
    and V inputs cast three times (4·s·b·h). "nearly_all": within 10 % of the gap."""
    s, b, h, a = exp["seq_len"], exp["batch_size"], arch["hidden"], arch["heads"]
    rules = 4 * s * b * h + 2 * a * s * s * b + 4 * s * b * h
    gap = amp_formula["measured_per_layer"] - amp_formula["formula_16bit_per_layer"]
    return {"rules": rules, "gap": gap, "above": gap > 0,
            "nearly_all": gap > 0 and abs(rules / gap - 1) <= 0.10}


def formula_matches(error: float) -> bool:
    """The formula "matches almost exactly" where it is within 5 % of the measured bytes."""
    return abs(error) < 0.05


def total_gap(total: dict[str, Any], activations: dict[str, Any]) -> dict[str, Any]:
    """Why the article's FP32 total is off, from the claims' values: how much of its excess
    over the peak its activations make up, beside the habit of adding up each category's own
    maximum. "mostly_activations": the activations' excess is over half the total's;
    "over_whole": over all of it."""
    excess = total["claimed"] - total["measured"]
    overstated = activations["claimed"] - activations["measured"]
    habit = total["sum_of_maxima"] - total["measured"]
    return {"excess": excess, "activations": overstated, "habit": habit,
            "mostly_activations": excess > 0 and overstated > excess / 2,
            "over_whole": excess > 0 and overstated > excess,
            "habit_smaller": habit < overstated}


def loss_beside_amp(masked: dict[str, Any] | None,
                    amp: dict[str, Any] | None) -> dict[str, Any] | None:
    """The loss's vocabulary-sized tensors against AMP: what computing the logits only at the
    masked positions saves on the peak, beside what AMP saves; None without both levers."""
    if not masked or not amp:
        return None
    return {"masked": masked["saving_bytes"], "amp": amp["saving_bytes"],
            "more": compared(masked["saving_bytes"], amp["saving_bytes"]) == "more"}


# -- the home page's small-batch bullet ------------------------------------------------------

_KERNELS = {"for-loop": Words("for-loop kernel, one parameter at a time",
                              "for-loop 实现，一次只更新一个参数"),
            "foreach": Words("foreach kernel, which holds a temporary for every parameter at "
                             "once", "foreach 实现，它同时为所有参数各留一份临时张量"),
            "fused": Words("fused kernel", "fused 实现")}
_PHASES = {"forward": Words("the forward pass", "前向传播阶段"),
           "backward": Words("backward", "反向传播阶段"),
           "optimizer": Words("the optimizer step", "优化器那一步"),
           None: Words("an unrecorded phase", "未记录的阶段")}


def small_batch_words(sb: dict[str, Any], kind: Callable[[Any, str], str]) -> list[Words]:
    """The home page's bullet on AMP at a small batch, sentence by sentence: what the real
    runs show (AMP raises the peak, or lowers it by so much), what the CUDA estimate of the
    same batch shows (the same peak in both precisions where both lie in the optimizer step),
    and why the real FP32 peak and the estimate's differ, where they do (the optimizer kernel
    and the phase the peak lies in). `kind` names a result's kind (templating.kind)."""
    amp = PRECISION_LABELS[sb["precision"]]
    real, est = change(sb["fp32"], sb["amp"]), sb.get("estimate")
    est_change = change(est["fp32"], est["amp"]) if est else None
    helps = real["lower"] or bool(est_change and est_change["lower"])
    where = Words(kind(sb["real"], "en"), kind(sb["real"], "zh"))
    said: list[Words] = []
    if not helps:
        said.append(Words("At small batches AMP does not help.", "batch 小的时候，AMP 帮不上忙。"))
    g = units.gib
    if real["same"]:
        said.append(Words(
            f"At batch {sb['batch_size']} ({where.en}) {amp.en} leaves the peak where it "
            f"was, at {g(sb['fp32'])} GiB.",
            f"batch {sb['batch_size']} 时（{where.zh}），{amp.zh} 下峰值和 FP32 一样，"
            f"都是 {g(sb['fp32'])} GiB。"))
    elif real["higher"]:
        said.append(Words(
            f"At batch {sb['batch_size']} ({where.en}) {amp.en} raises the peak from "
            f"{g(sb['fp32'])} to {g(sb['amp'])} GiB (+{units.pct(-real['saving'])}): at the "
            f"peak, in {_PHASES[sb['real_phase']].en}, autocast's 16-bit copies of the "
            f"weights ({units.size(sb['copies'])}) outweigh what it saves on activations "
            f"({units.size(sb['activations_saved'])}).",
            f"batch {sb['batch_size']} 时（{where.zh}），{amp.zh} 反而把峰值从 {g(sb['fp32'])} "
            f"GiB 抬到 {g(sb['amp'])} GiB（+{units.pct(-real['saving'])}）：峰值落在"
            f"{_PHASES[sb['real_phase']].zh}，那一刻 autocast 的 16 位权重副本"
            f"（{units.size(sb['copies'])}）比它在激活值上省下的"
            f"（{units.size(sb['activations_saved'])}）还多。"))
    else:
        said.append(Words(
            f"At batch {sb['batch_size']} ({where.en}) {amp.en} lowers the peak from "
            f"{g(sb['fp32'])} to {g(sb['amp'])} GiB, by only {units.pct(real['saving'])}.",
            f"batch {sb['batch_size']} 时（{where.zh}），{amp.zh} 只把峰值从 {g(sb['fp32'])} GiB "
            f"降到 {g(sb['amp'])} GiB，少了 {units.pct(real['saving'])}。"))
    if est and est_change:
        in_step = est["fp32_phase"] == est["amp_phase"] == "optimizer"
        if est_change["same"] and in_step:
            said.append(Words(
                f"Estimated for CUDA, the same batch peaks in the optimizer step in both "
                f"precisions, where AMP changes nothing: {g(est['fp32'])} GiB in FP32 and the "
                f"same with {amp.en}.",
                f"按 CUDA 估算，同一个 batch 在两种精度下的峰值都落在优化器那一步，AMP 在那里什么也"
                f"没改变：FP32 是 {g(est['fp32'])} GiB，{amp.zh} 也一样。"))
        elif est_change["same"]:
            said.append(Words(
                f"Estimated for CUDA, the same batch peaks at {g(est['fp32'])} GiB in FP32 and "
                f"the same with {amp.en}.",
                f"按 CUDA 估算，同一个 batch 的峰值 FP32 是 {g(est['fp32'])} GiB，{amp.zh} "
                f"也一样。"))
        else:
            said.append(Words(
                f"Estimated for CUDA, the same batch peaks at {g(est['fp32'])} GiB in FP32 "
                f"(in {_PHASES[est['fp32_phase']].en}) and {g(est['amp'])} GiB with {amp.en} "
                f"(in {_PHASES[est['amp_phase']].en}).",
                f"按 CUDA 估算，同一个 batch 的峰值 FP32 是 {g(est['fp32'])} GiB（落在"
                f"{_PHASES[est['fp32_phase']].zh}），{amp.zh} 是 {g(est['amp'])} GiB（落在"
                f"{_PHASES[est['amp_phase']].zh}）。"))
        said += _why_fp32_peaks_differ(sb, est, where)
    return said


def _why_fp32_peaks_differ(sb: dict[str, Any], est: dict[str, Any],
                           where: Words) -> list[Words]:
    """Why the real FP32 peak and the CUDA estimate's differ, where they print differently:
    PyTorch picks another optimizer kernel on each device, and the peaks lie in other
    phases. Nothing where they agree, or where neither the kernel nor the phase differs."""
    g = units.gib
    if alike(sb["fp32"], est["fp32"]):
        return []
    kernels = (sb["real_kernel"], est["kernel"])
    phases = (sb["real_phase"], est["fp32_phase"])
    if kernels[0] == kernels[1] or phases[0] == phases[1]:
        return [Words(
            f"The two FP32 peaks differ ({g(sb['fp32'])} GiB {where.en}, {g(est['fp32'])} GiB "
            f"estimated for CUDA): the two devices run the step with different kernels.",
            f"两个 FP32 峰值不同（{where.zh} {g(sb['fp32'])} GiB，按 CUDA 估算 {g(est['fp32'])} "
            f"GiB）：两种设备上这一步用的内核不同。")]
    real_kernel, est_kernel = (_KERNELS.get(k, Words(k, k)) for k in kernels)
    return [Words(
        f"The two FP32 peaks differ ({g(sb['fp32'])} GiB {where.en}, {g(est['fp32'])} GiB "
        f"estimated for CUDA) because PyTorch's AdamW runs a different kernel on each device. "
        f"In the run {where.en} it runs the {real_kernel.en}, and the peak lies in "
        f"{_PHASES[phases[0]].en}; on CUDA it runs the {est_kernel.en}, and the peak lies in "
        f"{_PHASES[phases[1]].en}, with {units.size(est['temporaries'])} of temporaries.",
        f"两个 FP32 峰值不同（{where.zh} {g(sb['fp32'])} GiB，按 CUDA 估算 {g(est['fp32'])} "
        f"GiB），是因为 PyTorch 的 AdamW 在两种设备上用的实现不同：{where.zh}的那次运行用 "
        f"{real_kernel.zh}，峰值落在{_PHASES[phases[0]].zh}；CUDA 上用 {est_kernel.zh}，峰值落在"
        f"{_PHASES[phases[1]].zh}，那一刻临时张量有 {units.size(est['temporaries'])}。")]
