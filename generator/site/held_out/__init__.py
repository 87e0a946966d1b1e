"""The accuracy page's held-out section: published real-GPU measurements that the estimate was
never developed on (generator/results/reference_data/HELD_OUT.md), each beside the estimate
made of it once, at the commit the data file records, grouped by source.

Each source printed one kind of figure, and the estimate is held against the same kind:
`nvidia-smi` is the allocator's reserved memory plus what lies outside it, so it meets the
estimated reserved peak plus the CUDA context the source itself read; `max_memory_reserved`
meets the estimated reserved peak; `max_memory_allocated` the estimated allocated peak.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from generator import gpus
from generator.experiment import options
from generator.results.reference_runs import HeldOutPoint, HeldOutSource
from generator.site.escaping import markdown_text as escape
from generator.site.held_out import known_causes
from generator.site.stats import errors as stats, falls_short
from generator.site.tables import markdown_table
from generator.units import mib, pct
from generator.words import Words

_TEXT: dict[str, Words] = {
    "config": Words("Configuration", "配置"),
    "ratio": Words("Estimate ÷ published", "估算 ÷ 公开数字"),
    "commit": Words("Estimated at", "估算所在提交"),
    "batch": Words("batch {}", "batch {}"), "seq": Words("sequence {}", "序列 {}"),
    "micro": Words("batch {} × {} micro-batches", "batch {} × {} 个微批次"),
    "fp32": Words("FP32", "FP32"), "amp-fp16": Words("AMP fp16 + GradScaler", "AMP fp16 + GradScaler"),
    "amp-bf16": Words("AMP bf16", "AMP bf16"),
    "fp16": Words("fp16 weights and optimizer state", "权重和优化器状态均为 fp16"),
    "bf16": Words("bf16 weights and optimizer state", "权重和优化器状态均为 bf16"),
    "ac": options()["checkpointing"].words(True),
    "first": Words("First estimate (MiB)", "第一次估算 (MiB)"),
    "first_ratio": Words("First ÷ published", "第一次 ÷ 公开数字"),
    "first_commit": Words("First estimated at", "第一次估算所在提交"),
    "short_by": Words("Published − estimated (MiB)", "公开数字 − 估算 (MiB)"),
    "softmax": Words("Softmax inputs its PyTorch kept (MiB)", "其 PyTorch 多留的 softmax 输入 (MiB)"),
}
#: A loop that does not let its gradients go after the optimizer step, as the label says it.
_ZERO_GRAD = {"before-backward": Words("zero_grad() between forward and backward",
                                       "zero_grad() 在前向和反向之间"),
              "zeros": Words("zero_grad(set_to_none=False)", "zero_grad(set_to_none=False)")}
#: The published figure's column, and the estimate's, by what the source printed.
_PUBLISHED = {"nvidia-smi": Words("Published: nvidia-smi (MiB)", "公开数字：nvidia-smi (MiB)"),
              "reserved": Words("Published: max_memory_reserved (MiB)",
                                "公开数字：max_memory_reserved (MiB)"),
              "allocated": Words("Published: max_memory_allocated (MiB)",
                                 "公开数字：max_memory_allocated (MiB)")}
_ESTIMATED = {"nvidia-smi": Words("Estimated: reserved + context (MiB)", "估算：已预留 + 上下文 (MiB)"),
              "reserved": Words("Estimated: reserved peak (MiB)", "估算：已预留峰值 (MiB)"),
              "allocated": Words("Estimated: allocated peak (MiB)", "估算：已分配峰值 (MiB)")}


def estimated_figure(point: HeldOutPoint) -> int | None:
    """The estimate of what the source printed, or None before the point is estimated (a
    corrected point: its corrected estimate, which the summary counts)."""
    if point.estimated is None:
        return None
    return figure_of(point.source, point.estimated)


def figure_of(source: HeldOutSource, peaks: dict[str, int]) -> int:
    """Of an estimate's allocated and reserved peaks, the figure the source printed."""
    if source.figure == "allocated":
        return peaks["allocated"]
    # the reserved peak; nvidia-smi adds what lies outside the allocator (0 for "reserved")
    return peaks["reserved"] + source.context_bytes


def rows(points: list[HeldOutPoint]) -> list[dict[str, Any]]:
    """One row per point estimated so far: the published figure, the estimate, their ratio."""
    found = []
    for point in points:
        estimated = estimated_figure(point)
        if estimated is None:
            continue
        found.append({"point": point, "label": label(point), "published": point.published_bytes,
                      "estimated": estimated, "ratio": estimated / point.published_bytes,
                      "commit": point.commit, "versions": point.versions,
                      "first": known_causes.first_estimate(point, figure_of),
                      "softmax": known_causes.softmax_input(point)})
    return found


