"""The published real-GPU runs of the accuracy page's development set, estimated afresh.

Each run of the suite's `[[reference]]` table is estimated now, and held against the peaks
the real GPU reported (estimate ÷ real, allocated and reserved) and against the stored
estimate of the same step (whether this commit still gives the stored bytes). Not judged
against a bound: the accuracy page judges the stored estimates; this says whether they still
stand.
"""

from __future__ import annotations

from typing import Any

from generator.experiment import Experiment
from generator.results import reference_runs


def cases() -> list[dict[str, Any]]:
    """Every run this project can estimate, with its experiment."""
    return [{"id": run.name, "run": run, "experiment": run.experiment()}
            for run in reference_runs.runs() if not run.skipped]


def jobs(found: list[dict[str, Any]]) -> list[Experiment]:
    return [Experiment.from_dict(case["experiment"]) for case in found]


def compare(case: dict[str, Any], fresh: dict[str, Any], stored: dict[str, Any] | None
            ) -> dict[str, Any]:
    run, figures = case["run"], fresh["allocator"]
    row = {"id": case["id"], "key": fresh["key"],
           "allocated_ratio": figures["peak_allocated_bytes"] / run.active_peak_bytes,
           "reserved_ratio": figures["peak_reserved_bytes"] / run.reserved_peak_bytes,
           "transformers": fresh["environment"].get("transformers")}
    if stored is not None and stored.get("allocator"):
        row["stored_reserved_bytes"] = stored["allocator"]["peak_reserved_bytes"]
        row["reproduces"] = stored["allocator"]["peak_reserved_bytes"] == \
            figures["peak_reserved_bytes"] and stored["peak_bytes"] == fresh["peak_bytes"]
    return row
