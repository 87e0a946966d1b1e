"""The scale page: one GPU's memory in a training step spread over N GPUs, per strategy (DDP,
FSDP2, FSDP2 with its mixed-precision policy, and HSDP or tensor parallelism where estimated);
which categories shrink as N grows and which do not, where the per-GPU memory stops falling,
whether each GPU of the catalogue holds a rank, and the fewest GPUs that do.

Data: plain step results (suite scale.toml), each one rank of a multi-GPU job estimated by
the one engine (measure/training/parallel.py; its experiment's `gpus` and `parallel`), beside
the same step on one GPU with no strategy. Results that differ only in how the step is shared
out (gpus, parallel and FSDP2's options) and in the precision regime make one group; within it
each way of sharing is a line over N. Every verdict is Estimate.fits (plan/fit.py).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from markupsafe import Markup

from generator.experiment.strategies import GROUP_OPTIONS, STRATEGIES
from generator.experiment.suite import DEFAULT_SUITE
from generator import gpus
from generator.errors import GeneratorError
from generator.plan.fit import Verdict
from generator.results.shapes import StepResult
from generator.results.api_types import StepMemory
from generator.site.escaping import written
from generator.site.labels import PRECISION_LABELS
from generator.site.pages import Page, PageModule
from generator.experiment.suite import suite_keys
from generator.site.pages.scale import sentences, tensor_parallel
from generator.site.pages.scale.charts import HEADROOM, lines_chart, scale_chart
from generator.site.pages.scale.tables import (
    fewest_table,
    peak_table,
    shrink_table,
    strategy_words,
    verdict_table,
)
from generator.site.derived import peak_phase
from generator.words import Words

Result = StepResult
PAGES = (Page("scale.md", "scale/scale", nav=60),)
SUITE = DEFAULT_SUITE / "scale.toml"
GIB = 2**30
#: The GPUs each rank is judged on (gpus.py): one of each common size.
PLAN_GPUS = ("RTX 4090", "A100-SXM4-40GB", "H100 80GB HBM3")
#: The categories whose own maximum the shrink table follows: model state, then what each GPU
#: computes with (autocast's weight copies only where the step ran under autocast).
SHRINK_CATEGORIES = ("parameters", "gradients", "optimizer_state", "activations",
                     "autocast_copies")
STATE = ("parameters", "gradients", "optimizer_state")
#: The experiment's fields that say how the step is shared out, and its precision regime:
#: results that differ in these alone are one group's points.
LINE_FIELDS = ("gpus", "parallel", "precision", "fsdp_mixed_precision", "shard_size", "tp_size",
               "reshard_after_forward", "cpu_offload")
#: The order of the lines: one GPU, then the strategies in one regime, then FSDP2's policy.
ORDER = ("single", *STRATEGIES)
PHASES = ("forward", "backward", "optimizer")
#: Bytes of a weight (and of its gradient) by precision: FP32 weights except under the pure
#: 16-bit precisions.
WEIGHT_BYTES = {"bf16": 2, "fp16": 2}
#: The GPU count strategies are compared at where both have it: one node of 8 GPUs.
COMPARE_AT = 8
#: Where GPUs are counted: NCCL's communicators, outside the caching allocator, are a stated
#: range in nvidia-smi's figure and in the fit rule (gpus.py NCCL_COMMUNICATOR_BYTES).
NCCL_LOW, NCCL_HIGH = gpus.NCCL_COMMUNICATOR_BYTES
NCCL_LINKS = ", ".join(f"[NVIDIA/nccl#{url.rsplit('/', 1)[1]}]({url})" for url in gpus.NCCL_SOURCES)


def _nccl_words() -> Words:
    from generator.units import size

    low, high = size(NCCL_LOW), size(NCCL_HIGH)
    return Words(
        "NCCL's own buffers are outside PyTorch's caching allocator, so no tensor and no "
        "reserved peak here holds them. They are counted as a stated range: each NCCL "
        f"communicator a rank uses (one per dimension of its device mesh) takes {low} to "
        f"{high} of device memory ({NCCL_LINKS}), added to the CUDA context's range in the "
        "nvidia-smi figure and in the fit rule. How much a communicator really takes depends on "
        "the channels NCCL opens, the GPUs' links and `NCCL_BUFFSIZE`.",
        "NCCL 自己的缓冲区不在 PyTorch 的缓存分配器里，所以这里的张量和已预留峰值都不含它们。"
        f"它们按一个注明来源的范围计入：一个 rank 用到的每个 NCCL 通信器（设备网格每一维一个）"
        f"占 {low} 到 {high} 显存（{NCCL_LINKS}），与 CUDA 上下文的范围相加，"
        "算进 nvidia-smi 的数字和是否放得下的判断。一个通信器实际占多少，取决于 NCCL 开的通道数、"
        "GPU 之间的连接和 `NCCL_BUFFSIZE`。")


NCCL_NOTE = written(_nccl_words())


def own_results(results: list[Result]) -> set[str]:
    """The ranks of multi-GPU steps, and the scale suite's steps that no other suite file
    measures: only this page shows them (the reports would otherwise list every rank)."""
    others: set[str] = set()
    for path in sorted(DEFAULT_SUITE.glob("*.toml")):
        if path != SUITE:
            others |= suite_keys(path)
    mine = suite_keys(SUITE) - others if SUITE.exists() else frozenset()
    return {r["key"] for r in results
            if r["experiment"].get("parallel", "none") != "none" or r["key"] in mine}


def context(results: list[Result], studies: list[dict[str, Any]]) -> dict[str, Any] | None:
    groups = _groups([r for r in results if r["backend"] == "estimate" and not r.get("error")])
    if not groups:
        return None
    groups.sort(key=lambda g: -g["parameter_count"])
    return {"main": groups[0], "others": groups[1:], "groups": groups,
            "plan_gpus": [gpus.find(name) for name in PLAN_GPUS], "nccl": NCCL_NOTE}


def figures(ctx: dict[str, Any], lang: str) -> dict[str, str]:
    found = {}
    for g in ctx["groups"]:
        found[f"scale-lines-{g['id']}"] = lines_chart(g, lang)
        found[f"scale-{g['id']}"] = scale_chart(g, lang)
    return found


def tables(ctx: dict[str, Any], lang: str) -> dict[str, Markup]:
    found: dict[str, Markup] = {}
    for g in ctx["groups"]:
        found[f"scale-peaks-{g['id']}"] = peak_table(g, lang)
        if g["shrink"]:
            found[f"scale-shrink-{g['id']}"] = shrink_table(g, lang)
        if g["plan"]:
            found[f"scale-verdicts-{g['id']}"] = verdict_table(g, lang)
            found[f"scale-fewest-{g['id']}"] = fewest_table(g, lang)
    return found


def regime_name(precision: str, policy: str = "none") -> Words:
    """A line's precision regime: autocast for the AMP precisions (fp32 parameters), FSDP2's
    mixed-precision policy (param/reduce dtypes, no autocast), else the precision itself."""
    if policy != "none":
        param, reduce = policy.split("/")
        return Words(f"FSDP2 policy: {param} weights gathered, gradients reduced in {reduce}, "
                     "no autocast",
                     f"FSDP2 策略：权重以 {param} 聚合，梯度以 {reduce} 归约，不开 autocast")
    if precision.startswith("amp-"):
        return Words(f"autocast {precision[4:]}", f"autocast {precision[4:]}")
    return PRECISION_LABELS[precision]


def verdict(row: dict[str, Any], gpu: gpus.GPU) -> Verdict | None:
    """Whether one rank's step fits `gpu`: Estimate.fits, the one rule (plan/fit.py), on the
    allocator's figures replayed with that GPU's cuBLAS workspaces and its CUDA context plus
    the rank's NCCL communicators; None for a result without the allocator's figures."""
    step = StepMemory.from_dict(row["result"], copy=False)
    if step.reserved_bytes is None:
        return None
    return step.fits(gpu.name)


def line_of(exp: dict[str, Any], precision: str) -> str:
    """The line a result belongs to: its strategy, with FSDP2's options and, where it is not
    the group's, its precision (`precision`: the group's)."""
    if exp["parallel"] == "none":
        return "single"
    name = exp["parallel"]
    if exp.get("fsdp_mixed_precision", "none") != "none":
        name += "-mp-" + exp["fsdp_mixed_precision"]
    elif exp["precision"] != precision:
        name += "-" + exp["precision"]
    if exp.get("reshard_after_forward") is False:
        name += "-no-reshard"
    if exp.get("cpu_offload"):
        name += "-offload"
    for field in GROUP_OPTIONS:  # the group sizes the strategies' records name
        if exp.get(field):
            name += f"-{field.split('_')[0]}{exp[field]}"
    return name


def starts_from_one_gpu(exp: dict[str, Any], precision: str) -> bool:
    """Whether a line's strategy on one GPU is the plain step on one GPU, so that its series
    starts there: DDP, FSDP2 and TP in the group's regime (one replica, one shard, one TP
    rank hold the whole model). Not FSDP2 with CPU offload (on one GPU its state would still
    be in host memory: no such step was estimated), FSDP2's mixed-precision policy (another
    regime), nor a line with fixed groups of GPUs (HSDP's shard groups, FSDP2 × TP's TP
    groups), whose fewest GPUs are one group."""
    strategy = STRATEGIES.get(exp["parallel"])
    return (strategy is not None and strategy.group is None and exp["precision"] == precision
            and exp.get("fsdp_mixed_precision", "none") == "none"
            and not exp.get("cpu_offload")
            and not any(exp.get(field) for field in GROUP_OPTIONS))


def replayed_for(rows: list[dict[str, Any]]) -> str | None:
    """The GPU whose cuBLAS workspaces the rows' reserved peaks were replayed with (the
    allocator's `gpu`), by its short name, where every row names the same one; else None
    (the table then names none)."""
    names = {(r["result"].get("allocator") or {}).get("gpu") for r in rows}
    if len(names) != 1 or None in names:
        return None
    [name] = names
    try:
        return gpus.find(name).short_name
    except GeneratorError:
        return name


def _setup(result: Result) -> tuple:
    exp = result["experiment"]
    return (tuple(sorted((k, str(v)) for k, v in exp.items() if k not in LINE_FIELDS)),
            result["environment"]["machine_id"])


def _groups(results: list[Result]) -> list[dict[str, Any]]:
    """Multi-GPU results by setup, each with the same step on one GPU where present."""
    ranks: dict[tuple, list[Result]] = defaultdict(list)
    singles: dict[tuple, list[Result]] = defaultdict(list)
    for result in results:
        parallel = result["experiment"].get("parallel", "none")
        (singles if parallel == "none" else ranks)[_setup(result)].append(result)
    return [_group(members, singles.get(key, [])) for key, members in sorted(ranks.items())]


def _row(result: Result, line: str) -> dict[str, Any]:
    allocator = result.get("allocator") or {}
    live = {"comm_buffers": 0, **result["live_at_peak_bytes"]}
    return {"strategy": line, "world_size": result["experiment"].get("gpus", 1),
            "peak_bytes": result["peak_bytes"],
            "reserved_bytes": allocator.get("peak_reserved_bytes"),
            "live_at_peak_bytes": live,
            "category_max_bytes": {"comm_buffers": 0, **result["category_max_bytes"]},
            "peak_phase": peak_phase(result),
            # the same rank replayed with other cuBLAS workspaces: {workspace bytes: reserved}
            "workspace_bytes": allocator.get("workspace_bytes"),
            "replays": {o["workspace_bytes"]: o["peak_reserved_bytes"]
                        for o in allocator.get("other_workspaces") or []},
            # the GPUs of its TP group (its mesh's "tp"), None without TP
            "tp_size": ((result.get("parallel") or {}).get("mesh") or {}).get("tp"),
            "result": result}


def _group(members: list[Result], singles: list[Result]) -> dict[str, Any]:
    # the group's precision: that of its strategies without FSDP2's policy (most of them)
    plain = [r["experiment"]["precision"] for r in members
             if r["experiment"].get("fsdp_mixed_precision", "none") == "none"]
    precision = max(sorted(set(plain)), key=plain.count) if plain else \
        members[0]["experiment"]["precision"]
    one = [r for r in singles if r["experiment"]["precision"] == precision]
    rows = [_row(r, line_of(r["experiment"], precision)) for r in members + one[:1]]
    rows.sort(key=lambda r: (_line_order(r["strategy"]), r["world_size"]))
    lines: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        lines.setdefault(row["strategy"], []).append(row)
    first = (one or members)[0]
    exp = first["experiment"]
    ident = "-".join([exp["model"], f"b{exp['batch_size']}", f"s{exp['seq_len']}", precision]
                     + (["ckpt"] if exp.get("checkpointing") else []))
    single = lines.get("single", [])
    group: dict[str, Any] = {
        "id": "".join(c if c.isalnum() or c in ".-" else "-" for c in ident.lower()),
        "model": exp["model"], "batch_size": exp["batch_size"], "seq_len": exp["seq_len"],
        "precision": precision, "optimizer": exp["optimizer"], "attention": first["attention"],
        "checkpointing": exp.get("checkpointing", False), "backend": "estimate",
        "device": exp["device"], "regime": regime_name(precision),
        "architecture": first.get("architecture") or {},
        "parameter_count": first.get("parameter_count") or 0, "rows": rows,
        "single": single[0] if single else None,
        "lines": [{"id": line, "words": strategy_words(line, lines[line][0]["result"]),
                   "rows": line_rows, "policy": "-mp-" in line,
                   # a line starts from the step on one GPU only where that step is its
                   # strategy on one GPU (starts_from_one_gpu)
                   "series": (single if line != "single" and
                              starts_from_one_gpu(line_rows[0]["result"]["experiment"],
                                                  precision) else [])
                   + line_rows}
                  for line, line_rows in lines.items()],
        "world_sizes": sorted({r["world_size"] for r in rows}),
        "replayed_for": replayed_for(rows),
        # the results the page shows, for its data files
        "sources": [r["result"] for r in rows]}
    by = {line["id"]: line for line in group["lines"]}
    fsdp = by.get("fsdp2", {}).get("series", [])
    ddp = by.get("ddp", {}).get("rows", [])
    policy = next((line for line in group["lines"] if line["policy"]), None)
    group.update(fsdp=fsdp, ddp=ddp, mp=policy["rows"] if policy else [],
                 policy_words=_policy_name(policy["rows"][0]["result"]) if policy else None)
    group["phases"] = [{"phase": phase, "by": _phase_rows(group["lines"], phase)}
                       for phase in PHASES if any(r["peak_phase"] == phase for r in rows)]
    top = max(r["reserved_bytes"] or r["peak_bytes"] for r in rows)
    group["gpu_lines"] = [gpu for gpu in map(gpus.find, PLAN_GPUS)
                          if gpu.memory_bytes <= top * HEADROOM]
    plan_gpus = [gpus.find(name) for name in PLAN_GPUS]
    group["plan"] = [_plan(group["lines"], gpu) for gpu in plan_gpus] \
        if all(r["reserved_bytes"] is not None for r in rows) else []
    group["verdicts"] = [{"row": r, "verdicts": [verdict(r, gpu) for gpu in plan_gpus]}
                         for r in rows] if group["plan"] else []
    group.update(_fsdp_figures(fsdp))
    if ddp and fsdp:
        a, b = _pair(ddp, [r for r in fsdp if r["strategy"] != "single"] or fsdp)
        group["versus"] = {"ddp": a, "fsdp": b, "gap": _gap(a, b),
                           "factor": _reserved(a) / _reserved(b)}
    group["words"] = _words(group)
    return group


def _policy_name(result: Result) -> Words:
    policy = result["experiment"]["fsdp_mixed_precision"]
    return Words(f"FSDP2's {policy} mixed-precision policy",
                 f"FSDP2 的 {policy} 混合精度策略")


def _line_order(line: str) -> tuple[int, str]:
    base = next((s for s in sorted(ORDER, key=len, reverse=True) if line.startswith(s)), line)
    return (ORDER.index(base) if base in ORDER else len(ORDER)) + (10 if "-mp-" in line else 0), \
        line


def _reserved(row: dict[str, Any]) -> int:
    return row["reserved_bytes"] if row["reserved_bytes"] is not None else row["peak_bytes"]


def _words(group: dict[str, Any]) -> dict[str, Any]:
    """The group's relation sentences (sentences.py), each checked on its rows."""
    fsdp, mp = group["fsdp"], group["mp"]
    first = group["sources"][0]
    found: dict[str, Any] = {
        "trained": sentences.trained(first.get("parameter_count") or 0,
                                     first.get("trainable_parameter_count")),
        "ddp": sentences.ddp_count(group["ddp"]),
        "ddp_state": sentences.ddp_state(group["ddp"][0], group["parameter_count"])
        if group["ddp"] else None,
        "shrink": sentences.shrink(group["shrink"], cpu=group["device"] == "cpu"),
        "stops": sentences.stops_falling(fsdp, sentences.FSDP2),
        "mp_stops": sentences.stops_falling(mp, group["policy_words"]) if mp else None,
        "rises": [w for line in group["lines"] if line["id"] != "single"
                  for w in [sentences.reserved_moves(line["rows"], line["words"])] if w]}
    if fsdp:
        found["floor"] = sentences.floor(fsdp[0], fsdp[-1])
        found["levers"] = sentences.floor_levers(fsdp[-1], group["batch_size"], mp,
                                                 checkpointing=group["checkpointing"])
    if "versus" in group:
        found["gap"] = sentences.strategy_gap(group["versus"])
    if fsdp and mp:
        autocast, policy = _pair([r for r in fsdp if r["strategy"] != "single"] or fsdp, mp)
        found["regime"] = sentences.regime_gap(autocast, policy, group["policy_words"])
    by = {line["id"]: line for line in group["lines"]}
    found["tp"] = [w for line in ("tp", "fsdp2-tp") if line in by and fsdp
                   for w in [tensor_parallel.tensor_parallel(fsdp, by[line]["rows"],
                                                       by[line]["words"],
                                                       checkpointing=group["checkpointing"])]
                   if w]
    arch = group["architecture"]
    found["tp_gradients"] = tensor_parallel.tp_gradients(
        by["tp"]["rows"], by["tp"]["words"], arch["vocab"] * arch["hidden"] *
        WEIGHT_BYTES.get(group["precision"], 4)) \
        if "tp" in by and arch.get("vocab") and arch.get("hidden") else None
    found["offload"] = sentences.cpu_offload(fsdp, by["fsdp2-offload"]["rows"]) \
        if fsdp and "fsdp2-offload" in by else None
    return found


