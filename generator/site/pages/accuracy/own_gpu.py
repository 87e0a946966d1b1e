"""The accuracy page's second yardstick: the published runs' steps measured on a GPU by this
project itself (generator/experiment/suites/optional/validation-cuda.toml), each beside its
estimate.

Unlike the published H100 runs, these ran the very code the estimate models (the same step,
the same transformers), so what separates the two is the estimate's own error. A result
appears here once a `cuda` result of a reference run's step exists in the results folder.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from generator.results import reference_runs
from generator.results.shapes import StepResult
from generator.site.escaping import markdown_text as escape
from generator.site.pages.accuracy import tables as accuracy_tables
from generator.site.stats import errors as stats
from generator.site.tables import markdown_table
from generator.units import gib
from generator.words import Words


def rows(results: list[StepResult],
         estimates: dict[str, StepResult]) -> list[dict[str, Any]]:
    """One row per reference run measured on a GPU here (first machine by name if several):
    what the GPU reported over the run's five steps, the estimate, their ratios."""
    measured: dict[str, StepResult] = {}
    for result in sorted(results, key=lambda r: r["environment"].get("machine_id", "")):
        if result["experiment"]["backend"] == "cuda":
            measured.setdefault(result["key"], result)
    found = []
    for run in reference_runs.runs():
        result = measured.get(run.key_on("cuda"))
        if result is not None:
            found.append(row(run, result, estimates.get(run.key)))
    return found


def row(run: reference_runs.ReferenceRun, result: StepResult,
        estimate: StepResult | None) -> dict[str, Any]:
    environment = result["environment"]
    found: dict[str, Any] = {
        **accuracy_tables.run_fields(run),
        "gpu": environment.get("device_name") or environment.get("machine_id", "?"),
        "torch": environment.get("torch"), "transformers": environment.get("transformers"),
        "out_of_memory": result.get("error") == "out_of_memory",
        "active": None, "reserved": None, "estimate_active": None, "estimate_reserved": None,
        "estimate_torch": None, "estimate_transformers": None, "active_ratio": None,
        "reserved_ratio": None, "h100_active_ratio": None, "h100_reserved_ratio": None,
        "result": result,
    }
    truth = result.get("ground_truth")
    if truth and not result.get("error"):
        # the five steps' peaks; older results hold the measured step's alone
        found["active"] = truth.get("steps_peak_bytes", truth["peak_bytes"])
        found["reserved"] = truth.get("steps_max_reserved_bytes", truth["max_reserved_bytes"])
        found["h100_active_ratio"] = found["active"] / run.active_peak_bytes
        found["h100_reserved_ratio"] = found["reserved"] / run.reserved_peak_bytes
        allocator = (estimate or {}).get("allocator")
        if allocator:
            found["estimate_transformers"] = estimate["environment"].get("transformers")
        if allocator and found["estimate_transformers"] == found["transformers"]:
            # (another transformers runs another step: 4.46 copies the logits for the loss,
            # 5.x does not; such a pair gets no ratio)
            found["estimate_torch"] = estimate["environment"].get("torch")
            found["estimate_active"] = allocator["peak_allocated_bytes"]
            found["estimate_reserved"] = allocator["peak_reserved_bytes"]
            found["active_ratio"] = found["estimate_active"] / found["active"]
            found["reserved_ratio"] = found["estimate_reserved"] / found["reserved"]
    return found


def summary(found: list[dict[str, Any]]) -> dict[str, Any]:
    """Worst and median |estimate ÷ measured − 1|, allocated over every row, reserved over
    the rows without checkpointing (as the published runs' summary counts them)."""
    compared = [r for r in found if r["active_ratio"] is not None]
    return {
        "active": stats([r["active_ratio"] for r in compared]),
        "reserved": stats([r["reserved_ratio"] for r in compared if not r["checkpointing"]]),
        "gpus": sorted({r["gpu"] for r in found}),
        "torch": sorted({r["torch"] or "?" for r in found}),
        "transformers": sorted({r["transformers"] or "?" for r in found}),
        "estimate_torch": sorted({r["estimate_torch"] for r in compared}),
        "out_of_memory": [r for r in found if r["out_of_memory"]],
        "other_transformers": [r for r in found if r["estimate_transformers"]
                               and r["estimate_transformers"] != r["transformers"]],
    }


_TEXT: dict[str, Words] = {
    "run": Words("Run", "运行"), "gpu": Words("GPU", "GPU"),
    "active": Words("GPU allocated (GiB)", "GPU 已分配 (GiB)"),
    "reserved": Words("GPU reserved (GiB)", "GPU 已预留 (GiB)"),
    "ratio": Words("Estimate ÷ GPU", "估算 ÷ GPU"),
    "h100": Words("GPU ÷ H100", "GPU ÷ H100"),
    "oom": Words("out of memory", "显存不足"),
}


def table(found: list[dict[str, Any]], lang: str) -> Markup:
    """Every run measured here: its peaks, the estimate's ratio to each, and each measured
    peak's ratio to the published H100 run's; the GPU's name too where runs of several GPUs
    stand in one table (the page's prose names a single one)."""
    text = {key: words[lang] for key, words in _TEXT.items()}
    several = len({r["gpu"] for r in found}) > 1
    headers = [text[k] for k in ("run", "gpu", "active", "ratio", "h100", "reserved", "ratio",
                                 "h100") if several or k != "gpu"]
    ratio = accuracy_tables.ratio
    body = []
    for r in found:
        cells = [escape(r["short_label"][lang])] + ([escape(r["gpu"])] if several else [])
        if r["out_of_memory"]:
            body.append(cells + [text["oom"]] + ["–"] * 5)
            continue
        body.append(cells + [gib(r["active"]), ratio(r["active_ratio"]),
                             ratio(r["h100_active_ratio"]), gib(r["reserved"]),
                             ratio(r["reserved_ratio"]), ratio(r["h100_reserved_ratio"])])
    return markdown_table(headers, body)
