"""The sweeps page: how the peak grows with the batch size and with the sequence length, the
fitted bytes per sample, the activation formula beside it, and the largest batch per GPU.

Results are grouped into sweeps by everything but the swept field and the precision, on the
same machine: a cuda sweep never mixes with an estimate, nor one GPU with another. Whatever
sweeps exist are shown, the most trusted first (cuda, then estimates for CUDA, then CPU).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from markupsafe import Markup

from generator.experiment import step_options_of
from generator import gpus
from generator.results.shapes import StepResult, trust
from generator.site.charts.step_charts import PRECISION_ORDER
from generator.site.escaping import markdown_text, written
from generator.site.labels import PRECISION_LABELS as PRECISIONS
from generator.site.calculator_grid import fits as calculator_fits
from generator.site.calculator_grid.keys import calculator_only_keys
from generator.site.pages import Page, PageModule
from generator.plan.predictor import verdicts
from generator.site.pages.sweeps import charts as sweep_charts
from generator.site.pages.sweeps import fits, twins
from generator.site.pages.sweeps import tables as sweep_tables
from generator.units import gib, mib, pct
from generator.words import LANGS, Words

Result = StepResult
#: Fewest distinct values of the swept field that make a sweep.
MIN_POINTS = 3
#: The GPU the page's advice quotes: a common card for one person (gpus.py).
PLANNING_GPU = "RTX 4090"
PAGES = (Page("sweeps.md", "sweeps/sweeps", nav=40),)
#: The calculator's grid stays out of the sweeps, but answers what a step needs between and
#: beyond a sweep's points (render.py).
READS_OWN_RESULTS_OF = ("calculator",)


def context(results: list[Result], studies: list[Result]) -> dict[str, Any] | None:
    """Every batch and sequence sweep among the results, fitted; None when there is none."""
    usable = [r for r in results if not r.get("error")]
    grid = calculator_only_keys()
    swept = [r for r in usable if r["key"] not in grid]
    batch = [_batch_group(g, usable) for g in _groups(swept, "batch_size")]
    batch = [g for g in batch if g["series"]]
    seq = [_seq_group(g) for g in _groups(swept, "seq_len")
           if all(r.get("architecture") for rs in g.values() for r in rs)]
    seq = [g for g in seq if g["series"]]
    if not batch and not seq:
        return None
    return {"batch": batch, "seq": seq, "gpus": [gpus.find(name) for name in fits.TABLE_GPUS],
            "coefficients": {fits.formula_variant(p): fits.formula_coefficients(p)
                             for p in ("amp-bf16", "fp32")},
            "main_batch": batch[0] if batch else None, "main_seq": seq[0] if seq else None,
            "planning": _planning(batch[0] if batch else None, seq[0] if seq else None)}


def figures(ctx: dict[str, Any], lang: str) -> dict[str, str]:
    """One chart per batch sweep and one per sequence sweep."""
    found = {f"sweeps-batch-{g['id']}": sweep_charts.batch_chart(g, lang) for g in ctx["batch"]}
    found.update({f"sweeps-seq-{g['id']}": sweep_charts.seq_chart(g, lang) for g in ctx["seq"]})
    return found


def tables(ctx: dict[str, Any], lang: str) -> dict[str, Markup]:
    """Fits, formula and largest-batch tables per batch sweep; one table per sequence sweep."""
    found: dict[str, Markup] = {}
    for g in ctx["batch"]:
        found[f"sweeps-fit-{g['id']}"] = sweep_tables.fit_table(g, lang)
        if g["formula"]:
            found[f"sweeps-formula-{g['id']}"] = sweep_tables.formula_table(g, lang)
            found[f"sweeps-prediction-{g['id']}"] = sweep_tables.prediction_table(g, lang)
        if g["has_largest"]:
            found[f"sweeps-largest-{g['id']}"] = sweep_tables.largest_table(g, lang)
    for g in ctx["seq"]:
        found[f"sweeps-seq-{g['id']}"] = sweep_tables.seq_table(g, lang)
    return found


def _groups(results: list[Result], vary: str) -> list[dict[str, list[Result]]]:
    """Results that differ only in `vary` (and precision), per precision, when at least one
    precision has MIN_POINTS distinct values; most trusted first."""
    found: dict[tuple, dict[str, dict[int, Result]]] = defaultdict(lambda: defaultdict(dict))
    for r in results:
        e = r["experiment"]
        key = tuple(sorted((k, str(v)) for k, v in e.items() if k not in (vary, "precision")))
        key += (("machine", r["environment"]["machine_id"]),)
        found[key][e["precision"]].setdefault(e[vary], r)
    order = PRECISION_ORDER.index
    groups = [{p: [by_value[v] for v in sorted(by_value)]
               for p, by_value in sorted(series.items(), key=lambda kv: order(kv[0]))
               if len(by_value) >= MIN_POINTS}
              for _, series in sorted(found.items())]
    groups = [g for g in groups if g]
    return sorted(groups, key=lambda g: _trust(next(iter(g.values()))[0]))


def _sources(series: dict[str, list[Result]]) -> list[Result]:
    """The results a group charts and fits, for the page's data files (site/sources.py)."""
    return [r for results in series.values() for r in results]


