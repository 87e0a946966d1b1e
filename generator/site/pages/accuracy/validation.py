"""The newest run of `python -m generator validate`, for the accuracy page: whole grids held
against their truths (generator/validate/), which the test suite only samples."""

from __future__ import annotations

from typing import Any

KIND = "validation"  # generator.validate.KIND; the site does not import what runs models


def newest(studies: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The latest stored validation run, or None."""
    runs = [s for s in studies if s["study"].get("kind") == KIND and not s.get("error")]
    return max(runs, key=lambda s: s.get("measured_at") or "", default=None)


def context(studies: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What the page says of the newest run: when, at which commit, and for each check how
    many cases, how many within their bound, and the largest miss."""
    run = newest(studies)
    if run is None:
        return None
    checks = run["data"].get("checks", {})
    found = {}
    for name, check in checks.items():
        rows, summary = check["rows"], check["summary"]
        found[name] = {**summary, "seconds": check.get("seconds"),
                       "all_within": summary["judged"] > 0 and
                       summary["within"] == summary["judged"],
                       "worst": _worst(name, rows)}
        if name == "published":
            found[name]["reproduced"] = sum(1 for r in rows if r.get("reproduces"))
            found[name]["stored"] = sum(1 for r in rows if "reproduces" in r)
            found[name]["transformers"] = sorted({r.get("transformers") or "?" for r in rows})
    environment = run["environment"]
    return {"date": (run.get("measured_at") or "")[:10],
            "commit": (environment.get("git_commit") or "")[:10] or None,
            "torch": environment.get("torch"), "checks": found,
            "study": run}  # its json_path: the page's list of data files names it


def _worst(name: str, rows: list[dict[str, Any]]) -> float | None:
    """The largest |estimate ÷ truth − 1| of a check's rows (torchrun: the gap to the largest
    rank; the others: any of the figures compared)."""
    if name == "torchrun":
        gaps = [abs(r["gap_to_largest"]) for r in rows]
    else:
        gaps = [abs(v - 1) for r in rows for k, v in r.items()
                if k.endswith("_ratio") and isinstance(v, (int, float))]
    return max(gaps, default=None)
