"""Running the two plain-FSDP multi-GPU held-out points by torchtitan's own trainer
(HELD_OUT.md; `held_out_torchtitan.json`, read by generator/results/held_out_torchtitan.py,
where the file, its points and their comparison are described) and recording each once.

`python -m generator validate --only torchtitan` runs each point not yet estimated, once,
from a clean working tree, as held_out_scripts.py runs the as-written points (its commit,
environment and versions; a failed run records nothing).
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from generator.results.held_out_torchtitan import (
    DATA, TORCHTITAN, Point, arguments, compare, points, report_name)
from generator.validate import held_out_scripts


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


def estimate_pending(work: Path, path: Path = DATA / TORCHTITAN,
                     say=print) -> list[dict[str, Any]]:
    """Run each point not yet estimated, once, and record it (see the module); then the
    comparison of every estimated point."""
    done = held_out_scripts.record_each_once(work, path, check="torchtitan", points_of=points,
                                             run=run, say=say)
    return [compare(p, p.estimate["report"]) for p in done]