def _trust(result: Result) -> tuple:
    e = result["experiment"]
    # Within one backend the article's model leads: the page's prose is about it first.
    return (trust(e["backend"], e["device"]), e["model"] != "bert-base", e["model"])


def _describe(result: Result, vary: str) -> dict[str, Any]:
    """What a group is, for headings and ids: model, backend, modelled device, machine, and
    any option that is not the default."""
    e, env = result["experiment"], result["environment"]
    changed = step_options_of(e)  # named as the reports name them; stored lists read as tuples
    options = {lang: [opt.words(value)[lang] for opt, value in changed] for lang in LANGS}
    fixed = "seq_len" if vary == "batch_size" else "batch_size"
    ident = "-".join([e["model"], f"{fixed[0]}{e[fixed]}", e["optimizer"], e["backend"],
                      e["device"], env["machine_id"]] + [opt.tag(value) for opt, value in changed])
    return {"id": "".join(c if c.isalnum() or c in ".-" else "-" for c in ident.lower()),
            "model": e["model"], "backend": e["backend"], "device": e["device"],
            "optimizer": e["optimizer"], "attention": e.get("attention", "eager"),
            "machine": env.get("device_name") or env["machine_id"], "options": options,
            fixed: e[fixed], "architecture": result.get("architecture"),
            "models_gpu": e["device"] == "cuda"}


def _batch_group(series: dict[str, list[Result]], all_results: list[Result]) -> dict[str, Any]:
    first = next(iter(series.values()))[0]
    group = _describe(first, "batch_size")
    group["series"], group["formula"] = {}, fits.formula_applies(first)
    group["sources"] = _sources(series)
    for precision, results in series.items():
        try:
            fit = fits.fit_batch_sweep(results)
        except ValueError:  # every point on the optimizer floor: no line to draw
            continue
        measured = {r["experiment"]["batch_size"]: r["peak_bytes"] for r in results}
        points = [{"batch": b, "peak": p, "on_line": b in fit.fitted_batches,
                   "residual": p - fit.line(b)} for b, p in sorted(measured.items())]
        needs = {gpu: fits.needs_on(results, gpus.find(gpu)) for gpu in fits.TABLE_GPUS}
        entry = {"fit": fit, "points": points, "bytes_per_sample": fit.line.slope,
                 "fixed": fit.line.intercept, "floor": fit.floor,
                 "max_rel_residual": fit.line.max_rel_residual,
                 "gradients_at_peak": max(r["live_at_peak_bytes"].get("gradients", 0)
                                          for r in results
                                          if r["experiment"]["batch_size"] in fit.fitted_batches),
                 # Where the rising line meets the optimizer step's floor.
                 "crossover": None if fit.floor is None or fit.line.slope <= 0 else
                 (fit.floor - fit.line.intercept) / fit.line.slope,
                 "largest": _largest(fit, needs, all_results, sweep=results,
                                     sources=group["sources"])
                 if group["models_gpu"] and fit.line.slope > 0
                 and len([b for b in needs[fits.TABLE_GPUS[0]] if b in fit.fitted_batches]) >= 2
                 else []}
        if group["formula"]:
            entry["formula"] = _batch_formula(group, precision, fit, max(fit.fitted_batches),
                                              measured)
        group["series"][precision] = entry
    group["has_largest"] = any(entry["largest"] for entry in group["series"].values())
    # AMP fp16 and bf16 printed once where every figure of theirs prints alike
    group["twins"] = _twins(group["series"], _batch_figures, "batch")
    group["shown"] = twins.shown(group["series"], group["twins"])
    arch = group["architecture"]
    vocab_tensor = 4 * group["seq_len"] * arch["vocab"] if arch and arch.get("vocab") else None
    slopes = {p: e["fit"].category_slopes for p, e in group["series"].items()}
    group["per_sample_words"] = per_sample_words(
        slopes, vocab_tensor, group["seq_len"], arch.get("vocab") if arch else None,
        {p: twins.label(p, group["twins"], twins.AND) for p in group["shown"]})
    group["fixed_words"] = fixed_part_words(
        {p: e["fixed"] for p, e in group["series"].items()},
        max((e["gradients_at_peak"] for e in group["series"].values()), default=0))
    return group


