"""The calculator's held-out cases, shared by the tests that hold its answers against fresh
estimates (test_calculator_heldout.py in Python, test_calculator_browser.py in Chromium).
The cases are generator/validate/calculator.py's; the tests keep its sample (one case per
architecture family and method), and `python -m generator validate --only calculator` runs
them all. The fresh estimates run once per session, in the measure command's parallel
workers."""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

from conftest import REPO_ROOT, run_cli

from generator.validate import calculator as held_out


@functools.lru_cache(maxsize=1)
def committed() -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The calculator's context from the committed results, and those results by key."""
    return held_out.committed(REPO_ROOT / "docs" / "data")


def all_cases() -> list[dict[str, Any]]:
    return held_out.cases(*committed())


def cases() -> list[dict[str, Any]]:
    """The sample the tests hold against fresh estimates."""
    return held_out.sample(all_cases())


@functools.lru_cache(maxsize=1)
def fresh() -> dict[str, dict[str, Any]]:
    """Fresh estimates of every sampled case, by case id. They are kept in a temporary folder
    named by the cases' suite, so that the held-out and the browser tests (two processes,
    perhaps at once under xdist: a lock) estimate them once: `measure` reuses what is stored
    there, and a changed case is a new folder."""
    found = cases()
    text = held_out.suite_text(found)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"calculator-held-out-{digest}"
    folder.mkdir(exist_ok=True)
    suite = folder / "held-out.toml"
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        suite.write_text(text, encoding="utf-8")
        proc = run_cli(["measure", "--config", suite, "--results", folder / "results"], folder)
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(p.read_text()) for p in (folder / "results").rglob("*.json")]
    return held_out.by_case(found, results)
