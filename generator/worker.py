"""Measure one experiment in a process of its own: `python -m generator.worker IN OUT`.

IN holds the experiment as JSON; the complete result is written to OUT. A fresh process per
experiment keeps one experiment's allocator state, or its out-of-memory error, away from the
next. Exit status: 0 result written, 2 the user's mistake (message in OUT), 1 a crash.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .config import Experiment
from .errors import GeneratorError
from .results import SCHEMA_VERSION


def measure_to_result(exp: Experiment) -> dict[str, Any]:
    """Measure `exp` here and wrap its figures into a complete result."""
    from .backends import METHOD_VERSION, is_out_of_memory, measure
    from .environment import describe

    try:
        figures = measure(exp)
    except GeneratorError:
        raise
    except Exception as error:  # an out-of-memory step is a result, not a crash
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
        "measured_at": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
        "error": None,
        "error_detail": None,
        **figures,  # may set error and error_detail
    }


def main(argv: list[str]) -> int:
    source, target = Path(argv[0]), Path(argv[1])
    try:
        exp = Experiment.from_dict(json.loads(source.read_text(encoding="utf-8")))
        payload: dict[str, Any] = {"result": measure_to_result(exp)}
        status = 0
    except GeneratorError as error:
        payload, status = {"user_error": str(error)}, 2
    target.write_text(json.dumps(payload), encoding="utf-8")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