#: How close a per-sample figure must come to a whole number of FP32 vocabulary-sized tensors
#: to be called that many of them.
VOCAB_TENSOR_TOLERANCE = 0.02


def vocab_tensors(nbytes: float, vocab_tensor: int | None) -> int | None:
    """How many FP32 tensors of one token row per vocabulary entry `nbytes` is, when it is a
    whole number of them (within VOCAB_TENSOR_TOLERANCE of one); else None."""
    if not vocab_tensor or nbytes <= 0:
        return None
    count = round(nbytes / vocab_tensor)
    return count if count >= 1 and abs(nbytes / vocab_tensor - count) < VOCAB_TENSOR_TOLERANCE \
        else None


def per_sample_words(slopes: dict[str, dict[str, float]], vocab_tensor: int | None,
                     seq_len: int, vocab: int | None,
                     names: dict[str, Words] | None = None) -> Words | None:
    """Where the first precision's bytes per sample go, and, where the temporaries per sample
    are a whole number of FP32 vocabulary-sized tensors (the loss's), how many, in each
    precision: the sentence says AMP shrinks them only when the data has fewer under AMP.
    `names`: how the sentence names a precision, where not by its label (twins.label)."""
    if not slopes:
        return None
    first, *others = slopes
    act, temp = slopes[first].get("activations", 0), slopes[first].get("temporaries", 0)
    en = (f"for {PRECISIONS[first].en}, {mib(act)} MiB are activations saved for backward and "
          f"{mib(temp)} MiB temporaries")
    zh = f"以 {PRECISIONS[first].zh} 为例，{mib(act)} MiB 是为反向传播保存的激活值，{mib(temp)} MiB 是临时张量"
    count = vocab_tensors(temp, vocab_tensor)
    if count is None:
        return Words(en + ".", zh + "。")
    each = (f"{mib(vocab_tensor)} MiB each: {seq_len} tokens × {vocab:,} vocabulary entries × 4 "
            f"bytes")
    each_zh = f"每份 {mib(vocab_tensor)} MiB：{seq_len} 个 token × {vocab:,} 的词表 × 4 字节"
    en += (f": {_count_en(count)} FP32 vocabulary-sized {'tensor' if count == 1 else 'tensors'} "
           f"per sample ({each}), the loss's gradients, alive as backward starts")
    zh += f"，正好是每个样本{_count_zh(count)}份词表大小的 FP32 张量（{each_zh}），也就是反向传播开始时损失函数的梯度"
    amp = next((p for p in others if p.startswith("amp")), None)
    if amp is None or first != "fp32":
        return Words(en + ".", zh + "。")
    amp_temp = slopes[amp].get("temporaries", 0)
    amp_count = vocab_tensors(amp_temp, vocab_tensor)
    name = (names or {}).get(amp, PRECISIONS[amp])
    if amp_count is not None and amp_count < count:
        en += (f". Under {name.en} they are {mib(amp_temp)} MiB, {_count_en(amp_count)} such "
               f"tensor{'s' if amp_count > 1 else ''}: fewer, but still FP32-sized, because CUDA "
               f"autocast runs the loss's `nll_loss` in FP32 and its gradient keeps that "
               f"precision.")
        zh += (f"。{name.zh} 下是 {mib(amp_temp)} MiB，只剩{_count_zh(amp_count)}份：份数少了，"
               f"但每份仍是 FP32 大小，因为 CUDA 的 autocast 让损失函数的 `nll_loss` 用 FP32 "
               f"计算，它的梯度也就是 FP32。")
    elif amp_count == count:
        en += f"; {name.en} keeps the same {mib(amp_temp)} MiB: AMP does not shrink them."
        zh += f"；{name.zh} 下同样是 {mib(amp_temp)} MiB：AMP 没有让它们变小。"
    else:
        en += f"; under {name.en} the temporaries are {mib(amp_temp)} MiB per sample."
        zh += f"；{name.zh} 下每个样本的临时张量是 {mib(amp_temp)} MiB。"
    return written(Words(en, zh))  # `nll_loss` a code span; the rest numbers and our words


