"""Result files made by hand: small round figures results.load accepts, and files written
with an old mtime so that a later rewrite shows."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from generator.results.shapes import CATEGORIES, ONLY_WHEN_SEEN

PAST = 1_000_000_000  # an mtime (2001) that no write during a test can produce


TINY_EXPERIMENT = {"model": "tiny", "batch_size": 2, "seq_len": 16, "precision": "fp32",
                   "optimizer": "adamw", "backend": "estimate", "device": "cuda"}


def hand_made_result(*, error: str | None = None, **experiment: Any) -> dict[str, Any]:
    """A result file's content, by hand, that results.load accepts: a step of the tiny model
    (fields changed by `experiment`) with small round figures, or, with `error`, a step that
    did not run and has no figures."""
    from generator.experiment import Experiment

    exp = Experiment(**{**TINY_EXPERIMENT, **experiment})
    data: dict[str, Any] = {
        "schema_version": 1, "key": exp.key, "experiment": exp.to_dict(),
        "backend": exp.backend, "environment": {"torch": "0.0-test"},
        "error": error, "error_detail": None,
    }
    if error is None:
        mib = 2**20
        data.update(
            peak_bytes=6 * mib, parameter_count=1000,
            # a MiB in each of the six categories every step has: they add up to the peak
            live_at_peak_bytes={c: 0 if c in ONLY_WHEN_SEEN else mib for c in CATEGORIES},
            category_max_bytes={c: 0 if c in ONLY_WHEN_SEEN else mib for c in CATEGORIES},
            module_activation_bytes={"layers.0": mib},
            timeline={"tick": [0, 1, 2], "end_tick": 3,
                      "bytes": {c: [0, 0, 0] if c in ONLY_WHEN_SEEN else [0, mib, mib // 2]
                               for c in CATEGORIES}},
            phases=[{"name": "forward", "tick": 0}, {"name": "backward", "tick": 1}])
    return data


def write_old(path: Path, content: str | bytes) -> Path:
    """Write a file with an old mtime, so that any later rewrite shows in tree_state."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    os.utime(path, (PAST, PAST))
    return path
