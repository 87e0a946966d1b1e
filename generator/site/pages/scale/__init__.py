"""The scale page: one GPU's memory in a data-parallel step, FSDP2 against DDP, as the number
of GPUs grows; which categories shrink with sharding, and how many GPUs a model needs.

Data: results of the `sharding` study (generator/measure/studies/sharding.py), estimated, or
measured on GPUs by scripts/torchrun_sharding.py. Studies that differ only in the GPU counts and
strategies they cover are merged into one group, so the built-in suite's few points and an
optional whole sweep make one picture.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from markupsafe import Markup

from generator.plan import gpus
from generator.plan.fit import Verdict, judge
from generator.results.shapes import StudyResult
from generator.results.step import allocator_figures_on
from generator.site.labels import PRECISION_LABELS
from generator.site.pages import Page
from generator.site.pages.scale import sentences
from generator.site.pages.scale.charts import HEADROOM, scale_chart
from generator.site.pages.scale.tables import (
    STRATEGY_LABELS,
    STRATEGY_WORDS,
    compare_table,
    peak_table,
    plan_table,
    shrink_table,
)
from generator.words import Words

Study = StudyResult
PAGES = (Page("scale.md", "scale/scale", nav=60),)
GIB = 2**30
#: The GPUs the plan is read for (plan/gpus.py): one of each common size.
PLAN_GPUS = ("RTX 4090", "A100-SXM4-40GB", "H100 80GB HBM3")
#: The categories whose own maximum the shrink table follows: model state, then what each GPU
#: computes with (autocast's weight copies only where the step ran under autocast).
SHRINK_CATEGORIES = ("parameters", "gradients", "optimizer_state", "activations",
                     "autocast_copies")
#: Settings that make two studies comparable; world sizes and strategies may differ.
_SAME = ("model", "batch_size", "seq_len", "precision", "optimizer", "attention", "device")
#: ddp and fsdp2 run in one regime (the study's precision); fsdp2-mp, FSDP2's bf16
#: MixedPrecisionPolicy without autocast, is another and is compared with neither as a strategy.
STRATEGY_ORDER = ("ddp", "fsdp2", "fsdp2-mp")
PHASES = ("forward", "backward", "optimizer")
#: The GPU count DDP and FSDP2 are compared at, where measured: one node of 8 GPUs.
COMPARE_AT = 8
#: Where GPUs are counted, what the figures leave out: NCCL's own buffers. The default size is
#: NCCL's source (src/init.cc, DEFAULT_BUFFSIZE, 1 << 22), the variable its documentation's.
NCCL_DOCS = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-buffsize"
NCCL_SOURCE = "https://github.com/NVIDIA/nccl/blob/master/src/init.cc"
NCCL_NOTE = Words(
    "NCCL's own buffers are not in these figures: NCCL allocates them through the CUDA driver, "
    "outside PyTorch's caching allocator, as a communicator connects to its peers. Each "
    f"connection to a peer, on each channel, gets a buffer of [`NCCL_BUFFSIZE`]({NCCL_DOCS}) "
    f"bytes, 4 MiB by default ([NCCL's `src/init.cc`]({NCCL_SOURCE})), plus smaller ones for "
    "NCCL's low-latency protocols; how many channels and peers there are depends on the GPUs, "
    "their links and the job's size, so this page gives no total for them.",
    "NCCL 自己的缓冲区不在这些数字里：通信器与对端建立连接时，NCCL 直接通过 CUDA 驱动分配它们，"
    "不经过 PyTorch 的缓存分配器。每个通道上与每个对端的连接各有一块 "
    f"[`NCCL_BUFFSIZE`]({NCCL_DOCS}) 字节的缓冲区，默认 4 MiB（[NCCL 的 `src/init.cc`]"
    f"({NCCL_SOURCE})），低延迟协议另有较小的几块；通道和对端有多少，取决于 GPU、它们之间的"
    "连接和任务规模，所以本页不给它们的总量。")
NCCL_SHORT = Words("NCCL's communicator buffers, outside the caching allocator, come on top "
                   "of every figure here (see the note at the top of this page).",
                   "NCCL 通信器的缓冲区不在缓存分配器里，要加在这里每个数字之上"
                   "（见本页开头的说明）。")


def context(results: list[dict[str, Any]], studies: list[Study]) -> dict[str, Any] | None:
    groups = _groups([s for s in studies if s["study"]["kind"] == "sharding"
                      and not s.get("error") and s["data"].get("rows")])
    estimates = [g for g in groups if g["backend"] == "estimate"]
    # Real runs on GPUs (scripts/torchrun_sharding.py: each row has its ground truth) stand
    # beside the estimates. A real run on CPU processes (the script's dry run) checks the
    # script and is no subject for the page; nor is a [[study]] given backend "cuda", which
    # estimates like any other (run() is not told the backend) and has no ground truth.
    measured = [g for g in groups if g["backend"] == "cuda"
                and any(r.get("ground_truth") for r in g["rows"])]
    if not estimates and not measured:
        return None
    main = max(estimates or measured, key=lambda g: g["parameter_count"])
    others = [g for g in estimates if g is not main]
    measured = [g for g in measured if g is not main]
    groups = [main] + others + measured
    for group in measured:
        twin = next((g for g in estimates if g["settings"] == group["settings"]), None)
        group["comparison"] = _compare(group, twin) if twin else []
    return {"main": main, "others": others, "measured": measured, "groups": groups,
            "plan_gpus": [gpus.find(name) for name in PLAN_GPUS], "nccl": NCCL_NOTE,
            "nccl_short": NCCL_SHORT, "strategies": STRATEGY_WORDS,
            "short": STRATEGY_LABELS}


def figures(ctx: dict[str, Any], lang: str) -> dict[str, str]:
    return {f"scale-{g['id']}": scale_chart(g, lang) for g in ctx["groups"]}


def tables(ctx: dict[str, Any], lang: str) -> dict[str, Markup]:
    found: dict[str, Markup] = {}
    for g in ctx["groups"]:
        found[f"scale-peaks-{g['id']}"] = peak_table(g, lang)
        if g["shrink"]:
            found[f"scale-shrink-{g['id']}"] = shrink_table(g, lang)
        found[f"scale-plan-{g['id']}"] = plan_table(g, lang, g["regime"][lang])
        if g.get("comparison"):
            found[f"scale-compare-{g['id']}"] = compare_table(g, lang)
    return found


def regime_name(precision: str) -> Words:
    """What DDP and FSDP2 both ran under: autocast for the AMP precisions (fp32 parameters),
    else the precision itself."""
    if precision.startswith("amp-"):
        return Words(f"autocast {precision[4:]}", f"autocast {precision[4:]}")
    return PRECISION_LABELS[precision]


def verdict(row: dict[str, Any], gpu: gpus.GPU) -> Verdict | None:
    """Whether one rank's step fits `gpu`, by the one rule (plan/fit.py): its simulated
    reserved peak with that GPU's cuBLAS workspaces and the GPU's CUDA context; None for a
    row without the allocator's figures (a study of the CPU)."""
    allocator = row.get("allocator")
    if not allocator:
        return None
    allocated, reserved, context = allocator_figures_on(allocator, gpu,
                                                        what="the sharding study")
    return judge(gpu.memory_bytes, allocated=allocated, reserved=reserved, context=context,
                 gpu=gpu.name)