def fixed_part_words(fixed: dict[str, float], gradients_at_peak: int) -> Words:
    """What the fixed part holds: AMP's is called larger only where it is, and the gradients
    absent only where no fitted point has any live at its peak."""
    amp = next((p for p in fixed if p.startswith("amp")), None)
    en = ("The fixed part is the model state that is resident at the peak (weights and the "
          "optimizer's moments")
    zh = "固定部分是峰值时刻驻留的模型状态：权重和优化器的两个动量"
    if amp and "fp32" in fixed:
        if fixed[amp] > fixed["fp32"]:
            en += (", plus autocast's 16-bit weight copies under AMP, which is why AMP's fixed "
                   "part is larger")
            zh += "；AMP 下还要加上 autocast 生成的 16 位权重副本，所以 AMP 的固定部分反而更大"
        else:
            en += ", plus autocast's 16-bit weight copies under AMP"
            zh += "；AMP 下还有 autocast 生成的 16 位权重副本"
    if gradients_at_peak:
        return Words(en + f", and up to {mib(gradients_at_peak)} MiB of gradients).",
                     zh + f"，外加最多 {mib(gradients_at_peak)} MiB 的梯度。")
    return Words(en + "); the gradients are not there yet.", zh + "。此刻梯度还没有产生。")


def amp_batch_words(amp: str, gpu: str, fp32_batch: int, amp_batch: int,
                    series: dict[str, dict[str, Any]]) -> Words:
    """The planning bullet on what AMP buys in batch: 'not twice as much' only where the
    largest AMP batch is under twice FP32's, with the reasons read off the two lines."""
    name = PRECISIONS[amp]
    gain = amp_batch / fp32_batch if fp32_batch else None
    per = (series["fp32"]["bytes_per_sample"], series[amp]["bytes_per_sample"])
    fixed = (series["fp32"]["fixed"], series[amp]["fixed"])
    if gain is not None and gain >= 2:
        head = Words("**AMP buys batch, twice as much or more.**", "**AMP 换来的 batch 达到两倍甚至更多。**")
    elif gain is not None and gain > 1:
        head = Words("**AMP buys batch, but not twice as much.**", "**AMP 能换来更大的 batch，但远不到两倍。**")
    else:
        head = Words("**AMP buys no batch here.**", "**这里 AMP 换不来更大的 batch。**")
    times = Words(f", {gain:.2f} times as many" if gain else "",
                  f"，是前者的 {gain:.2f} 倍" if gain else "")
    fall = 1 - per[1] / per[0]
    why_en = f"its bytes per sample fall from {mib(per[0])} to {mib(per[1])} MiB ({pct(fall)} less)"
    why_zh = f"每样本的字节从 {mib(per[0])} MiB 降到 {mib(per[1])} MiB（少了 {pct(fall)}）"
    if fall < 0.5:
        why_en += (", not by half, because not every saved tensor is 16-bit (the loss keeps "
                   "FP32 log-probabilities and gradients)")
        why_zh += "，远没有减半，因为并非每个保存的张量都变成 16 位（损失函数仍保留 FP32 的对数概率和梯度）"
    if fixed[1] > fixed[0]:
        why_en += (f"; and the fixed part grows from {gib(fixed[0])} to {gib(fixed[1])} GiB: the "
                   f"weights and the Adam moments stay FP32, and autocast adds 16-bit copies of "
                   f"the weights")
        why_zh += (f"；固定部分还从 {gib(fixed[0])} GiB 增加到 {gib(fixed[1])} GiB：权重和 Adam "
                   f"动量仍是 FP32，autocast 还要额外存一份 16 位权重副本")
    shown = markdown_text(gpu)
    return {"precision": amp, "gpu": gpu, "fp32": fp32_batch, "amp_batch": amp_batch,
            "gain": gain,
            # the head in bold (Markdown): the words as written, the GPU's name escaped
            "words": written(Words(f"{head.en} On an {shown}, {PRECISIONS['fp32'].en} fits batch "
                           f"{fp32_batch} and {name.en} batch {amp_batch}{times.en}: {why_en}.",
                           f"{head.zh}在 {shown} 上，{PRECISIONS['fp32'].zh} 最多 batch {fp32_batch}，"
                           f"{name.zh} 最多 {amp_batch}{times.zh}：{why_zh}。"))}


