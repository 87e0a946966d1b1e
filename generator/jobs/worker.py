"""Measure jobs in a process of their own: `python -m generator.jobs.worker IN OUT_DIR`.

IN holds a JSON list of jobs ({"experiment": …} or {"study": …}); for job i the worker writes
OUT_DIR/i.json, whole or not at all, holding {"result": …}, {"user_error": {"type", "message"}}
(the user's mistake, e.g. a model that raises, as errors.to_payload sends it) or
{"failure": "…"} (a bug: the last line of its traceback). A fresh process keeps one
measurement's allocator state, or its out-of-memory error, away from the next; the runner only
groups estimates, which allocate nothing.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any

from generator.errors import GeneratorError, to_payload
from generator.experiment import Experiment
from generator.measure import own_process, preload
from generator.measure.run import measure_to_result, study_to_result
from generator.measure.studies import Study


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """One job's outcome, as the runner reads it."""
    try:
        if "study" in job:
            return {"result": study_to_result(Study.from_dict(job["study"]))}
        return {"result": measure_to_result(Experiment.from_dict(job["experiment"]))}
    except GeneratorError as error:
        return {"user_error": to_payload(error)}
    except Exception:  # a bug: keep the rest of the group going, report the traceback's end
        lines = traceback.format_exc().strip().splitlines()
        traceback.print_exc()
        return {"failure": lines[-1] if lines else "unknown failure"}


def main(argv: list[str]) -> int:
    source, out_dir = Path(argv[0]), Path(argv[1])
    for index, job in enumerate(json.loads(source.read_text(encoding="utf-8"))):
        outcome = run_job(job)
        tmp = out_dir / f".{index}.json.tmp"
        tmp.write_text(json.dumps(outcome), encoding="utf-8")
        os.replace(tmp, out_dir / f"{index}.json")  # the runner sees whole files only
    return 0


if __name__ == "__main__":
    own_process()  # this process is the tool's own: its imports' objects are frozen
    preload()
    sys.exit(main(sys.argv[1:]))
