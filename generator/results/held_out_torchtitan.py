"""The two plain-FSDP multi-GPU held-out points run by torchtitan's own trainer, as recorded
(`held_out_torchtitan.json`, beside multi_gpu_held_out.json; HELD_OUT.md): each point's
command, and its estimate (`null` until it has run once, at a recorded commit). Reading and
comparing only: generator/validate/held_out_torchtitan.py runs the commands and records them,
and the accuracy page reads them.

The file holds the module that runs torchtitan (as_written/torchtitan_train.py), the GPU it is
simulated on, torchtitan's arguments (the published setting, said in its "about"), the
report's field compared, and per point its number of GPUs, the command and its estimate. A
point's published figure is its multi_gpu_held_out.json point's (the same id).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.results import held_out_as_written, reference_runs
from generator.results.held_out_as_written import FIELDS

DATA = reference_runs.DATA
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
    return held_out_as_written.load(path)


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
