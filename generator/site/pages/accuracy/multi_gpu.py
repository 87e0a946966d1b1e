"""The accuracy page's held-out points over several GPUs: published per-GPU memory of
multi-GPU jobs (generator/results/reference_data/multi_gpu_measurements.json), each beside
the estimate of one GPU of the job made once, at the commit `multi_gpu_held_out.json`
records (HELD_OUT.md, "Multi-GPU points"), and the other published rows with why they are
not estimated. Every figure and relation here comes from those two files.
"""

from __future__ import annotations

import re
from typing import Any

from markupsafe import Markup

from generator import gpus
from generator.results import held_out_torchtitan
from generator.results.reference_runs import MultiGpuPoint, NotEstimated
from generator.site.escaping import markdown_text as escape
from generator.site.tables import markdown_table
from generator.units import gib, mib, pct
from generator.words import Words

_TEXT: dict[str, Words] = {
    "job": Words("Job (one GPU of it)", "任务（其中一块 GPU）"),
    "published": Words("Published, measured on a GPU: {gpu} (GiB)", "公开数字，GPU 实测：{gpu} (GiB)"),
    "estimated": Words("Estimated for {gpu}: reserved peak (GiB)",
                       "估算（模拟 {gpu}）：已预留峰值 (GiB)"),
    "ratio": Words("Estimate ÷ published", "估算 ÷ 公开数字"),
    "commit": Words("Estimated at", "估算所在提交"),
    "trainer": Words("Estimated by torchtitan's trainer on a simulated {gpu} with {memory}: "
                     "reserved peak (GiB)",
                     "估算（torchtitan 自己的训练器，模拟 {memory} 的 {gpu}）：已预留峰值 (GiB)"),
    "ran": Words("Run at", "运行所在提交"),
    "not_run": Words("not yet run", "尚未运行"),
    "label": Words("{model} · FSDP2 over {gpus} GPUs · local batch {batch} × {seq:,} tokens",
                   "{model} · FSDP2，{gpus} 块 GPU · 每块 GPU batch {batch} × {seq:,} 个 token"),
}


def rows(points: list[MultiGpuPoint]) -> list[dict[str, Any]]:
    """One row per point: the published figure, the estimated reserved peak, their ratio."""
    found = []
    for point in points:
        estimated = point.estimated[point.figure]
        found.append({"point": point, "label": label(point),
                      "published": point.published_bytes, "estimated": estimated,
                      "ratio": estimated / point.published_bytes, "commit": point.commit,
                      "seconds": point.wall_seconds})
    return found


def label(point: MultiGpuPoint) -> Words:
    return Words(*(_TEXT["label"][lang].format(model=point.model, gpus=point.gpus,
                                               batch=point.local_batch_size, seq=point.seq_len)
                   for lang in ("en", "zh")))


def context(points: list[MultiGpuPoint], others: list[NotEstimated],
            trainer: list[held_out_torchtitan.Point] | None = None) -> dict[str, Any] | None:
    """What the section prints: its rows, what they say, the GPU modelled, torchtitan's own
    run of the same rows, the others."""
    found = rows(points)
    if not found:
        return None
    return {"rows": found, "said": said(found), "modelled": modelled(points),
            "trainer": trainer_context(trainer or [], found),
            "counter": counter(points), "commits": sorted({r["commit"] for r in found}),
            "others": [{"count": len(g.rows), "what": g.what, "why": g.why} for g in others],
            "others_count": sum(len(g.rows) for g in others),
            "source_url": points[0].source_url, "gpu": points[0].gpu}


def said(found: list[dict[str, Any]]) -> Words:
    """'On 8 GPUs the estimate falls short of the published figure by 6.9 %, on 128 GPUs by
    2.3 %.': each row's direction checked on its ratio, a direction said once for the rows
    that share it."""
    en, zh, last = [], [], None
    for row in found:
        gap, count = pct(abs(row["ratio"] - 1), 1), row["point"].gpus
        direction = (row["ratio"] > 1) - (row["ratio"] < 1)
        if direction == 0:
            en.append(f"on {count} GPUs the estimate is the published figure")
            zh.append(f"{count} 块 GPU 时估算与公开数字相同")
        elif direction == last:
            en.append(f"on {count} GPUs by {gap}")
            zh.append(f"{count} 块 GPU 时{'低' if direction < 0 else '高'} {gap}")
        else:
            verb = "falls short of" if direction < 0 else "exceeds"
            en.append(f"on {count} GPUs the estimate {verb} the published figure by {gap}")
            zh.append(f"{count} 块 GPU 时估算比公开数字{'低' if direction < 0 else '高'} {gap}")
        last = direction
    text = ", ".join(en)
    return Words(text[0].upper() + text[1:] + ".", "，".join(zh) + "。")


