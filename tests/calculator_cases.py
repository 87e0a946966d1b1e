"""The calculator's held-out cases, shared by the tests that hold its answers against fresh
estimates (test_calculator_heldout.py in Python, test_calculator_browser.py in Chromium):
for every model and method of the committed fits, the plain setting (no lever) at three
sizes its fits never saw, spread over its range (batch 1, which has a template of its own,
and two sizes of two samples or more); and the article's models at four. The fresh estimates
run once per session, in the measure command's parallel workers."""

from __future__ import annotations

import functools
import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

from conftest import REPO_ROOT, run_cli

from generator.site.pages import calculator
from generator.site.pages.calculator import grid
from generator.site.render import read_results

#: Inside each fitted range and off its grid, by the range's longest sequence: one sample,
#: then two mid-range sizes of several.
SIZES_BY_LONGEST = {8192: ((1, 1500), (3, 3000), (12, 700)),
                    4096: ((1, 3000), (3, 1200), (12, 700)),
                    2048: ((1, 1000), (3, 1500), (12, 300)),
                    512: ((1, 300), (6, 200), (40, 100))}
#: The article's two models: (model, precision, levers, batch, seq), as before the catalogue.
ARTICLE_CASES = (("bert-base", "fp32", "none", 100, 300),
                 ("bert-base", "amp-bf16", "ckpt", 24, 192),
                 ("gpt2-small", "fp32", "none", 300, 200),
                 ("gpt2-small", "amp-bf16", "ckpt", 48, 700))


@functools.lru_cache(maxsize=1)
def committed() -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The calculator's context from the committed results, and those results by key."""
    found, studies = read_results(REPO_ROOT / "results")
    results = [r for _, r in found]
    ctx = calculator.context(results, studies)
    assert ctx is not None, "no calculator results: measure fine_tune.toml and calculator.toml"
    keys = grid.grid_keys()  # expands two suite files: once, not once a result
    return ctx, {r["key"]: r for r in results if r["key"] in keys}


def cases() -> list[dict[str, Any]]:
    """Each held-out case: its fit, size and the experiment to estimate afresh."""
    ctx, by_key = committed()
    found = []
    for fit in ctx["fits"]:
        plain = fit["levers"] == "none"
        if fit["model"].startswith("hf:") and plain:
            sizes = SIZES_BY_LONGEST[fit["range"]["seq"][1]]
        else:
            sizes = [(b, s) for m, p, lv, b, s in ARTICLE_CASES
                     if (m, p, lv) == (fit["model"], fit["precision"], fit["levers"])]
        for batch, seq in sizes:
            experiment = dict(by_key[fit["points"][0]["key"]]["experiment"])
            experiment.update(batch_size=batch * fit["micro_batches"], seq_len=seq,
                              allocation_trace=False)
            found.append({"fit": fit, "batch": batch, "seq": seq, "experiment": experiment,
                          "id": f"{fit['name']}-b{batch}-s{seq}"})
    return found


@functools.lru_cache(maxsize=1)
def fresh() -> dict[str, dict[str, Any]]:
    """Fresh estimates of every case, by case id. They are kept in a temporary folder named
    by the cases' suite, so that the held-out and the browser tests (two processes) estimate
    them once: `measure` reuses what is stored there, and a changed case is a new folder."""
    found = cases()
    lines = []
    for case in found:
        e = case["experiment"]
        fields = {k: v for k, v in e.items() if v not in (None, "", [], ())}
        lines.append("[[experiment]]\n" + "".join(f"{k} = {json.dumps(v)}\n"
                                                  for k, v in sorted(fields.items())))
    text = "\n".join(lines)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"calculator-held-out-{digest}"
    folder.mkdir(exist_ok=True)
    suite = folder / "held-out.toml"
    suite.write_text(text, encoding="utf-8")
    proc = run_cli(["measure", "--config", suite, "--results", folder / "results"], folder)
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(p.read_text()) for p in (folder / "results").rglob("*.json")]
    by_setting = {_setting(r["experiment"]): r for r in results}
    return {case["id"]: by_setting[_setting(case["experiment"])] for case in found}


def _setting(e: dict[str, Any]) -> tuple:
    return (e["model"], e["precision"], e["optimizer"], calculator.levers_of(e), e["batch_size"],
            e["seq_len"])
