"""The calculator's JavaScript (docs/assets/calculator.js with planning.js and
caching-allocator.js), run in node on the committed calculator data, gives for every GPU of
the catalogue, over a grid of sizes, the verdict and the largest batch that its Python twin
(site/pages/calculator/verdicts.py, on plan/fit.py and plan/search.py) gives. Slow: hundreds of
allocator replays on each side."""

from __future__ import annotations

from pathlib import Path

from conftest import REPO_ROOT
from node_scripts import run_node

from generator import results
from generator.site.pages import calculator
from generator.site.pages.calculator import verdicts

ASSETS = REPO_ROOT / "docs" / "assets"
#: (batch, sequence) at which each verdict is compared; the largest batch at each sequence.
SIZES = ((1, 64), (8, 128), (48, 256), (200, 512), (3000, 64))
#: Two lever sets of each model: the plain step and checkpointing under AMP.
FITS = (("bert-base", "fp32", "none"), ("gpt2-small", "amp-bf16", "ckpt"))
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
  const pred = m.predictor(c.fit, c.template);
  return {verdicts: c.sizes.map(([b, s]) => c.gpus.map((g) => m.verdict(pred, g, b, s).word)),
          largest: c.seqs.map((s) => c.gpus.map((g) => m.largestBatch(pred, g, s)))};
})));
"""


def test_the_widget_answers_as_the_python_does(tmp_path: Path) -> None:
    found = [r for r in results.load_all(REPO_ROOT / "results")]
    ctx = calculator.context(found, [])
    assert ctx is not None, "the committed results hold the calculator's grid"
    cases = []
    for model, precision, levers in FITS:
        fit = next(f for f in ctx["fits"] if (f["model"], f["precision"], f["levers"])
                   == (model, precision, levers))
        cases.append({"fit": fit, "template": ctx["replays"].get(fit["replay"]),
                      "gpus": ctx["gpus"], "sizes": SIZES,
                      "seqs": sorted({s for _, s in SIZES})})
    answers = run_node(ASSETS / "calculator.js", DRIVER, cases, tmp_path)
    words = set()
    for case, js in zip(cases, answers):
        fit, template = case["fit"], case["template"]
        assert template is not None and "workspace" in template  # each GPU's own workspace
        for (batch, seq), row in zip(SIZES, js["verdicts"]):
            expected = [verdicts.verdict(fit, gpu, batch, seq, template).word
                        for gpu in case["gpus"]]
            assert row == expected, (fit["replay"], batch, seq)
            words.update(row)
        for seq, row in zip(case["seqs"], js["largest"]):
            assert row == [verdicts.largest_batch(fit, gpu, seq, template)
                           for gpu in case["gpus"]], (fit["replay"], seq)
    assert {"yes", "no"} <= words  # the grid reaches both ends of the rule
