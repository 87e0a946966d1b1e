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
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from generator.errors import BackendUnavailable, ConfigError, GeneratorError, to_payload
from generator.experiment import Experiment
from generator.measure.studies import Study
from generator.results import SCHEMA_VERSION
from generator.results.shapes import StepResult, StudyResult


def _stamp() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def measure_to_result(exp: Experiment) -> StepResult:
    """Measure `exp` here and wrap its figures into a complete result."""
    from generator.measure.backends import METHOD_VERSION, is_out_of_memory, measure
    from generator.measure.environment import describe

    try:
        figures = measure(exp)
    except GeneratorError:
        raise
    except Exception as error:  # an out-of-memory step is a result, not a crash
        if _is_size_overflow(error):
            raise ConfigError(f"batch_size {exp.batch_size} × seq_len {exp.seq_len} is more "
                              f"than {exp.model} can hold: a tensor of the step would have "
                              "more bytes than PyTorch can count (2⁶³)") from None
        if not is_out_of_memory(error):
            raise
        figures = {"error": "out_of_memory", "error_detail": str(error).splitlines()[0][:300]}
    return {
        "schema_version": SCHEMA_VERSION,
        "key": exp.key,
        "experiment": exp.to_dict(),
        "backend": exp.backend,
        "method_version": METHOD_VERSION,
        "environment": describe(exp.backend),
        "measured_at": _stamp(),
        "error": None,
        "error_detail": None,
        **figures,  # may set error and error_detail
    }


def _is_size_overflow(error: BaseException) -> bool:
    """PyTorch's refusal of a tensor whose byte count overflows int64 (a batch of 10¹⁶)."""
    return isinstance(error, RuntimeError) and "size calculation overflowed" in str(error)


def study_to_result(study: Study) -> StudyResult:
    """Run `study` here and wrap its data into a complete study result."""
    from generator.measure import studies
    from generator.measure.backends import backend_available, is_out_of_memory
    from generator.measure.environment import describe

    reason = backend_available(study.backend)
    if reason:
        raise BackendUnavailable(f"cannot run study {study.name!r}: {reason}")
    kind = studies.module(study.kind)
    error, data = None, {}
    try:
        data = kind.run(study.params)
    except GeneratorError:
        raise
    except Exception as exc:
        if not is_out_of_memory(exc):
            raise
        error = "out_of_memory"
    return {"schema_version": SCHEMA_VERSION, "study": study.to_dict(),
            "method_version": kind.VERSION, "environment": describe(study.backend),
            "measured_at": _stamp(), "error": error, "data": data}


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
    sys.exit(main(sys.argv[1:]))
