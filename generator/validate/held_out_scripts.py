"""The held-out sources run as their authors wrote them (HELD_OUT.md, "As written"): each
point's command, run once at a recorded commit, and its comparison.

`held_out_as_written.json` (beside held_out.json) holds, per source, the script, the GPU it
is simulated on and the comparison rule, and per point the script's arguments, the command
and `"estimate": null` until it has run. A point's published figure is its held_out.json
point's (the same id). `python -m generator validate --only as-written` runs each point not
yet estimated, once, from a clean working tree, and records its figures with the commit;
a point already estimated is never run again, and a run that fails records nothing (the
point stays unestimated; the command ends with the failures once the others are recorded).

The rule of each source, like with like: the figure its script prints (`printed`, a
pattern of its own print-out) is held against a field of the run's JSON report (`report`),
plus the CUDA context the source itself read where it printed nvidia-smi's used memory.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.files import write_atomic
from generator.results import reference_runs

DATA = Path(reference_runs.__file__).resolve().parent / "reference_data"
AS_WRITTEN = "held_out_as_written.json"
PACKAGE = "generator.validate.as_written"
#: The report's fields a rule may hold a printed figure against.
FIELDS = ("allocated_bytes", "reserved_bytes")
#: A printed figure's unit → bytes.
UNITS = {"MiB": 2**20, "GB": 10**9}
#: What a point's estimate records of the installed versions.
PACKAGES = ("torch", "transformers", "lightning", "bitsandbytes")


@dataclass(frozen=True)
class Rule:
    """What the source printed, and the report's figure it is held against."""

    printed: str
    """A pattern of the script's print-out; its group is the figure (the last match)."""
    unit: str
    """The printed figure's unit, one of UNITS."""
    report: str
    """The report's field, one of FIELDS."""
    plus_context: bool
    """Add the CUDA context the source read (its nvidia-smi figure holds it)."""

    def read(self, stdout: str) -> int | None:
        """The last figure printed, in bytes; None if the script never printed it."""
        found = re.findall(self.printed, stdout)
        return round(float(found[-1]) * UNITS[self.unit]) if found else None


@dataclass(frozen=True)
class Point:
    id: str
    source: str
    script: str
    """The script's module under generator.validate.as_written."""
    gpu: str
    args: tuple[str, ...]
    command: str
    """The command as recorded (it must be `command_line(point)`)."""
    rule: Rule
    published_bytes: int
    context_bytes: int
    """The CUDA context the source read (0 where it printed no nvidia-smi figure)."""
    estimate: dict[str, Any] | None


def load(path: Path = DATA / AS_WRITTEN) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def points(data: dict[str, Any] | None = None) -> list[Point]:
    """Every point of the file, in its order, with its published figure from held_out.json."""
    data = load() if data is None else data
    published = {p.id: p for p in reference_runs.held_out()}
    found = []
    for source in data["sources"]:
        raw_rule = source["compare"]
        rule = Rule(raw_rule["printed"], raw_rule["unit"], raw_rule["report"],
                    raw_rule["plus_context"])
        if rule.unit not in UNITS or rule.report not in FIELDS:
            raise ValueError(f"{source['id']}: a rule of unit {rule.unit!r} against "
                             f"{rule.report!r} (units {UNITS}, fields {FIELDS})")
        for raw in source["points"]:
            held = published[raw["id"]]
            if held.source.id != source["id"]:
                raise ValueError(f"{raw['id']} is a point of {held.source.id}, "
                                 f"not of {source['id']}")
            found.append(Point(
                id=raw["id"], source=source["id"], script=source["script"], gpu=source["gpu"],
                args=tuple(raw["args"]), command=raw["command"], rule=rule,
                published_bytes=held.published_bytes,
                context_bytes=held.source.context_bytes if rule.plus_context else 0,
                estimate=raw["estimate"]))
    return found


def report_name(point: Point) -> str:
    return f"as-written-{point.id}.json"


def arguments(point: Point) -> list[str]:
    """`python -m generator` + these: the script as a module, to its end (`--steps all`:
    the figure is printed after the last pass), its JSON report in the current folder."""
    return ["run", "--gpu", point.gpu, "--steps", "all", "--json", report_name(point),
            "-m", f"{PACKAGE}.{point.script}", *point.args]


def command_line(point: Point) -> str:
    return shlex.join(["python", "-m", "generator", *arguments(point)]).replace(
        f"'{point.gpu}'", f'"{point.gpu}"')


def compare(point: Point, report: dict[str, Any], printed_bytes: int | None
            ) -> dict[str, Any]:
    """The run's figure against the published one (estimate ÷ published), and the figure
    the script printed beside it."""
    estimated = report[point.rule.report] + point.context_bytes
    return {"id": point.id, "source": point.source, "published_bytes": point.published_bytes,
            "estimated_bytes": estimated, "ratio": estimated / point.published_bytes,
            "printed_bytes": printed_bytes,
            "printed_ratio": None if printed_bytes is None
            else printed_bytes / point.published_bytes}


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


def recorded(data: dict[str, Any], point_id: str, estimate: dict[str, Any]) -> dict[str, Any]:
    """`data` with the point's estimate set; a ValueError if it has one already (a point is
    never estimated again)."""
    for source in data["sources"]:
        for raw in source["points"]:
            if raw["id"] == point_id:
                if raw["estimate"] is not None:
                    raise ValueError(f"{point_id} was estimated already, at "
                                     f"{raw['estimate'].get('commit')}: never again")
                raw["estimate"] = estimate
                return data
    raise ValueError(f"no point {point_id} in {AS_WRITTEN}")


def estimate_pending(work: Path, path: Path = DATA / AS_WRITTEN,
                     say=print) -> list[dict[str, Any]]:
    """Run each point not yet estimated, once, and record it (see the module); then the
    comparison of every estimated point."""
    commit = clean_commit(path.parent)
    failures = []
    for point in points(load(path)):
        if point.estimate is not None:
            continue
        folder = work / point.id
        folder.mkdir(parents=True)
        say(f"as-written {point.id}: {point.command}")
        try:
            estimate = {"commit": commit, **run(point, folder)}
        except RuntimeError as failed:
            failures.append(str(failed))
            say(f"as-written {point.id}: FAILED, not recorded: {failed}")
            continue
        write_atomic(path, json.dumps(recorded(load(path), point.id, estimate), indent=2,
                                      ensure_ascii=False) + "\n", what=AS_WRITTEN,
                     durable=True)
    if failures:  # after the others were recorded: they ran once, at this commit
        raise RuntimeError(f"{len(failures)} held-out point(s) did not run, nothing recorded "
                           "for them:\n" + "\n".join(failures))
    return [compare(p, p.estimate["report"], p.estimate["printed_bytes"])
            for p in points(load(path)) if p.estimate is not None]