def _groups(studies: list[Study]) -> list[dict[str, Any]]:
    """Study results merged by settings and machine; rows keyed by strategy and GPU count
    (the first file in name order wins where two hold the same row)."""
    merged: dict[tuple, dict[str, Any]] = {}
    rows: dict[tuple, dict[tuple[str, int], dict[str, Any]]] = defaultdict(dict)
    for study in sorted(studies, key=lambda s: (s["environment"]["machine_id"],
                                                s["study"]["name"])):
        data = study["data"]
        settings = {k: data["settings"].get(k) for k in _SAME}
        key = (tuple(settings.items()), study["environment"]["machine_id"])
        merged.setdefault(key, {"settings": settings, "study": study, "data": data,
                                "sources": []})["sources"].append(study)
        for row in data["rows"]:
            rows[key].setdefault((row["strategy"], row["world_size"]), row)
    groups = [_group(entry, rows[key]) for key, entry in merged.items()]
    # a group whose every row failed has nothing to show
    return [g for g in groups if g["world_sizes"]]


def _group(entry: dict[str, Any], rows: dict[tuple[str, int], dict[str, Any]]
           ) -> dict[str, Any]:
    settings, study, data = entry["settings"], entry["study"], entry["data"]
    env = study["environment"]
    backend = study["study"]["backend"]
    ordered = sorted(rows.values(), key=lambda r: (STRATEGY_ORDER.index(r["strategy"]),
                                                    r["world_size"]))
    usable = [r for r in ordered if not r.get("error")]
    by = {s: [r for r in usable if r["strategy"] == s] for s in STRATEGY_ORDER}
    ident = "-".join([settings["model"], f"b{settings['batch_size']}",
                      f"s{settings['seq_len']}", settings["precision"]]
                     + list(dict.fromkeys([backend, env["machine_id"]])))
    group = {"id": "".join(c if c.isalnum() or c in ".-" else "-" for c in ident.lower()),
             **settings, "settings": settings, "backend": backend,
             "regime": regime_name(settings["precision"]),
             "machine": env.get("device_name") or env["machine_id"],
             "parameter_count": data["parameter_count"] or 0, "rows": ordered, "fsdp": by["fsdp2"],
             "ddp": by["ddp"], "mp": by["fsdp2-mp"],
             "failed": [r for r in ordered if r.get("error")],
             "world_sizes": sorted({r["world_size"] for r in usable}),
             # The studies whose rows the group shows, for the page's data files.
             "sources": entry["sources"]}
    group["phases"] = [{"phase": phase, "by": _phase_rows(by, phase)} for phase in PHASES
                       if any(r["peak_phase"] == phase for r in usable)]
    # The GPUs the chart marks: those whose memory lies within its axis
    top = max(r["peak_bytes"] for r in usable) if usable else 0
    group["gpu_lines"] = [gpu for gpu in map(gpus.find, PLAN_GPUS)
                          if gpu.memory_bytes <= top * HEADROOM]
    group["plan"] = [_plan(by, gpus.find(name)) for name in PLAN_GPUS] \
        if all(r.get("allocator") for r in usable) else []
    group.update(_ddp_figures(by["ddp"], group["parameter_count"]))
    group.update(_fsdp_figures(by["fsdp2"]))
    if by["ddp"] and by["fsdp2"]:
        ddp, fsdp = _pair(by["ddp"], by["fsdp2"])
        group["versus"] = {"ddp": ddp, "fsdp": fsdp, "gap": _gap(ddp, fsdp),
                           "factor": ddp["peak_bytes"] / fsdp["peak_bytes"]}
    group["words"] = _words(group, settings)
    return group