def modelled(points: list[MultiGpuPoint]) -> Words:
    """The catalogue GPU the estimates modelled beside the source's, and why the difference
    in memory leaves the reserved peak alone: no budget is given, so the simulated allocator
    never runs short; the one figure of the GPU in the peaks is its cuBLAS workspace."""
    chosen = {gpus.find(p.modelled_gpu).name for p in points}
    gpu = gpus.find(next(iter(chosen)))
    workspace = f"{mib(gpu.overheads.cublas_workspace_bytes)} MiB"
    source = points[0].gpu.removeprefix("NVIDIA ")
    return Words(
        f"The catalogue has no {source}; the estimates model its {gpu.short_name}, of the "
        f"same generation. Its memory does not enter the reserved peak: no memory budget is "
        f"given, so the simulated allocator never runs short and never frees its cache to "
        f"retry. The one figure of the GPU in the peaks, the cuBLAS workspace ({workspace} "
        f"each), is Hopper's for both.",
        f"目录里没有 {source}；估算模拟的是目录里同一代的 {gpu.short_name}。它的显存大小不进入"
        f"已预留峰值：没有给显存预算，模拟的分配器不会缺显存，也就不会释放缓存重试。GPU 的参数里"
        f"只有 cuBLAS 工作区（每个 {workspace}）进入峰值，而两者同为 Hopper，工作区相同。")


def counter(points: list[MultiGpuPoint]) -> Words:
    """What the published figure is, stated or inferred."""
    if all(p.figure_stated for p in points):
        return Words("The source names its counter, torch.cuda.max_memory_reserved().",
                     "来源写明了它读的是 torch.cuda.max_memory_reserved()。")
    return Words(
        "The table heads its column \"Memory(GiB)\" without naming a counter; torchtitan's "
        "train.py at that commit logs torch.cuda.max_memory_reserved() (reset every ten "
        "steps), so the figure is taken to be the reserved peak, inferred, not stated, and "
        "is held against the estimated reserved peak.",
        "表格的列名只写了 \"Memory(GiB)\"，没有说读的是哪个计数器；torchtitan 在那个提交的 "
        "train.py 记录的是 torch.cuda.max_memory_reserved()（每十步重置一次），所以这里把它当作"
        "已预留峰值：这是推断，不是来源写明的；与它比较的是估算的已预留峰值。")


def table(found: list[dict[str, Any]], lang: str) -> Markup:
    source = found[0]["point"].gpu.removeprefix("NVIDIA ")
    modelled_gpu = gpus.find(found[0]["point"].modelled_gpu).short_name
    headers = [_TEXT["job"][lang], _TEXT["published"][lang].format(gpu=source),
               _TEXT["estimated"][lang].format(gpu=modelled_gpu), _TEXT["ratio"][lang],
               _TEXT["commit"][lang]]
    body = [[escape(r["label"][lang]), f"{r['point'].published_gib:.1f}", gib(r["estimated"]),
             f"{r['ratio']:.3f}", f"`{r['commit'][:10]}`"]
            for r in found]
    return markdown_table(headers, body, numeric_from=1)


#: torchtitan's newest release, which needs a newer PyTorch than the one these runs use
#: (it calls torch.distributed.set_timeout, absent from 2.13).
NEWER_TORCHTITAN = "0.3.0"
#: Llama 3.1's vocabulary, which torchtitan's 8B model keeps with the shipped tokenizer.
LLAMA3_VOCABULARY = 128_256


