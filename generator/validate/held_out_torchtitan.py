"""The two plain-FSDP multi-GPU held-out points run by torchtitan's own trainer (HELD_OUT.md;
`held_out_torchtitan.json` beside multi_gpu_held_out.json): each point's command, run once at a
recorded commit, and its comparison.

The file holds the module that runs torchtitan (as_written/torchtitan_train.py), the GPU it is
simulated on, torchtitan's arguments (the published setting, said in its "about"), the
report's field compared, and per point its number of GPUs, the command and `"estimate": null`
until it has run. A point's published figure is its multi_gpu_held_out.json point's (the same
id). `python -m generator validate --only torchtitan` runs each point not yet estimated, once,
from a clean working tree, as held_out_scripts.py runs the as-written points (its commit,
environment and versions; a failed run records nothing).
"""

from __future__ import annotations

import datetime
import json
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.files import write_atomic
from generator.results import reference_runs
from generator.results.held_out_as_written import FIELDS
from generator.validate import held_out_scripts

DATA = held_out_scripts.DATA
TORCHTITAN = "held_out_torchtitan.json"


@dataclass(frozen=True)
class Point:
    id: str
    gpus: int
    module: str
    gpu: str
    gpu_memory: str
    args: tuple[str, ...]
    report: str
    """The report's field held against the published figure (FIELDS)."""
    command: str
    """The command as recorded (it must be `command_line(point)`)."""
    published_bytes: int
    estimate: dict[str, Any] | None


def load(path: Path = DATA / TORCHTITAN) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def points(data: dict[str, Any] | None = None) -> list[Point]:
    """Every point of the file, in its order, with its published figure from
    multi_gpu_held_out.json (the same id and number of GPUs, else a ValueError)."""
    data = load() if data is None else data
    if data["report"] not in FIELDS:
        raise ValueError(f"{TORCHTITAN}: a report field {data['report']!r} "
                         f"(fields {FIELDS})")
    published = {p.id: p for p in reference_runs.multi_gpu_held_out()}
    found = []
    for raw in data["points"]:
        held = published[raw["id"]]
        if held.gpus != raw["gpus"]:
            raise ValueError(f"{raw['id']}: {raw['gpus']} GPUs, its published row {held.gpus}")
        found.append(Point(id=raw["id"], gpus=raw["gpus"], module=data["module"],
                           gpu=data["gpu"], gpu_memory=data["gpu_memory"],
                           args=tuple(data["args"]), report=data["report"],
                           command=raw["command"], published_bytes=held.published_bytes,
                           estimate=raw["estimate"]))
    return found


def report_name(point: Point) -> str:
    return f"torchtitan-{point.id}.json"


def arguments(point: Point) -> list[str]:
    """`python -m generator` + these: torchtitan as rank 0 of the point's job, to its end
    (its own --training.steps), its JSON report in the current folder."""
    return ["run", "--gpu", point.gpu, "--gpu-memory", point.gpu_memory,
            "--gpus", str(point.gpus), "--steps", "all", "--json", report_name(point),
            "-m", point.module, *point.args]


def command_line(point: Point) -> str:
    return shlex.join(["python", "-m", "generator", *arguments(point)])


def compare(point: Point, report: dict[str, Any]) -> dict[str, Any]:
    """The run's figure against the published one (estimate ÷ published)."""
    estimated = report[point.report]
    return {"id": point.id, "gpus": point.gpus, "published_bytes": point.published_bytes,
            "estimated_bytes": estimated, "ratio": estimated / point.published_bytes}


def run(point: Point, folder: Path, *, timeout: float | None = None) -> dict[str, Any]:
    """Run the point's command in `folder` (torchtitan writes its outputs there); what the
    estimate records. A RuntimeError if it did not finish."""
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    clock = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "generator", *arguments(point)], cwd=folder,
                          env=held_out_scripts.environment(), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    report_file = folder / report_name(point)
    if done.returncode not in (0, 3) or not report_file.is_file():
        last = (done.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
        raise RuntimeError(f"{point.id}: exit status {done.returncode}: {last}")
    report = json.loads(report_file.read_text(encoding="utf-8"))
    return {"ran_at": started, "wall_seconds": round(time.perf_counter() - clock, 1),
            **held_out_scripts.versions(), "torchtitan": _torchtitan_version(),
            "exit_status": done.returncode,
            "report": {key: report[key] for key in (
                "gpu", "gpus", "allocated_bytes", "reserved_bytes", "peak_bytes",
                "verdict", "out_of_memory")} | {"steps": len(report["steps"])}}


def _torchtitan_version() -> str | None:
    from importlib import metadata

    try:
        return metadata.version("torchtitan")
    except metadata.PackageNotFoundError:
        return None


def recorded(data: dict[str, Any], point_id: str, estimate: dict[str, Any]) -> dict[str, Any]:
    """`data` with the point's estimate set; a ValueError if it has one already (a point is
    never estimated again)."""
    for raw in data["points"]:
        if raw["id"] == point_id:
            if raw["estimate"] is not None:
                raise ValueError(f"{point_id} was estimated already, at "
                                 f"{raw['estimate'].get('commit')}: never again")
            raw["estimate"] = estimate
            return data
    raise ValueError(f"no point {point_id} in {TORCHTITAN}")


def estimate_pending(work: Path, path: Path = DATA / TORCHTITAN,
                     say=print) -> list[dict[str, Any]]:
    """Run each point not yet estimated, once, and record it (see the module); then the
    comparison of every estimated point."""
    commit = held_out_scripts.clean_commit(path.parent)
    failures = []
    for point in points(load(path)):
        if point.estimate is not None:
            continue
        folder = work / point.id
        folder.mkdir(parents=True)
        say(f"torchtitan {point.id}: {point.command}")
        try:
            estimate = {"commit": commit, **run(point, folder)}
        except RuntimeError as failed:
            failures.append(str(failed))
            say(f"torchtitan {point.id}: FAILED, not recorded: {failed}")
            continue
        write_atomic(path, json.dumps(recorded(load(path), point.id, estimate), indent=2,
                                      ensure_ascii=False) + "\n", what=TORCHTITAN,
                     durable=True)
    if failures:  # after the others were recorded: they ran once, at this commit
        raise RuntimeError(f"{len(failures)} torchtitan point(s) did not run, nothing "
                           "recorded for them:\n" + "\n".join(failures))
    return [compare(p, p.estimate["report"]) for p in points(load(path))
            if p.estimate is not None]
