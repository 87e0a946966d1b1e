"""The held-out sources run as their authors wrote them (HELD_OUT.md, "As written"): each
point's command, run once at a recorded commit, and its comparison.

`held_out_as_written.json` (beside held_out.json) holds, per source, the script, the GPU it
is simulated on and the comparison rule, and per point the script's arguments, the command
and `"estimate": null` until it has run. A point's published figure is its held_out.json
point's (the same id). `python -m generator validate --only as-written` runs each point not
yet estimated, once, from a clean working tree, and records its figures with the commit;
a point already estimated is never run again, and a run that fails records nothing (the
point stays unestimated; the command ends with the failures once the others are recorded).

What a point records and how it is compared: generator/results/held_out_as_written.py.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from generator.files import write_atomic
from generator.results.held_out_as_written import (
    AS_WRITTEN, DATA, Point, arguments, compare, load, points, report_name)

#: What a point's estimate records of the installed versions.
PACKAGES = ("torch", "transformers", "lightning", "bitsandbytes")


def run(point: Point, folder: Path, *, timeout: float | None = None) -> dict[str, Any]:
    """Run the point's command in `folder` (the scripts write there: the Trainer's output,
    the profiler's trace); what the estimate records. A RuntimeError if it did not finish."""
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    done = subprocess.run([sys.executable, "-m", "generator", *arguments(point)], cwd=folder,
                          env=environment(), capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    report_file = folder / report_name(point)
    if done.returncode not in (0, 3) or not report_file.is_file():
        last = (done.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
        raise RuntimeError(f"{point.id}: exit status {done.returncode}: {last}")
    report = json.loads(report_file.read_text(encoding="utf-8"))
    return {"ran_at": started, **versions(),
            "exit_status": done.returncode,
            "printed_bytes": point.rule.read(done.stdout),
            "report": {key: report[key] for key in (
                "gpu", "allocated_bytes", "reserved_bytes", "peak_bytes", "nvidia_smi_bytes",
                "verdict", "out_of_memory")} | {"steps": len(report["steps"])}}


def environment() -> dict[str, str]:
    """This process's environment, with this checkout's `generator` first on the path: the
    command runs in another folder, where `python -m generator` would find an installed
    copy (or none)."""
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root] + ([env["PYTHONPATH"]]
                                                  if env.get("PYTHONPATH") else []))
    return env


def versions() -> dict[str, str | None]:
    from importlib import metadata

    found: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def clean_commit(root: Path) -> str:
    """The commit the estimates run at; a RuntimeError unless the working tree is clean
    (HELD_OUT.md: "with nothing else changed in the working tree")."""
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                            cwd=root, capture_output=True, text=True, check=True).stdout
    if status.strip():
        raise RuntimeError("the held-out points are estimated at a commit, from a clean "
                           f"working tree; changed:\n{status}")
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                          text=True, check=True).stdout.strip()


def _raw_points(data: dict[str, Any]) -> list[dict[str, Any]]:
    """A record's points as stored: by source (as-written) or in one list (torchtitan)."""
    if "sources" in data:
        return [raw for source in data["sources"] for raw in source["points"]]
    return data["points"]


def recorded(data: dict[str, Any], point_id: str, estimate: dict[str, Any]) -> dict[str, Any]:
    """`data` with the point's estimate set; a ValueError if it has one already (a point is
    never estimated again)."""
    for raw in _raw_points(data):
        if raw["id"] == point_id:
            if raw["estimate"] is not None:
                raise ValueError(f"{point_id} was estimated already, at "
                                 f"{raw['estimate'].get('commit')}: never again")
            raw["estimate"] = estimate
            return data
    raise ValueError(f"no point {point_id} in the record")


def record_each_once(work: Path, path: Path, *, check: str, points_of, run, say=print) -> list:
    """Run each point of the record at `path` not yet estimated, once, at this clean commit,
    and record it at once (a later failure loses nothing); a failed run records nothing and
    the others still run. `points_of(data)` reads the record's points, `run(point, folder)`
    gives what is recorded. The points estimated, as the record now holds them."""
    commit = clean_commit(path.parent)
    failures = []
    for point in points_of(load(path)):
        if point.estimate is not None:
            continue
        folder = work / point.id
        folder.mkdir(parents=True)
        say(f"{check} {point.id}: {point.command}")
        try:
            estimate = {"commit": commit, **run(point, folder)}
        except RuntimeError as failed:
            failures.append(str(failed))
            say(f"{check} {point.id}: FAILED, not recorded: {failed}")
            continue
        write_atomic(path, json.dumps(recorded(load(path), point.id, estimate), indent=2,
                                      ensure_ascii=False) + "\n", what=path.name, durable=True)
    if failures:  # after the others were recorded: they ran once, at this commit
        raise RuntimeError(f"{len(failures)} {check} point(s) did not run, nothing recorded "
                           "for them:\n" + "\n".join(failures))
    return [p for p in points_of(load(path)) if p.estimate is not None]


def estimate_pending(work: Path, path: Path = DATA / AS_WRITTEN,
                     say=print) -> list[dict[str, Any]]:
    """Run each point not yet estimated, once, and record it (see the module); then the
    comparison of every estimated point."""
    done = record_each_once(work, path, check="as-written", points_of=points,
                            run=run, say=say)
    return [compare(p, p.estimate["report"], p.estimate["printed_bytes"]) for p in done]