def label(point: HeldOutPoint) -> Words:
    """'BERT-large · batch 1 × 4 micro-batches · sequence 512 · AMP fp16 + GradScaler · …'."""
    def say(lang: str) -> str:
        batch = (_TEXT["batch"][lang].format(point.batch_size) if point.micro_batches == 1
                 else _TEXT["micro"][lang].format(point.batch_size // point.micro_batches,
                                                  point.micro_batches))
        seq = _TEXT["seq"][lang].format(point.seq_len)
        parts = [point.source.model_name, batch, seq, _TEXT[point.precision][lang],
                 point.optimizer]
        parts += [_TEXT["ac"][lang]] if point.checkpointing else []
        parts += [_ZERO_GRAD[point.zero_grad][lang]] if point.zero_grad in _ZERO_GRAD else []
        return " · ".join(parts)
    return Words(say("en"), say("zh"))


def summary(found: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Worst and median error over every point, how many estimates fall short of the
    published figure, and how many sources and GPUs they come from."""
    if not found:
        return None
    return {"errors": stats([r["ratio"] for r in found]),
            "short": sum(falls_short(r["ratio"]) for r in found), "count": len(found),
            "corrected": corrected(found),
            "sources": len({r["point"].source.id for r in found}),
            "gpus": sorted({r["point"].source.gpu for r in found})}


def corrected(found: list[dict[str, Any]]) -> Words | None:
    """'5 of them were estimated a second time …' where a setting was corrected (one in the
    singular); None where none was."""
    twice = [r for r in found if r["first"] is not None]
    if not twice:
        return None
    names = sorted({r["point"].source.label.en for r in twice})
    names_zh = sorted({r["point"].source.label.zh for r in twice})
    if len(twice) == 1:
        lead, lead_zh = "One of them was", "其中 1 个数据点"
    else:
        lead, lead_zh = f"{len(twice)} of them were", f"其中 {len(twice)} 个数据点"
    return Words(
        f"{lead} estimated a second time, once a setting was found to have been transcribed "
        f"differently from how the source ran it ({', '.join(names)}: what changed and why is "
        f"said there, beside the first estimates); the figures here count the second.",
        f"{lead_zh}估算了第二次：后来发现有一项设置抄录得和来源实际运行的不一样（"
        f"{'、'.join(names_zh)}：改了什么、为什么改，写在那一节，第一次的估算也列在旁边）；"
        f"这里的数字按第二次估算统计。")


def by_source(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows grouped by source, in the file's order, each with what its paragraph says:
    what is compared, the versions, the GPU the estimate modelled, its own errors."""
    groups: dict[str, dict[str, Any]] = {}
    for row in found:
        source = row["point"].source
        group = groups.setdefault(source.id, {"source": source, "rows": []})
        group["rows"].append(row)
    for group in groups.values():
        source, its_rows = group["source"], group["rows"]
        estimate_versions = {k: sorted({r["versions"][k] for r in its_rows if k in r["versions"]})
                             for k in ("torch", "transformers", "bitsandbytes")}
        group.update({
            "errors": stats([r["ratio"] for r in its_rows]),
            "short": sum(falls_short(r["ratio"]) for r in its_rows),
            "compared": compared(source),
            "versions": versions(source, estimate_versions),
            "modelled": modelled(source, sorted({r["point"].modelled_gpu for r in its_rows})),
            "gpu_name": gpu_name(source),
            "said": source_summary(stats([r["ratio"] for r in its_rows]),
                                   sum(falls_short(r["ratio"]) for r in its_rows)),
            "correction": known_causes.correction_said(source, its_rows),
            "softmax": known_causes.softmax_said(its_rows),
            "commits": sorted({r["commit"] for r in its_rows})})
    return list(groups.values())


def compared(source: HeldOutSource) -> Words:
    """Which estimated figure meets what the source printed."""
    if source.figure == "nvidia-smi":
        context = mib(source.context_bytes)
        return Words(
            f"The source printed what nvidia-smi showed once training had ended; it is held "
            f"against the estimated reserved peak plus the {context} MiB the source read after "
            f"its first tensor, the CUDA context. The caching allocator keeps what it reserved, "
            f"so nvidia-smi shows the reserved peak plus what lies outside the allocator.",
            f"来源打印的是训练结束后 nvidia-smi 显示的数字；与它比较的是估算的已预留峰值，加上"
            f"来源在创建第一个张量后读到的 {context} MiB CUDA 上下文。缓存分配器不会归还已预留的"
            f"显存，所以 nvidia-smi 显示的是已预留峰值加上分配器之外的部分。")
    if source.figure == "reserved":
        return Words(
            "The source printed torch.cuda.max_memory_reserved(), the most the caching "
            "allocator held; it is held against the estimated reserved peak.",
            "来源打印的是 torch.cuda.max_memory_reserved()，即缓存分配器预留过的最大显存；"
            "与它比较的是估算的已预留峰值。")
    return Words(
        "The source printed torch.cuda.max_memory_allocated(), the most its tensors held; it "
        "is held against the estimated allocated peak.",
        "来源打印的是 torch.cuda.max_memory_allocated()，即张量占用过的最大显存；与它比较的是"
        "估算的已分配峰值。")


def versions(source: HeldOutSource, estimate: dict[str, list[str]]) -> Words:
    """The source's PyTorch and transformers, stated or assumed from its date, beside the
    versions the estimates ran."""
    torch, transformers = (" or ".join(source.versions[k]) for k in ("torch", "transformers"))
    torch_zh, transformers_zh = (" 或 ".join(source.versions[k]) for k in ("torch", "transformers"))
    ran = ", ".join(f"{name} {', '.join(estimate[k])}" for k, name in
                    (("torch", "PyTorch"), ("transformers", "transformers"),
                     ("bitsandbytes", "bitsandbytes")) if estimate.get(k))
    ran_zh = "、".join(f"{name} {'、'.join(estimate[k])}" for k, name in
                      (("torch", "PyTorch"), ("transformers", "transformers"),
                       ("bitsandbytes", "bitsandbytes")) if estimate.get(k))
    if source.versions_stated:
        return Words(f"The source ran PyTorch {torch} and transformers {transformers}, as it "
                     f"states; the estimates ran {ran}.",
                     f"来源注明它用的是 PyTorch {torch_zh} 和 transformers {transformers_zh}；"
                     f"估算用的是 {ran_zh}。")
    return Words(f"The source states no versions; its date ({source.date}) says PyTorch "
                 f"{torch} and transformers {transformers}; the estimates ran {ran}.",
                 f"来源没有注明版本；按它的日期（{source.date}）推断是 PyTorch {torch_zh}、"
                 f"transformers {transformers_zh}；估算用的是 {ran_zh}。")


def modelled(source: HeldOutSource, modelled_gpus: list[str]) -> Words:
    """The catalogue GPU the estimates modelled: the source's own, one of the catalogue's GPUs
    of the name the source gives (the same cuBLAS workspace or not), or a stand-in for a GPU
    the catalogue lacks (whose cuBLAS workspace is PyTorch's default before Hopper or not).
    The workspace is the one figure of the GPU that enters the estimated peaks."""
    chosen = [gpus.find(name) for name in modelled_gpus]
    listed = ", ".join(gpu.short_name for gpu in chosen)
    name = gpu_name(source)
    if all(gpu.name == source.gpu for gpu in chosen):
        return Words(f"The estimates model the source's GPU, the catalogue's {listed}.",
                     f"估算模拟的就是来源所用的 GPU，即目录里的 {listed}。")
    named = [gpu for gpu in gpus.CATALOGUE if name in gpu.short_name]
    if named:
        sizes = {gpu.overheads.cublas_workspace_bytes for gpu in named}
        them = " and ".join(filter(None, [", ".join(g.short_name for g in named[:-1]),
                                          named[-1].short_name]))
        them_zh = "、".join(gpu.short_name for gpu in named)
        size = f"{mib(next(iter(sizes)))} MiB"
        if len(sizes) == 1:
            return Words(
                f"The source does not say which {name} it used; the catalogue's {them} keep the "
                f"same cuBLAS workspace ({size}), the one figure of the GPU that enters the "
                f"estimated peaks, and the estimates model the {listed}.",
                f"来源没说用的是哪一款 {name}；目录里的 {them_zh} 的 cuBLAS 工作区相同（{size}），"
                f"而 GPU 的参数里只有它进入估算的峰值；估算模拟的是 {listed}。")
        return Words(
            f"The source does not say which {name} it used, and the catalogue's {them} keep "
            f"different cuBLAS workspaces; the estimates model the {listed}.",
            f"来源没说用的是哪一款 {name}，而目录里的 {them_zh} 的 cuBLAS 工作区各不相同；"
            f"估算模拟的是 {listed}。")
    workspace = {gpu.overheads.cublas_workspace_bytes for gpu in chosen}
    size = ", ".join(f"{mib(w)} MiB" for w in sorted(workspace))
    if workspace == {gpus.CUBLAS_WORKSPACE_DEFAULT}:
        return Words(
            f"The catalogue has no {name}; the estimates model the {listed}, whose cuBLAS "
            f"workspace ({size}) is PyTorch's default on every GPU before Hopper, the {name} "
            f"among them; no other figure of that GPU enters the estimated peaks.",
            f"目录里没有 {name}；估算模拟的是 {listed}，它的 cuBLAS 工作区（{size}）是 PyTorch "
            f"在 Hopper 之前所有 GPU 上的默认值，{name} 也在其中；这块 GPU 的其他参数都不进入"
            f"估算的峰值。")
    return Words(
        f"The catalogue has no {name}; the estimates model the {listed}, whose cuBLAS workspace "
        f"({size}) is not PyTorch's default before Hopper, so the estimate may be off by the "
        f"difference.",
        f"目录里没有 {name}；估算模拟的是 {listed}，它的 cuBLAS 工作区（{size}）不是 PyTorch "
        f"在 Hopper 之前的默认值，估算可能因此有偏差。")


def source_summary(errors: dict[str, float], short: int) -> Words:
    """'Against this source's 5 points the estimate is off by at most …; all 5 fall short of
    the published figure' (or none, or some; one point in the singular)."""
    count, worst, median = errors["count"], pct(errors["worst"], 1), pct(errors["median"], 1)
    if count == 1:
        where = ("it falls short of the published figure" if short else
                 "it is not below the published figure")
        where_zh = f"比公开数字低 {worst}" if short else f"不低于公开数字，相差 {worst}"
        return Words(f"Against this source's one point the estimate is off by {worst}; {where}.",
                     f"对照这个来源的 1 个数据点，估算{where_zh}。")
    where = ("all of them fall short of the published figure" if short == count else
             "none of them falls short of the published figure" if short == 0 else
             f"{short} of them fall short of the published figure")
    where_zh = ("全部低于公开数字" if short == count else "没有一个低于公开数字" if short == 0
                else f"其中 {short} 个低于公开数字")
    return Words(f"Against this source's {count} points the estimate is off by at most {worst} "
                 f"(median {median}); {where}.",
                 f"对照这个来源的 {count} 个数据点，估算的误差最大 {worst}（中位数 {median}）；"
                 f"{where_zh}。")


def origin(summary: dict[str, Any]) -> Words:
    """'from 3 sources on 3 GPUs', in the singular where there is one."""
    sources, gpu_count = summary["sources"], len(summary["gpus"])
    return Words(f"from {sources} source{'s' if sources != 1 else ''} on {gpu_count} "
                 f"GPU{'s' if gpu_count != 1 else ''}",
                 f"来自 {sources} 个来源、{gpu_count} 种 GPU")


def table(found: list[dict[str, Any]], lang: str) -> Markup:
    """One source's points: its figure decides the published and estimated columns."""
    figure = found[0]["point"].source.figure
    first = any(r["first"] for r in found)  # a corrected source: its first estimates beside
    softmax = any(r["softmax"] for r in found)  # a known cause: the shortfall and its size
    headers = [_TEXT["config"][lang], _PUBLISHED[figure][lang], _ESTIMATED[figure][lang],
               _TEXT["ratio"][lang], _TEXT["commit"][lang]]
    headers += [_TEXT["first"][lang], _TEXT["first_ratio"][lang],
                _TEXT["first_commit"][lang]] if first else []
    headers += [_TEXT["short_by"][lang], _TEXT["softmax"][lang]] if softmax else []
    body = []
    for r in found:
        cells = [escape(r["label"][lang]), mib(r["published"]), mib(r["estimated"]),
                 f"{r['ratio']:.3f}", f"`{r['commit'][:10]}`"]
        if first:
            was = r["first"]
            cells += ([mib(was["estimated"]), f"{was['ratio']:.3f}", f"`{was['commit'][:10]}`"]
                      if was else ["–", "–", "–"])
        if softmax:
            cells += [mib(r["published"] - r["estimated"]),
                      mib(r["softmax"]["bytes"]) if r["softmax"] else "–"]
        body.append(cells)
    return markdown_table(headers, body, numeric_from=1)


def gpu_name(source: HeldOutSource) -> str:
    """'RTX 3090', 'V100-SXM2-16GB', 'A100': the name without the vendor's words."""
    return source.gpu.removeprefix("Tesla ").removeprefix("NVIDIA ").removeprefix("GeForce ")