def trainer_context(points: list[held_out_torchtitan.Point],
                    step_rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """torchtitan's own run of the rows (None: the file lists none): its rows, what they
    say beside the step estimate, the steps each ran."""
    found = trainer_rows(points, step_rows)
    if not found:
        return None
    ran = [p.estimate for p in points if p.estimate is not None]
    return {"rows": found, "said": trainer_said(found), "memory": memory(points[0]),
            "steps": sorted({r["steps"] for r in found if r["steps"] is not None}),
            # the versions each run recorded (the page names them; "?" before any ran)
            "versions": {name: ", ".join(sorted({e[name].split("+")[0] for e in ran
                                                  if e.get(name)})) or "?"
                         for name in ("torchtitan", "torch")},
            "newer": NEWER_TORCHTITAN, "vocabulary": LLAMA3_VOCABULARY}


def trainer_rows(points: list[held_out_torchtitan.Point],
                 step_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per point of torchtitan's run, beside the step estimate's row of the same id:
    its reserved peak and ratio, None where it has not yet run."""
    steps = {r["point"].id: r for r in step_rows}
    found = []
    for point in points:
        step = steps[point.id]
        report = point.estimate["report"] if point.estimate else None
        estimated = report[point.report] if report else None
        found.append({"point": point, "step_point": step["point"], "label": step["label"],
                      "gpus": point.gpus,
                      "published_gib": step["point"].published_gib,
                      "published": point.published_bytes, "estimated": estimated,
                      "ratio": None if estimated is None else estimated / point.published_bytes,
                      "step_ratio": step["ratio"],
                      "commit": point.estimate["commit"] if point.estimate else None,
                      "steps": report["steps"] if report else None})
    return found


def memory(point: held_out_torchtitan.Point) -> str:
    """The simulated GPU's memory as the command gives it, spaced: '96GiB' → '96 GiB'."""
    return re.sub(r"(?<=\d)(?=[A-Za-z])", " ", point.gpu_memory)


def _side(ratio: float) -> int:
    return (ratio > 1) - (ratio < 1)


def trainer_said(found: list[dict[str, Any]]) -> Words:
    """'On 8 GPUs torchtitan's run is over the published figure by 4.2 %, nearer to it than
    the step estimate (short by 6.9 %); …': each row's direction and gap, checked on its
    ratio, and which of the two runs is nearer; then, where the data says so, that the step
    estimate fell short of every published figure while this run is over every one (or the
    reverse). A row not yet run says so."""
    en, zh, last = [], [], None
    for row in found:
        count = row["gpus"]
        if row["ratio"] is None:
            en.append(f"on {count} GPUs torchtitan's trainer has not yet run")
            zh.append(f"{count} 块 GPU 的这一行 torchtitan 还没有运行")
            last = None
            continue
        side, gap = _side(row["ratio"]), pct(abs(row["ratio"] - 1), 1)
        if side == 0:
            en.append(f"on {count} GPUs torchtitan's run matches the published figure")
            zh.append(f"{count} 块 GPU 时 torchtitan 的运行与公开数字相同")
        elif side == last:  # the direction said once for the rows that share it
            en.append(f"on {count} GPUs it is {'over' if side > 0 else 'short'} by {gap}")
            zh.append(f"{count} 块 GPU 时{'高' if side > 0 else '低'} {gap}")
        else:
            en.append(f"on {count} GPUs torchtitan's run is "
                      f"{'over' if side > 0 else 'short of'} the published figure by {gap}")
            zh.append(f"{count} 块 GPU 时 torchtitan 的运行比公开数字{'高' if side > 0 else '低'} "
                      f"{gap}")
        last = side
        step = row["step_ratio"]
        step_side, step_gap = _side(step), pct(abs(step - 1), 1)
        step_en = ("equal to it" if step_side == 0 else
                   f"{'over' if step_side > 0 else 'short'} by {step_gap}")
        step_zh = ("与公开数字相同" if step_side == 0 else
                   f"{'高' if step_side > 0 else '低'} {step_gap}")
        nearer = (abs(step - 1) > abs(row["ratio"] - 1)) - (abs(step - 1) < abs(row["ratio"] - 1))
        en[-1] += {1: f", nearer to it than the step estimate ({step_en})",
                   0: f", as near to it as the step estimate ({step_en})",
                   -1: f", farther from it than the step estimate ({step_en})"}[nearer]
        zh[-1] += {1: f"，比步骤估算（{step_zh}）更接近", 0: f"，与步骤估算（{step_zh}）一样接近",
                   -1: f"，比步骤估算（{step_zh}）偏离更远"}[nearer]
    text = "; ".join(en)
    words = [text[0].upper() + text[1:] + ".", "；".join(zh) + "。"]
    ran = [r for r in found if r["ratio"] is not None]
    sides = {(_side(r["step_ratio"]), _side(r["ratio"])) for r in ran}
    if len(ran) == len(found) and sides in ({(-1, 1)}, {(1, -1)}):
        figures = {1: "the published figure", 2: "both published figures"}.get(
            len(ran), f"all {len(ran)} published figures")
        every = {1: "", 2: "两个"}.get(len(ran), f"{len(ran)} 个")
        if sides == {(-1, 1)}:
            words[0] += (f" The step estimate fell short of {figures} while torchtitan's run "
                         f"is over {'it' if len(ran) == 1 else 'them'}: each published figure "
                         f"lies between the two.")
            words[1] += (f"步骤估算低于{every}公开数字，torchtitan 的运行则高于它们：每个公开数字"
                         f"都落在两者之间。")
        else:
            words[0] += (f" The step estimate is over {figures} while torchtitan's run falls "
                         f"short of {'it' if len(ran) == 1 else 'them'}: each published figure "
                         f"lies between the two.")
            words[1] += (f"步骤估算高于{every}公开数字，torchtitan 的运行则低于它们：每个公开数字"
                         f"都落在两者之间。")
    return Words(*words)


def trainer_table(found: list[dict[str, Any]], lang: str) -> Markup:
    """The published figure beside torchtitan's run of it ("not yet run" where it has not)."""
    point = found[0]["point"]
    source = found[0]["step_point"].gpu.removeprefix("NVIDIA ")
    headers = [_TEXT["job"][lang], _TEXT["published"][lang].format(gpu=source),
               _TEXT["trainer"][lang].format(gpu=point.gpu, memory=memory(point)),
               _TEXT["ratio"][lang], _TEXT["ran"][lang]]
    body = [[escape(r["label"][lang]), f"{r['published_gib']:.1f}",
             _TEXT["not_run"][lang] if r["estimated"] is None else gib(r["estimated"]),
             "–" if r["ratio"] is None else f"{r['ratio']:.3f}",
             "–" if r["commit"] is None else f"`{r['commit'][:10]}`"]
            for r in found]
    return markdown_table(headers, body, numeric_from=1)
