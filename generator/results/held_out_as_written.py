"""The held-out points as their authors wrote them, as recorded (`held_out_as_written.json`,
beside held_out.json; HELD_OUT.md, "As written"): per source the script, the simulated GPU
and the comparison rule, per point the script's arguments, the command and its estimate
(`null` until it has run once). Reading and comparing only: generator/validate/
held_out_scripts.py runs the commands and records them, and the accuracy page reads them.

The rule of each source, like with like: the figure its script prints (`printed`, a
pattern of its own print-out) is held against a field of the run's JSON report (`report`),
plus the CUDA context the source itself read where it printed nvidia-smi's used memory.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.results import reference_runs

DATA = reference_runs.DATA
AS_WRITTEN = "held_out_as_written.json"
PACKAGE = "generator.validate.as_written"
#: The report's fields a rule may hold a printed figure against.
FIELDS = ("allocated_bytes", "reserved_bytes")
#: A printed figure's unit → bytes.
UNITS = {"MiB": 2**20, "GB": 10**9}


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