def _count_en(n: int) -> str:
    return {1: "one", 2: "two", 3: "three", 4: "four"}.get(n, str(n))


def _count_zh(n: int) -> str:
    return {1: "一", 2: "两", 3: "三", 4: "四"}.get(n, f" {n} ")


def _largest(fit: fits.BatchFit, needs: dict[str, dict[int, int]], all_results: list[Result],
             *, sweep: list[Result], sources: list[Result]) -> list[fits.LargestBatch]:
    """The largest batch per GPU of the table: by the calculator's replay of the step's
    allocations where the calculator has this step (as the widget and `estimate
    --largest-batch` answer; its estimates join the page's sources), else by a line through
    what the sweep's points need."""
    first = sweep[0]
    found_predictor = (calculator_fits.predictor(all_results, first["experiment"])
                       if first["backend"] == "estimate" else None)
    predictor = None
    if found_predictor is not None:
        predictor, grid = found_predictor
        cited = {r["key"] for r in sources}
        sources.extend(r for r in grid if r["key"] not in cited)
    seq = first["experiment"]["seq_len"]
    found = []
    for name in fits.TABLE_GPUS:
        gpu = gpus.find(name)
        if predictor is None:
            found.append(fits.largest_batch(fit, needs[name], gpu))
            continue
        entry = verdicts.gpu_entry(gpu)
        batch = verdicts.largest_batch_by(predictor, entry, seq)
        needed = verdicts.needed_bytes(predictor, entry, batch, seq) if batch else 0.0
        fitted = predictor.fit["range"]
        found.append(fits.checked(gpu, batch, needed, needs[name], method="replay",
                                  extrapolated=batch * seq > fitted["tokens"][1]))
    return found


def _batch_formula(group: dict[str, Any], precision: str, fit: fits.BatchFit, top: int,
                   measured: dict[int, int]) -> dict[str, Any]:
    """The formula per sample against the measured slopes, and the peak it would predict."""
    per_sample = fits.formula_activations(group["architecture"], precision=precision,
                                          batch_size=1, seq_len=group["seq_len"])
    predicted = fit.line.intercept + per_sample["bytes"] * top
    return {"variant": per_sample["variant"], "per_sample": per_sample["bytes"],
            "layers_per_sample": fit.layer_slope,
            "layers_error": fit.layer_slope / per_sample["bytes"] - 1,
            "coefficients": fits.formula_coefficients(precision),
            "at_batch": top, "predicted_peak": predicted, "measured_peak": measured[top],
            "peak_error": predicted / measured[top] - 1,
            "share_of_slope": per_sample["bytes"] / fit.line.slope}


def _seq_group(series: dict[str, list[Result]]) -> dict[str, Any]:
    first = next(iter(series.values()))[0]
    group = _describe(first, "seq_len")
    group["formula"] = fits.formula_applies(first)
    group["sources"] = _sources(series)
    group["series"] = {}
    for precision, results in series.items():
        points = []
        for r in results:
            live = r["live_at_peak_bytes"]
            point = {"seq": r["experiment"]["seq_len"], "peak": r["peak_bytes"],
                     "layers": fits.layer_activation_bytes(r), "activations": live["activations"],
                     "fixed": sum(live[c] for c in ("parameters", "gradients",
                                                    "optimizer_state", "autocast_copies"))}
            if group["formula"]:
                f = fits.formula_activations(r["architecture"], precision=precision,
                                             batch_size=group["batch_size"], seq_len=point["seq"])
                point.update(formula=f["bytes"], quadratic_share=f["quadratic"] / f["bytes"],
                             formula_error=point["layers"] / f["bytes"] - 1, variant=f["variant"])
            points.append(point)
        lo, hi = points[0], points[-1]
        group["series"][precision] = {
            "points": points, "first": lo, "last": hi, "seq_factor": hi["seq"] / lo["seq"],
            "peak_factor": hi["peak"] / lo["peak"],
            "layers_factor": hi["layers"] / lo["layers"] if lo["layers"] else None}
        if group["formula"] and len(points) >= 2:
            group["series"][precision]["excess"] = _excess(group, points)
    group["twins"] = _twins(group["series"], _seq_figures, "seq")
    group["shown"] = twins.shown(group["series"], group["twins"])
    return group


