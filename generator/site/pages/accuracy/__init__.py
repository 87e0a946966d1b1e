"""The accuracy page: this project's estimates held against real GPUs.

The development set is a published dataset of H100 runs (generator/results/reference_data/
SOURCE.md): for each configuration, the peaks a real H100 reported and PyTorch's own
MemTracker estimate. The estimate was developed against it, so the page also holds it
against published measurements it never saw (HELD_OUT.md), each estimated once before it was
compared. The suite's `[[reference]]` table estimates the development set's steps here; this
page joins each run with its estimate by experiment key and computes every ratio, error and
summary it prints.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from generator.allocator.blocks import ROUND_LARGE
from generator import gpus
from generator.results import held_out_as_written, held_out_torchtitan, reference_runs
from generator.results.shapes import StepResult, result_trust
from generator.site.pages import Page, PageModule
from generator.site.pages.accuracy import charts as accuracy_charts
from generator.site import held_out
from generator.site.held_out import as_written
from generator.site.pages.accuracy import multi_gpu, own_gpu, relations, validation
from generator.site.pages.accuracy import tables as accuracy_tables
from generator.site.stats import errors as stats

PAGES = (Page("accuracy.md", "accuracy/accuracy", nav=70),)
#: The targets the estimates are held to (issue "Accuracy against real GPUs"): every row's
#: allocated peak within 2 %, their median within 0.5 %; every reserved peak of a step
#: without checkpointing within 5 %, their median within 2 %.
TARGETS = {"active_worst": 0.02, "active_median": 0.005,
           "reserved_worst": 0.05, "reserved_median": 0.02}


def context(results: list[StepResult], studies: list[dict[str, Any]]) -> dict[str, Any] | None:
    best: dict[str, StepResult] = {}
    for result in results:
        if result.get("error") or not result.get("allocator"):
            continue
        current = best.get(result["key"])
        if current is None or result_trust(result) < result_trust(current):
            best[result["key"]] = result
    rows, skipped, missing, estimates = [], [], [], []
    for run in reference_runs.runs():
        if run.skipped:
            skipped.append(run)
        elif run.key in best:
            rows.append(row(run, best[run.key]))
            estimates.append(best[run.key])
        else:
            missing.append(run.name)
    if not rows:
        return None
    rows.sort(key=run_order)
    own_rows = sorted(own_gpu.rows(results, best), key=run_order)
    own = {"rows": own_rows, "summary": own_gpu.summary(own_rows)} if own_rows else None
    held_rows = held_out.rows(reference_runs.held_out())
    held = held_out.summary(held_rows)
    development_reserved = stats([r["reserved_ratio"] for r in rows])
    written = as_written.context(reference_runs.held_out(), held_out_as_written.points())
    return {"rows": rows, "skipped": skipped_by_model(skipped), "missing": missing,
            "summary": summary(rows), "twins": twins(rows), "segment_rounding": ROUND_LARGE,
            "cublas_workspace": gpus.for_device_name(
                reference_runs.GPU).cublas_workspace_bytes,
            # the run whose building left the most in the allocator's cache, for the prose
            "building": max((r for r in rows if r["freed_while_building"]), default=None,
                            key=lambda r: r["freed_while_building"]),
            "targets": TARGETS, "source": reference_runs.SOURCE,
            "gpu": reference_runs.GPU,
            "transformers": sorted({r["transformers"] or "?" for r in rows}),
            "their_transformers": reference_runs.TRANSFORMERS,
            # Estimated with the release the runs used: else the rows compare another step.
            "same_transformers": all((r["transformers"] or "").startswith(
                reference_runs.TRANSFORMERS + ".") for r in rows),
            "own": own,
            # what the development set lacks, and what its reserved peaks bound
            "gaps": relations.development_gaps([run.experiment()
                                                for run in reference_runs.runs()]),
            "reserved_bound": relations.reserved_bound(rows),
            "development_reserved": development_reserved,
            "held_out": {"rows": held_rows, "summary": held, "data": HELD_OUT_DATA,
                         "sources": held_out.by_source(held_rows),
                         "origin": held_out.origin(held),
                         "versus": relations.versus_development(held["errors"],
                                                                development_reserved)}
            if held else None,
            # the same points run as their authors wrote them (None: the file lists none)
            "as_written": {**written, "data": AS_WRITTEN_DATA} if written else None,
            # one GPU of a multi-GPU job, held against published per-GPU figures
            "multi_gpu": multi_gpu.context(reference_runs.multi_gpu_held_out(),
                                           reference_runs.multi_gpu_not_estimated(),
                                           held_out_torchtitan.points()),
            "multi_gpu_data": MULTI_GPU_DATA,
            # the newest `python -m generator validate`: whole grids the tests only sample
            "validation": validation.context(studies),
            # The results behind the numbers, for the page's list of data files
            # (site/sources.py): the estimates, and this project's own GPU runs.
            "sources": estimates + [r["result"] for r in own_rows]}


#: The held-out points as published with the site (data_files below), so that the page's list
#: of data files names them; their figures and estimates live in that one file.
HELD_OUT_FILE = reference_runs.HELD_OUT  # at the data folder's top: its folders hold results
HELD_OUT_DATA = {"json_path": f"../data/{HELD_OUT_FILE}"}
#: The held-out points run as written, with their commands, likewise.
AS_WRITTEN_DATA = {"json_path": f"../data/{held_out_as_written.AS_WRITTEN}"}
#: The multi-GPU points, the published rows they are drawn from and torchtitan's own run of
#: them, likewise.
MULTI_GPU_FILES = {name: name for name in (reference_runs.MULTI_GPU_HELD_OUT,
                                           reference_runs.MULTI_GPU,
                                           held_out_torchtitan.TORCHTITAN)}
MULTI_GPU_DATA = [{"json_path": f"../data/{path}"} for path in MULTI_GPU_FILES]


def data_files(ctx: dict[str, Any]) -> dict[str, str]:
    """The held-out points' files, published under data/ as the estimates are."""
    files = {}
    if ctx.get("held_out"):
        files[HELD_OUT_FILE] = (reference_runs.DATA / reference_runs.HELD_OUT).read_text(
            encoding="utf-8")
    if ctx.get("as_written"):
        files[held_out_as_written.AS_WRITTEN] = (
            held_out_as_written.DATA / held_out_as_written.AS_WRITTEN).read_text(encoding="utf-8")
    if ctx.get("multi_gpu"):
        files.update({path: (reference_runs.DATA / name).read_text(encoding="utf-8")
                      for path, name in MULTI_GPU_FILES.items()})
    return files


