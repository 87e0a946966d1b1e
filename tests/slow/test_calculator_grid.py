"""The calculator's JavaScript (docs/assets/calculator.js with planning.js and
caching-allocator.js), run in node on the committed calculator data, gives for every GPU of
the catalogue, over a grid of sizes, the verdict and the largest batch that its Python twin
(plan/predictor/verdicts.py, on plan/fit.py and plan/search.py) gives. Slow: hundreds of
allocator replays on each side."""

from __future__ import annotations

from pathlib import Path

from conftest import REPO_ROOT
from node_scripts import run_node

from generator import results
from generator.site.pages import calculator
from generator.plan.predictor import verdicts

ASSETS = REPO_ROOT / "docs" / "assets"
#: (batch, sequence) at which each verdict is compared; the largest batch at each sequence.
SIZES = ((1, 64), (8, 128), (48, 256), (200, 512), (3000, 64))
#: Settings of the article's models and of a fine-tuning model with a template of its own
#: for batch 1 and micro-batches: (model, method, precision, levers).
FITS = (("bert-base", "full", "fp32", "none"), ("gpt2-small", "full", "amp-bf16", "ckpt"),
        ("hf:meta-llama/Llama-3.2-1B", "lora", "amp-bf16", "ckpt+accum-2"),
        # where the widget opens (calculator.START)
        ("hf:meta-llama/Llama-3.1-8B", "lora", "bf16", "ckpt"))
DRIVER = """
const assets = require("path").dirname(process.argv[2]);
global.window = {};
global.document = {readyState: "complete", querySelectorAll: () => []};
window.replayPeaks = require(assets + "/caching-allocator.js").replayPeaks;
window.planning = require(assets + "/planning.js");
require(assets + "/calculator.js");
const m = window.calculatorMirror;
const cases = JSON.parse(require("fs").readFileSync(process.argv[3], "utf8"));
console.log(JSON.stringify(cases.map((c) => {
  const pred = m.predictor(c.fit, c.templates, c.constants);
  return {verdicts: c.sizes.map(([b, s]) => c.gpus.map((g) => m.verdict(pred, g, b, s).word)),
          largest: c.seqs.map((s) => c.gpus.map((g) => m.largestBatch(pred, g, s)))};
})));
"""


def test_the_widget_answers_as_the_python_does(tmp_path: Path) -> None:
    found = [r for r in results.load_all(REPO_ROOT / "docs" / "data")]
    ctx = calculator.context(found, [])
    assert ctx is not None, "the committed results hold the calculator's grid"
    cases = []
    for setting in FITS:
        fit = next(f for f in ctx["fits"] if (f["model"], f["method"], f["precision"],
                                              f["levers"]) == setting)
        templates = {e["name"]: ctx["replays"][e["name"]] for e in fit["replays"]}
        cases.append({"fit": fit, "templates": templates, "gpus": ctx["gpus"], "sizes": SIZES,
                      "seqs": sorted({s for _, s in SIZES}), "constants": ctx["constants"]})
    answers = run_node(ASSETS / "calculator.js", DRIVER, cases, tmp_path)
    words = set()
    for case, js in zip(cases, answers):
        fit, template = case["fit"], case["templates"]
        assert template and all("workspace" in t for t in template.values())  # each GPU's own
        for (batch, seq), row in zip(SIZES, js["verdicts"]):
            expected = [verdicts.verdict(fit, gpu, batch, seq, template).word
                        for gpu in case["gpus"]]
            assert row == expected, (fit["name"], batch, seq)
            words.update(row)
        for seq, row in zip(case["seqs"], js["largest"]):
            assert row == [verdicts.largest_batch(fit, gpu, seq, template)
                           for gpu in case["gpus"]], (fit["name"], seq)
    assert {"yes", "no"} <= words  # the grid reaches both ends of the rule
