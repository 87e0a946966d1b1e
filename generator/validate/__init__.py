"""Validation: the estimate held against its truths over whole grids, too long for the tests.

    python -m generator validate [--only calculator,torchrun,published,as-written,torchtitan]
                                 [--results results]

- calculator: the calculator's replay of each fitted setting, at sizes its fits never saw,
  against fresh estimates (calculator.py);
- torchrun: one rank's estimate modelling the CPU against every rank of real torchrun jobs on
  gloo, for each strategy (torchrun.py);
- published: the accuracy page's published real-GPU runs estimated afresh (published.py);
- as-written: the held-out sources' own scripts run on their simulated GPUs, each point once
  at a recorded commit (held_out_scripts.py). Only when named (`--only as-written`): it
  records into the package's reference data, from a clean working tree, and never runs a
  point twice.
- torchtitan: torchtitan's own trainer on the two plain-FSDP multi-GPU held-out points, as
  rank 0 of 8 and of 128 simulated GPUs, each once at a recorded commit
  (held_out_torchtitan.py). Like as-written, only when named (`--only torchtitan`).

Estimates run in the measure command's parallel workers; torchrun jobs one after another
(each is several processes). The grids' run is one dated study result,
`<results>/studies/<machine-id>/validation-<YYYY-MM-DD>.json` (kind "validation"), which
the accuracy page shows. The test suite keeps a sample of each check (one case per
architecture family and method, every strategy once), so a regression still fails CI.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from generator.measure.environment import describe, machine_id
from generator.measure.run import stamp
from generator.results import reference_runs, store

KIND = "validation"
#: Raise when what a check computes changes: the page then says the stored run is older.
VERSION = 1
CHECKS = ("calculator", "torchrun", "published", "as-written", "torchtitan")
#: What `validate` runs when no check is named: as-written and torchtitan record, once (see
#: the module).
DEFAULT_CHECKS = ("calculator", "torchrun", "published")
#: The checks that record each point once into the package's reference data (their one
#: record): they leave the dated study of the grids alone, which a run of them alone would
#: otherwise replace for the day.
RECORDED_ONCE = {"as-written": "held_out_as_written.json", "torchtitan": "held_out_torchtitan.json"}


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _estimate(experiments: list, folder: Path) -> list[dict[str, Any]]:
    """Fresh estimates of `experiments` in the measure command's parallel workers."""
    from generator.jobs.runner import run_all

    outcomes = run_all(experiments, folder)
    failed = [o for o in outcomes if o.status == "failed"]
    if failed:
        raise RuntimeError(f"{len(failed)} estimate(s) failed, the first: {failed[0].detail}")
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.rglob("*.json"))
            if p.parent.parent == folder]


def check_calculator(results_dir: Path, work: Path) -> list[dict[str, Any]]:
    from generator.experiment import Experiment
    from generator.validate import calculator

    ctx, by_key = calculator.committed(results_dir)
    found = calculator.cases(ctx, by_key)
    fresh = calculator.by_case(found, _estimate(
        [Experiment.from_dict(case["experiment"]) for case in found], work))
    return [calculator.compare(case, fresh[case["id"]], ctx) for case in found]


def check_torchrun(results_dir: Path, work: Path) -> list[dict[str, Any]]:
    from generator.validate import torchrun

    rows = []
    for model, n, strategy in torchrun.CASES:
        rows.append(torchrun.compare(model, n, strategy, work / "run"))
        _say(f"torchrun {rows[-1]['id']}: gap {100 * rows[-1]['gap_to_largest']:+.3f} %")
    return rows


def check_published(results_dir: Path, work: Path) -> list[dict[str, Any]]:
    from generator.validate import published

    found = published.cases()
    jobs = published.jobs(found)
    fresh = {r["key"]: r for r in _estimate(jobs, work)}
    stored = {r["key"]: r for r in store.load_all(results_dir)}
    return [published.compare(case, fresh[job.key], stored.get(job.key))
            for case, job in zip(found, jobs)]


def check_as_written(results_dir: Path, work: Path) -> list[dict[str, Any]]:
    from generator.validate import held_out_scripts

    return held_out_scripts.estimate_pending(work, say=_say)


def check_torchtitan(results_dir: Path, work: Path) -> list[dict[str, Any]]:
    from generator.validate import held_out_torchtitan

    return held_out_torchtitan.estimate_pending(work, say=_say)


RUNNERS: dict[str, Callable[[Path, Path], list[dict[str, Any]]]] = {
    "calculator": check_calculator, "torchrun": check_torchrun, "published": check_published,
    "as-written": check_as_written, "torchtitan": check_torchtitan}


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """How many cases, how many within their bound (where a check has one)."""
    judged = [r for r in rows if "within" in r]
    return {"cases": len(rows), "judged": len(judged),
            "within": sum(1 for r in judged if r["within"])}


def validate(results_dir: Path, only: tuple[str, ...] = DEFAULT_CHECKS) -> list[Path]:
    """Run the checks; write the grids' dated result beside the other studies (the held-out
    checks record into their reference data instead); return the paths written."""
    store.ensure_writable(results_dir)
    now = stamp()
    today = now[:10]  # the file's name: one run a day, the newest kept
    checks: dict[str, Any] = {}
    for name in only:
        _say(f"validate: {name} …")
        start = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix=f"validate-{name}-") as folder:
            rows = RUNNERS[name](Path(results_dir), Path(folder))
        checks[name] = {"rows": rows, "summary": summary(rows),
                        "seconds": round(time.perf_counter() - start, 1)}
        s = checks[name]["summary"]
        _say(f"validate: {name}: {s['cases']} cases, {s['within']} of {s['judged']} within "
             f"their bound, {checks[name]['seconds']:.0f} s")
    written = [reference_runs.DATA / RECORDED_ONCE[name]
               for name in only if name in RECORDED_ONCE]
    checks = {name: check for name, check in checks.items() if name not in RECORDED_ONCE}
    if not checks:
        return written
    result = {"schema_version": store.SCHEMA_VERSION,
              "study": {"kind": KIND, "name": f"{KIND}-{today}", "backend": "estimate",
                        "params": {"checks": list(checks)}},
              "method_version": VERSION, "environment": describe("estimate"),
              "measured_at": now,
              "error": None, "data": {"checks": checks}}
    path = store.study_path(results_dir, machine_id("estimate"), f"{KIND}-{today}")
    store.save(path, result)
    return [path, *written]