def run_order(row: dict[str, Any]) -> tuple:
    """Rows by model (the dataset's order), precision, checkpointing, batch, length."""
    return (list(reference_runs.DISPLAY_NAMES).index(row["family"]),
            ("FP", "MP", "HP").index(row["precision"]), row["checkpointing"],
            row["batch_size"], row["seq_len"])


def skipped_by_model(runs: list[reference_runs.ReferenceRun]) -> list[dict[str, Any]]:
    """The runs this project cannot build, one entry per model: its name, how many, why."""
    found: dict[str, dict[str, Any]] = {}
    for run in runs:
        entry = found.setdefault(run.model, {"model": reference_runs.DISPLAY_NAMES[run.model],
                                             "count": 0, "reason": run.skipped})
        entry["count"] += 1
    return list(found.values())


def row(run: reference_runs.ReferenceRun, result: StepResult) -> dict[str, Any]:
    """One run beside its estimate: real and estimated peaks, and their ratios."""
    allocator = result["allocator"]
    return {
        **accuracy_tables.run_fields(run),
        "real_active": run.active_peak_bytes, "real_reserved": run.reserved_peak_bytes,
        "active": allocator["peak_allocated_bytes"],
        "reserved": allocator["peak_reserved_bytes"],
        "active_ratio": allocator["peak_allocated_bytes"] / run.active_peak_bytes,
        "reserved_ratio": allocator["peak_reserved_bytes"] / run.reserved_peak_bytes,
        "memtracker": run.memtracker_bytes,
        "memtracker_ratio": (run.memtracker_bytes / run.active_peak_bytes
                             if run.memtracker_bytes else None),
        # what building the model on the GPU freed, cached when the first step started
        "freed_while_building": allocator.get("freed_while_building_bytes"),
        "key": result["key"], "notes": result.get("notes", []),
        "transformers": result["environment"].get("transformers"),
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Worst and median errors (|ratio − 1|), and which rows miss their target."""
    plain = [r for r in rows if not r["checkpointing"]]
    checkpointed = [r for r in rows if r["checkpointing"]]
    return {
        "active": stats([r["active_ratio"] for r in rows]),
        "reserved": stats([r["reserved_ratio"] for r in plain]),
        "reserved_ac": stats([r["reserved_ratio"] for r in checkpointed]),
        "memtracker": stats([r["memtracker_ratio"] for r in rows if r["memtracker_ratio"]]),
        "active_misses": [r for r in rows
                          if abs(r["active_ratio"] - 1) > TARGETS["active_worst"]],
        "reserved_misses": [r for r in plain if misses_reserved(r)],
        "reserved_ac_misses": [r for r in checkpointed if misses_reserved(r)],
    }


def misses_reserved(row: dict[str, Any]) -> bool:
    """Whether a run's reserved estimate is beyond the target for every run."""
    return abs(row["reserved_ratio"] - 1) > TARGETS["reserved_worst"]


def twins(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each run whose reserved peak misses its target, beside a run of the same model,
    precision and checkpointing with as many tokens per step whose estimate is within it:
    how far apart the pair's reserved peaks are on the GPU and in the estimate. A miss
    without such a twin is left out."""
    def step(r: dict[str, Any]) -> tuple:
        return (r["family"], r["precision"], r["checkpointing"], r["image_size"],
                r["batch_size"] * r["seq_len"])

    pairs = []
    for miss in filter(misses_reserved, rows):
        twin = next((r for r in rows if r is not miss and not misses_reserved(r)
                     and step(r) == step(miss)), None)
        if twin is not None:
            pairs.append({"miss": miss, "twin": twin,
                          "real_gap": miss["real_reserved"] / twin["real_reserved"] - 1,
                          "estimate_gap": miss["reserved"] / twin["reserved"] - 1})
    return pairs


def figures(ctx: dict[str, Any], lang: str) -> dict[str, str]:
    return {"accuracy-ratios": accuracy_charts.ratios(ctx, lang)}


def tables(ctx: dict[str, Any], lang: str) -> dict[str, Markup]:
    return {"accuracy-rows": accuracy_tables.rows_table(ctx["rows"], lang),
            "accuracy-summary": accuracy_tables.summary_table(ctx["summary"], ctx["targets"],
                                                              lang),
            **({"accuracy-own-gpu": own_gpu.table(ctx["own"]["rows"], lang)}
               if ctx["own"] else {}),
            # one table per source of held-out points
            **({f"accuracy-held-out-{group['source'].id}": held_out.table(group["rows"], lang)
                for group in ctx["held_out"]["sources"]} if ctx["held_out"] else {}),
            # one table per source of the points run as written
            **({f"accuracy-as-written-{group['source'].id}": as_written.table(group, lang)
                for group in ctx["as_written"]["sources"]} if ctx.get("as_written") else {}),
            **({"accuracy-multi-gpu": multi_gpu.table(ctx["multi_gpu"]["rows"], lang)}
               if ctx.get("multi_gpu") else {}),
            **({"accuracy-multi-gpu-torchtitan": multi_gpu.trainer_table(
                ctx["multi_gpu"]["trainer"]["rows"], lang)}
               if ctx.get("multi_gpu") and ctx["multi_gpu"]["trainer"] else {})}


PAGE_MODULE = PageModule(PAGES, context, figures=figures, tables=tables, data_files=data_files)