def _fsdp_figures(fsdp: list[dict[str, Any]]) -> dict[str, Any]:
    """FSDP2 (in the group's regime, from one GPU where estimated) from the fewest GPUs to the
    most: the reserved peak's range, what is left at the most GPUs, how each category shrank."""
    found: dict[str, Any] = {"shrink": _shrink(fsdp)}
    if fsdp:
        lo, hi = fsdp[0], fsdp[-1]
        found["fsdp_range"] = {"first": lo, "last": hi, "floor": _floor(hi),
                               "saving": 1 - _reserved(hi) / _reserved(lo)}
    return found


def _shrink(fsdp: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each category's own maximum at the fewest and the most GPUs estimated, against 1/N."""
    if len(fsdp) < 2:
        return []
    lo, hi = fsdp[0], fsdp[-1]
    ideal = hi["world_size"] / lo["world_size"]
    found = []
    for cat in SHRINK_CATEGORIES:
        a, b = lo["category_max_bytes"].get(cat, 0), hi["category_max_bytes"].get(cat, 0)
        if a:
            found.append({"category": cat, "first": a, "last": b,
                          "factor": a / b if b else None, "ideal": ideal,
                          "shrinks": bool(b) and a / b > ideal ** 0.5})
    return found


def _phase_rows(lines: list[dict[str, Any]], phase: str) -> list[dict[str, Any]]:
    """Per line, the GPU counts whose peak falls in `phase`."""
    found = [{"words": line["words"], "single": line["id"] == "single",
              "world_sizes": [r["world_size"] for r in line["rows"]
                                                      if r["peak_phase"] == phase]}
             for line in lines]
    return [f for f in found if f["world_sizes"]]


def _pair(one: list[dict[str, Any]], other: list[dict[str, Any]]
          ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Rows of two lines to set side by side: on one node's 8 GPUs where both were estimated,
    else on the most GPUs both were estimated on, else each one's first row."""
    a = {r["world_size"]: r for r in one}
    b = {r["world_size"]: r for r in other}
    common = sorted(set(a) & set(b))
    if not common:
        return one[0], other[0]
    n = COMPARE_AT if COMPARE_AT in common else common[-1]
    return a[n], b[n]


def _gap(ddp: dict[str, Any], fsdp: dict[str, Any]) -> dict[str, int]:
    """Where DDP's tensors' peak exceeds FSDP2's (one regime), live at the peak: model state,
    communication buffers, and what the compute keeps (activations, autocast copies,
    temporaries)."""
    a, b = ddp["live_at_peak_bytes"], fsdp["live_at_peak_bytes"]
    parts = {"state": STATE, "buffers": ("comm_buffers",),
             "compute": ("activations", "autocast_copies", "temporaries")}
    found = {name: sum(a.get(c, 0) - b.get(c, 0) for c in cats) for name, cats in parts.items()}
    return {"total": ddp["peak_bytes"] - fsdp["peak_bytes"], **found}


def _floor(row: dict[str, Any]) -> dict[str, Any]:
    """What sharding cannot take away: what is live at the peak beyond the model state."""
    live = row["live_at_peak_bytes"]
    rest = row["peak_bytes"] - sum(live.get(c, 0) for c in STATE)
    return {"bytes": rest, "share": rest / row["peak_bytes"],
            "activations": live.get("activations", 0)}


def _plan(lines: list[dict[str, Any]], gpu: gpus.GPU) -> dict[str, Any]:
    """For one GPU: per line, the fewest GPU counts estimated whose rank fits it by the one
    rule, and the verdict on the count below it."""
    return {"gpu": gpu, "lines": [{"line": line, **fewest(line["series"] or line["rows"],
                                                          lambda r: verdict(r, gpu))}
                                  for line in lines if line["id"] != "single"]}


def fewest(rows: list[dict[str, Any]], judge) -> dict[str, Any]:
    """The fewest of `rows`' GPU counts whose rank fits (judge(row): its Verdict; "fits" is
    the verdict's "yes"), what it needs there, and the verdict on the most GPUs estimated
    below it, in the verdict's own word (may fit, only just, does not fit); `unestimated`:
    the GPU counts below the fewest that no row holds, as (first, last) powers of two, None
    where the count below was estimated (or the fewest is 1). With no count that fits, the
    verdict on the most GPUs estimated."""
    fits = [r for r in rows if judge(r).fits]
    found: dict[str, Any] = {"fewest": fits[0] if fits else None, "needed": None,
                             "below": None, "below_verdict": None, "unestimated": None,
                             "most": rows[-1]["world_size"], "most_verdict": judge(rows[-1])}
    if not fits:
        return found
    n = fits[0]["world_size"]
    found["needed"] = judge(fits[0]).needed_bytes
    below = [r for r in rows if r["world_size"] < n]
    if below:
        found["below"], found["below_verdict"] = below[-1], judge(below[-1])
    lowest = 2 * below[-1]["world_size"] if below else 1
    if lowest <= n // 2:  # counts between (powers of two) that were not estimated
        found["unestimated"] = (lowest, n // 2)
    return found


PAGE_MODULE = PageModule(PAGES, context, figures=figures, tables=tables, own_results=own_results)