def _words(group: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """The group's relation sentences (sentences.py), each checked on its rows."""
    fsdp, mp = group["fsdp"], group["mp"]
    found: dict[str, Any] = {
        "ddp": sentences.ddp_count(group["ddp"]),
        "shrink": sentences.shrink(group["shrink"], cpu=settings["device"] == "cpu"),
        "last": sentences.last_doubling(fsdp), "mp_last": sentences.last_doubling(mp)}
    if fsdp:
        found["floor"] = sentences.floor(fsdp[0], fsdp[-1])
        found["levers"] = sentences.floor_levers(fsdp[-1], settings["batch_size"], mp)
    if "versus" in group:
        found["gap"] = sentences.strategy_gap(group["versus"])
    if fsdp and mp:
        autocast, policy = _pair(fsdp, mp)
        found["regime"] = sentences.regime_gap(autocast, policy)
    return found


def _ddp_figures(ddp: list[dict[str, Any]], parameter_count: int) -> dict[str, Any]:
    """DDP's peak (the same on any GPU count: the spread says how nearly) and its model state."""
    if not ddp:
        return {"ddp_peak": None, "ddp_spread": None}
    peaks = [r["peak_bytes"] for r in ddp]
    first = ddp[0]["category_max_bytes"]
    state = sum(first[c] for c in ("parameters", "gradients", "optimizer_state"))
    return {"ddp_peak": max(peaks), "ddp_spread": max(peaks) - min(peaks),
            "ddp_state": {"bytes": state, "buckets": first["comm_buffers"],
                          "per_parameter": state / parameter_count if parameter_count else 0}}


def _fsdp_figures(fsdp: list[dict[str, Any]]) -> dict[str, Any]:
    """FSDP2 (in the regime DDP ran in) from the fewest to the most GPUs measured: the peak's
    range, what is left at the most GPUs, and how each category shrank."""
    found: dict[str, Any] = {"shrink": _shrink(fsdp)}
    if fsdp:
        lo, hi = fsdp[0], fsdp[-1]
        floor = _floor(hi)
        found["fsdp_range"] = {"first": lo, "last": hi, "floor": floor,
                               "saving": 1 - hi["peak_bytes"] / lo["peak_bytes"],
                               # what sharding cannot touch is most of even the largest peak
                               "unshardable": floor["bytes"] >= lo["peak_bytes"] / 2}
    return found


def _shrink(fsdp: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each category's own maximum at the fewest and the most GPUs measured, against 1/N."""
    if len(fsdp) < 2:
        return []
    lo, hi = fsdp[0], fsdp[-1]
    ideal = hi["world_size"] / lo["world_size"]
    found = []
    for cat in SHRINK_CATEGORIES:
        a, b = lo["category_max_bytes"][cat], hi["category_max_bytes"][cat]
        if a:
            found.append({"category": cat, "first": a, "last": b, "factor": a / b if b else None,
                          "ideal": ideal, "shrinks": bool(b) and a / b > ideal ** 0.5})
    return found


def _phase_rows(by: dict[str, list[dict[str, Any]]], phase: str) -> list[dict[str, Any]]:
    """Per strategy, the GPU counts whose peak falls in `phase`."""
    found = [{"strategy": s, "world_sizes": [r["world_size"] for r in by[s]
                                             if r["peak_phase"] == phase]} for s in STRATEGY_ORDER]
    return [f for f in found if f["world_sizes"]]


def _pair(one: list[dict[str, Any]], other: list[dict[str, Any]]
          ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Rows of two strategies to set side by side: on one node's 8 GPUs where both were
    measured, else on the most GPUs both were measured on, else each one's first row."""
    a = {r["world_size"]: r for r in one}
    b = {r["world_size"]: r for r in other}
    common = sorted(set(a) & set(b))
    if not common:
        return one[0], other[0]
    n = COMPARE_AT if COMPARE_AT in common else common[-1]
    return a[n], b[n]


def _gap(ddp: dict[str, Any], fsdp: dict[str, Any]) -> dict[str, int]:
    """Where DDP's peak exceeds FSDP2's (both in one regime), live at the peak: model state,
    communication buffers, and what the compute keeps (activations, autocast copies,
    temporaries)."""
    a, b = ddp["live_at_peak_bytes"], fsdp["live_at_peak_bytes"]
    parts = {"state": ("parameters", "gradients", "optimizer_state"), "buffers": ("comm_buffers",),
             "compute": ("activations", "autocast_copies", "temporaries")}
    found = {name: sum(a[c] - b[c] for c in cats) for name, cats in parts.items()}
    return {"total": ddp["peak_bytes"] - fsdp["peak_bytes"], **found}


def _floor(row: dict[str, Any]) -> dict[str, Any]:
    """What sharding cannot take away: what is live at the peak beyond the model state."""
    live = row["live_at_peak_bytes"]
    rest = row["peak_bytes"] - sum(live[c] for c in ("parameters", "gradients",
                                                     "optimizer_state"))
    return {"bytes": rest, "share": rest / row["peak_bytes"], "activations": live["activations"]}


def _plan(by: dict[str, list[dict[str, Any]]], gpu: gpus.GPU) -> dict[str, Any]:
    """For one GPU: the fewest GPUs measured under FSDP2 whose step fits it by the one rule
    (under autocast, and with FSDP2's bf16 policy), and whether a DDP step fits at all (its
    per-GPU memory does not depend on the count)."""
    ddp = by["ddp"][0] if by["ddp"] else None
    ddp_verdict = verdict(ddp, gpu) if ddp else None
    return {"gpu": gpu, **_fewest(by["fsdp2"], gpu, "fsdp"), **_fewest(by["fsdp2-mp"], gpu, "mp"),
            "ddp": ddp, "ddp_fits": ddp_verdict is not None and ddp_verdict.fits,
            "ddp_needed": ddp_verdict.needed_bytes if ddp_verdict else None}


def _fewest(rows: list[dict[str, Any]], gpu: gpus.GPU, key: str) -> dict[str, Any]:
    """The fewest of `rows`' GPU counts whose step fits `gpu`, under `key` (fsdp, mp)."""
    fits = [r for r in rows if verdict(r, gpu).fits]
    below = [r for r in rows if fits and r["world_size"] < fits[0]["world_size"]]
    return {key: fits[0] if fits else None,
            f"{key}_needed": verdict(fits[0], gpu).needed_bytes if fits else None,
            # the most GPUs measured that are still too few: the answer lies above it
            f"{key}_too_few": below[-1] if below else None,
            # the fewest GPUs that fit, or an upper bound when no smaller count was measured
            f"{key}_exact": bool(fits) and (bool(below) or fits[0]["world_size"] == 1)}


def _compare(measured: dict[str, Any], estimate: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows measured on GPUs beside the estimate of the same strategy and GPU count."""
    index = {(r["strategy"], r["world_size"]): r for r in estimate["rows"] if not r.get("error")}
    found = []
    for row in measured["rows"]:
        twin = index.get((row["strategy"], row["world_size"]))
        truth = (row.get("ground_truth") or {}).get("peak_bytes")
        if twin and truth and not row.get("error"):
            found.append({"strategy": row["strategy"], "world_size": row["world_size"],
                          "estimate": twin["peak_bytes"], "measured": truth,
                          "error": twin["peak_bytes"] / truth - 1})
    return found