def _twins(series: dict[str, dict[str, Any]], printed: Any, axis: str) -> dict[str, Any]:
    """twins.twins over what the page prints of each precision's sweep (`printed`), with
    the largest difference among the points' peaks (and the layers' activations), compared
    at the points both have."""
    pair = {p: series[p] for p in (twins.KEPT, twins.LEFT_OUT) if p in series}
    if len(pair) < 2:
        return {"same": False}
    both = set.intersection(*({x[axis] for x in s["points"]} for s in pair.values()))
    sizes = {p: [x[k] for x in s["points"] if x[axis] in both
                 for k in ("peak", "layers") if k in x] for p, s in pair.items()}
    return twins.twins({p: printed(s) for p, s in pair.items()}, sizes)


def _batch_figures(s: dict[str, Any]) -> list[str]:
    """Every figure the page prints of one precision's batch sweep, in both languages: its
    rows of the tables, its sentence of the chart's description (which holds the text's),
    and the points the chart draws, to a hundredth of a GiB."""
    found = [f"{p['batch']}: {gib(p['peak'])}" for p in s["points"]]
    for lang in LANGS:
        found += sweep_tables.fit_cells(s) + sweep_tables.largest_cells(s, lang)
        if "formula" in s:
            found += sweep_tables.formula_cells(s, lang) + sweep_tables.prediction_cells(s)
        found.append(sweep_charts.batch_desc(s, "", lang))
    return found


def _seq_figures(s: dict[str, Any]) -> list[str]:
    """Every figure the page prints of one precision's sequence sweep, in both languages: its
    rows of the table, its sentence of the chart's description, and its surplus over the
    formula (the formula section's bullet)."""
    found = [cell for row in sweep_tables.seq_cells(s) for cell in row]
    for lang in LANGS:
        found.append(sweep_charts.seq_desc(s, "", lang))
    if "excess" in s:
        x = s["excess"]
        found += [pct(s["first"]["formula_error"], 0), pct(s["last"]["formula_error"], 0),
                  f"{x['sbh']:.1f}", f"{x['as2b']:.1f}", pct(x["max_error"], 2)]
    return found


def _excess(group: dict[str, Any], points: list[dict[str, Any]]) -> dict[str, Any]:
    """What the layers keep beyond the formula, per layer, as x·s·b·h + y·a·s²·b bytes:
    divided by s·b·h it is a line in a·s/h, so x and y come from the same least squares."""
    arch, b = group["architecture"], group["batch_size"]
    xs = [arch["heads"] * p["seq"] / arch["hidden"] for p in points]
    ys = [(p["layers"] - p["formula"]) / (arch["layers"] * p["seq"] * b * arch["hidden"])
          for p in points]
    line = fits.linear_fit(xs, ys)
    return {"sbh": line.intercept, "as2b": line.slope,
            "max_error": max(abs(p["formula_error"]) for p in points)}


def _planning(batch: dict[str, Any] | None, seq: dict[str, Any] | None) -> dict[str, Any]:
    """The few comparisons the page's advice rests on, read off the main sweeps."""
    found: dict[str, Any] = {}
    series = batch["series"] if batch and batch["has_largest"] else {}
    amp = next((p for p in ("amp-bf16", "amp-fp16") if p in series), None)
    if "fp32" in series and amp and series["fp32"]["largest"] and series[amp]["largest"]:
        i = fits.TABLE_GPUS.index(PLANNING_GPU)
        fp32, mixed = series["fp32"]["largest"][i].batch, series[amp]["largest"][i].batch
        found["amp"] = amp_batch_words(amp, PLANNING_GPU, fp32, mixed, series)
    if seq:
        p, s = next(iter(seq["series"].items()))
        # The last doubling in the sweep: does twice the sequence cost more than twice?
        pairs = [(a, b) for a in s["points"] for b in s["points"] if b["seq"] == 2 * a["seq"]]
        # The bullet says a longer sequence costs more than a larger batch: only where it does.
        if pairs and pairs[-1][0]["layers"] and pairs[-1][1]["layers"] > 2 * pairs[-1][0]["layers"]:
            a, b = pairs[-1]
            found["double_seq"] = {"precision": p, "from": a["seq"], "to": b["seq"],
                                   "peak_factor": b["peak"] / a["peak"],
                                   "layers_factor": b["layers"] / a["layers"]}
    return found


PAGE_MODULE = PageModule(PAGES, context, figures=figures, tables=tables,
                         reads_own_results_of=READS_OWN_RESULTS_OF)
