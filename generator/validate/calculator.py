"""The calculator against fresh estimates at sizes its fits never saw.

For every model and method of the committed fits, the plain setting (no lever) at three sizes
spread over its range (batch 1, which has a template of its own, and two sizes of two samples
or more), and the article's models at four: the replay of the setting's fitted allocation
trace must give the allocated and the reserved peak within 0.5 % of a fresh estimate's, and
the tensors' peak as the replay counts it within 0.5 % too (to the byte, in fact, where the
replay holds).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generator.site.pages import calculator
from generator.plan.predictor import replay, verdicts
from generator.site.calculator_grid.fits import levers_of
from generator.site.calculator_grid.keys import grid_keys
from generator.site.render import read_results

#: The bound a replayed figure is held to; the replay is exact where its size formulas are.
WITHIN = 0.005
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


def committed(results_dir: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The calculator's context from the stored results, and its grid's results by key."""
    found, studies = read_results(Path(results_dir))
    results = [r for _, r in found]
    ctx = calculator.context(results, studies)
    if ctx is None:
        raise LookupError(f"no calculator results under {results_dir}: measure fine_tune.toml "
                          "and calculator.toml first")
    keys = grid_keys()  # expands two suite files: once, not once a result
    return ctx, {r["key"]: r for r in results if r["key"] in keys}


def cases(ctx: dict[str, Any], by_key: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each held-out case: its fit, size, the experiment to estimate afresh and its family
    (the model's architecture, for the test suite's sample)."""
    found = []
    for fit in ctx["fits"]:
        plain = fit["levers"] == "none"
        if fit["model"].startswith("hf:") and plain:
            sizes = SIZES_BY_LONGEST[fit["range"]["seq"][1]]
        else:
            sizes = [(b, s) for m, p, lv, b, s in ARTICLE_CASES
                     if (m, p, lv) == (fit["model"], fit["precision"], fit["levers"])]
        first = by_key[fit["points"][0]["key"]]
        for batch, seq in sizes:
            experiment = dict(first["experiment"])
            experiment.update(batch_size=batch * fit["micro_batches"], seq_len=seq,
                              allocation_trace=False)
            found.append({"fit": fit, "batch": batch, "seq": seq, "experiment": experiment,
                          "family": family(fit["model"]),
                          "parameters": first.get("parameter_count") or 0,
                          "id": f"{fit['name']}-b{batch}-s{seq}"})
    return found


def family(model: str) -> str:
    """A model's architecture family, from its name: llama, qwen2, gemma2, bert, …"""
    name = model.removeprefix("hf:").split("/")[-1].lower()
    for known in ("llama", "qwen2", "mistral", "gemma-2-", "gemma", "phi", "granite", "bert",
                  "gpt2"):
        if name.startswith(known):  # gemma-2-2b is Gemma 2; gemma-2b the first Gemma
            return known.rstrip("-")
    return name


def sample(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One case per architecture family and method, the family's smallest model at its
    smallest size (the quickest to estimate): what the test suite keeps, so that a regression
    of any family still fails it; `python -m generator validate` runs them all."""
    chosen: dict[tuple[str, str], dict[str, Any]] = {}
    for case in sorted(found, key=lambda c: (c["parameters"], c["batch"] * c["seq"])):
        chosen.setdefault((case["family"], case["fit"]["method"]), case)
    return sorted(chosen.values(), key=lambda c: c["id"])


def suite_text(found: list[dict[str, Any]]) -> str:
    """The cases' experiments as a suite file for the measure command."""
    lines = []
    for case in found:
        fields = {k: v for k, v in case["experiment"].items() if v not in (None, "", [], ())}
        lines.append("[[experiment]]\n" + "".join(f"{k} = {json.dumps(v)}\n"
                                                  for k, v in sorted(fields.items())))
    return "\n".join(lines)


def by_case(found: list[dict[str, Any]], results: list[dict[str, Any]]
            ) -> dict[str, dict[str, Any]]:
    """Each case's fresh estimate, by case id, from the results of its suite."""
    by_setting = {_setting(r["experiment"]): r for r in results}
    return {case["id"]: by_setting[_setting(case["experiment"])] for case in found}


def compare(case: dict[str, Any], result: dict[str, Any], ctx: dict[str, Any]
            ) -> dict[str, Any]:
    """The replay's figures for one case against its fresh estimate: each as replay ÷
    estimate, and whether all three are within WITHIN."""
    fit, batch, seq = case["fit"], case["batch"], case["seq"]
    gpu = next(g for g in ctx["gpus"] if g["name"] == ctx["start"]["gpu"])
    shown = verdicts.figures(fit, gpu, batch, seq, ctx["replays"])
    template = verdicts.Predictor(fit, ctx["replays"]).template(batch)
    tensors = replay.tensors_peak(template, batch * fit["micro_batches"], seq) \
        if template else None
    truth = result["allocator"]
    ratios = {"allocated": shown["allocated"] / truth["peak_allocated_bytes"],
              "reserved": shown["reserved"] / truth["peak_reserved_bytes"],
              "tensors": (tensors or 0) / result["peak_bytes"]}
    return {"id": case["id"], "family": case["family"], "in_range": bool(shown["in_range"]),
            "replays": bool(fit["replays"]), **{f"{k}_ratio": v for k, v in ratios.items()},
            "within": bool(fit["replays"] and shown["in_range"] and
                           all(abs(v - 1) <= WITHIN for v in ratios.values()))}


def _setting(e: dict[str, Any]) -> tuple:
    return (e["model"], e["precision"], e["optimizer"], levers_of(e), e["batch_size"],
            e["seq_len"])
