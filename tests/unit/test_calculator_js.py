"""docs/assets/calculator.js, the widget's copy of the calculator's predictor
(plan/predictor/: replay.py, planes.py, verdicts.py), answers as the Python does on the
widget's data as committed: each template's events and the tensors' peak, one setting's peaks
at any size (replayed, or from the planes where no template holds the batch), whether a size
lies in the fitted range, and what fills the peak, all in one node process. The constants the
two share reach the JavaScript as the render writes them (calculator.widget_constants). The
verdicts and the largest batch on a sample of GPUs: slow/test_calculator_grid.py."""

from __future__ import annotations

import json
from pathlib import Path

from node_scripts import DATA, WIDGET, run_node, widget_fits

from generator.plan.predictor import replay, verdicts
from generator.plan.predictor.verdicts import Predictor
from generator.site.calculator_grid.fits import CATEGORIES
from generator.site.pages.calculator import widget_constants

ASSETS = DATA.parent / "assets"
#: Models whose fits hold both kinds of composition (a floor, planes alone), templates from
#: batch 4 up (batches 1 to 3 from the planes), for batch 1 and from 2, and two micro-batches.
MODELS = ("bert-base", "hf:bert-base-uncased")
#: The fits replayed at a few sizes (a replay costs): one of each kind of template.
REPLAYED = ("bert-base-fp32-adamw-ckpt",
            "hf-bert-base-uncased-amp-bf16-adamw-ckpt-accum-2-task-sequence-classification")
#: Sizes around and inside the fits' ranges, in and out of each interval.
SIZES = ((1, 64), (2, 512), (3, 1024), (4, 64), (8, 256), (64, 512), (300, 512), (1, 8192),
         (16, 4096), (128, 2048))
#: cuBLAS workspaces to replay with: the estimates' own, and two GPUs'.
WORKSPACES = (None, 0, 8 * 2**20)
DRIVER = WIDGET + """
const k = cases.constants;
console.log(JSON.stringify(cases.fits.map((c) => {
  const pred = m.predictor(c.fit, c.templates, k);
  const ws = (w) => (w === null ? undefined : w);
  return {
    in_range: cases.sizes.map(([b, s]) => m.inRange(c.fit, b, s)),
    composition: cases.sizes.map(([b, s]) => m.composition(c.fit, b, s, cases.categories)),
    peaks: c.sizes.map(([b, s, w]) => pred.peaks(b, s, ws(w))),
    events: c.events.map(([name, b, s, w]) => {
      const e = m.eventsAt(c.templates[name], b, s, ws(w), k.monomials);
      return {events: Array.from(e), tensors: m.tensorsPeak(e)}; }),
  };
})));
"""


def _cases() -> dict:
    fits = widget_fits(MODELS)
    for case in fits:
        if case["fit"]["name"] not in REPLAYED:
            case["sizes"], case["events"] = [], []
            continue
        seqs = {p["seq"] for p in case["fit"]["points"]}
        case["sizes"] = [[b, s, w] for b, s in ((1, min(seqs)), (2, min(seqs)), (5, max(seqs)))
                         for w in WORKSPACES[1:]]
        case["events"] = [[name, b * case["fit"]["micro_batches"], s, w]
                          for name in case["templates"] for b, s in ((1, min(seqs)), (3, 300))
                          for w in WORKSPACES]
    return {"fits": fits, "sizes": SIZES, "categories": list(CATEGORIES),
            "constants": widget_constants()}


def test_the_committed_data_holds_the_constants_the_python_has() -> None:
    """The render writes them (calculator.json); the widget reads them there."""
    top = json.loads((DATA / "calculator.json").read_text(encoding="utf-8"))
    assert top["constants"] == widget_constants()


def test_the_widget_computes_what_the_predictor_does(tmp_path: Path) -> None:
    cases = _cases()
    found = run_node(ASSETS / "calculator.js", DRIVER, cases, tmp_path)
    reached = set()
    for case, js in zip(cases["fits"], found):
        fit, templates = case["fit"], case["templates"]
        assert js["in_range"] == [verdicts.in_range(fit, b, s) for b, s in SIZES], fit["name"]
        reached |= {("in range", v) for v in js["in_range"]}
        shares = [verdicts.composition(fit, b, s, CATEGORIES) for b, s in SIZES]
        assert js["composition"] == shares, fit["name"]
        reached |= {("composition", _branch(fit, b, s)) for b, s in SIZES}
        predictor = Predictor(fit, templates)
        for (batch, seq, workspace), peaks in zip(case["sizes"], js["peaks"]):
            template = predictor.template(batch)
            expected = list(predictor.peaks(batch, seq, workspace)) + [
                replay.tensors_peak(template, batch * fit["micro_batches"], seq)
                if template else None]
            assert peaks == expected, (fit["name"], batch, seq, workspace)
            reached.add(("replayed", template is not None))
        for (name, batch, seq, workspace), shown in zip(case["events"], js["events"]):
            template = templates[name]
            assert shown["events"] == replay.events_at(template, batch, seq, workspace), name
            assert shown["tensors"] == replay.tensors_peak(template, batch, seq), name
        reached |= {("micro-batches", fit["micro_batches"])}
    assert reached >= {("in range", True), ("in range", False), ("composition", "planes"),
                       ("composition", "floor"), ("replayed", True), ("replayed", False),
                       ("micro-batches", 1), ("micro-batches", 2)}


def test_a_size_inside_both_intervals_is_in_range_whatever_template_holds_it(tmp_path) -> None:
    """The range is the two intervals the widget's warning names: a batch no template holds
    (the figures then come from the planes, which the widget says) is still in range."""
    fit = {"range": {"tokens": [256, 4096], "seq": [128, 1024]},
           "replays": [{"name": "t", "batch": [4, None]}]}
    sizes = [(1, 512), (2, 1024), (4, 128), (8, 1024), (1, 128)]
    expected = [True, True, True, False, False]
    driver = WIDGET + (
        "console.log(JSON.stringify(cases.sizes.map(([b, s]) => m.inRange(cases.fit, b, s))));")
    found = run_node(ASSETS / "calculator.js", driver, {"fit": fit, "sizes": sizes}, tmp_path)
    assert found == [verdicts.in_range(fit, b, s) for b, s in sizes] == expected


def _branch(fit: dict, batch: int, seq: int) -> str | None:
    """Which of composition's two answers a size takes, for the test's coverage."""
    shares = verdicts.composition(fit, batch, seq, CATEGORIES)
    if shares is None:
        return None
    floor = fit["allocated"]["floor"]
    plane = {key: fit["allocated"][key] for key in ("fixed", "per_token", "per_token_sq")}
    grows = floor == 0 or verdicts.predict(plane, batch, seq) >= floor
    return "planes" if grows and fit["composition"].get("planes") else "floor"
