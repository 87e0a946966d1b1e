"""The calculator's JavaScript (docs/assets/calculator.js with planning.js and
caching-allocator.js), run in node on the committed calculator data as the widget loads it,
gives the verdict and the largest batch that its Python twin (plan/predictor/verdicts.py, on
plan/fit.py and plan/search.py) gives: for each family and method of FITS, at every size of
SIZES (the largest batch at one of their sequences), on a sample of the catalogue's GPUs
(both cuBLAS workspaces, the smallest memory to the largest). A sample: what the widget
computes beside the predictor at any size is unit/test_calculator_js.py's, and the whole grid
of fitted settings, at sizes the fits never saw, is `python -m generator validate --only
calculator`'s. Slow: node, and dozens of allocator replays on each side."""

from __future__ import annotations

import json
from pathlib import Path

from node_scripts import DATA, WIDGET, run_node, widget_fits

from generator.plan.predictor import verdicts

ASSETS = DATA.parent / "assets"
#: (batch, sequence) at which each verdict is compared; the largest batch at one of these
#: sequences for each setting, a different one for each.
SIZES = ((1, 64), (8, 128), (48, 256), (200, 512), (3000, 64))
#: Settings of the article's models and of a fine-tuning model with a template of its own
#: for batch 1 and micro-batches: (model, method, precision, levers).
FITS = (("bert-base", "full", "fp32", "none"), ("gpt2-small", "full", "amp-bf16", "ckpt"),
        ("hf:meta-llama/Llama-3.2-1B", "lora", "amp-bf16", "ckpt+accum-2"),
        # where the widget opens (calculator.START)
        ("hf:meta-llama/Llama-3.1-8B", "lora", "bf16", "ckpt"))
#: GPUs of the catalogue to ask on: 12 GiB and an 8 MiB workspace, 32 GiB and 32 MiB, and
#: the largest memory.
GPUS = ("RTX 3060", "RTX 5090", "B200")
DRIVER = WIDGET + """
console.log(JSON.stringify(cases.map((c) => {
  const pred = m.predictor(c.fit, c.templates, c.constants);
  return {verdicts: c.sizes.map(([b, s]) => c.gpus.map((g) => m.verdict(pred, g, b, s).word)),
          largest: c.seqs.map((s) => c.gpus.map((g) => m.largestBatch(pred, g, s)))};
})));
"""


def test_the_widget_answers_as_the_python_does(tmp_path: Path) -> None:
    catalogue = json.loads((DATA / "calculator.json").read_text(encoding="utf-8"))
    gpus = [gpu for gpu in catalogue["gpus"] if gpu["short_name"] in GPUS]
    assert len(gpus) == len(GPUS) and len({g["workspace_bytes"] for g in gpus}) == 2
    fits = widget_fits(tuple(dict.fromkeys(model for model, *_ in FITS)))
    cases = []
    seqs = sorted({s for _, s in SIZES})
    for i, setting in enumerate(FITS):
        found = next(f for f in fits if (f["fit"]["model"], f["fit"]["method"],
                                         f["fit"]["precision"], f["fit"]["levers"]) == setting)
        cases.append({"fit": found["fit"], "templates": found["templates"], "gpus": gpus,
                      "sizes": SIZES, "seqs": [seqs[i % len(seqs)]],
                      "constants": catalogue["constants"]})
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
