"""Running the site's JavaScript (docs/assets/) in node, against the Python it mirrors."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from generator.site.calculator_grid.fits import slug

DATA = Path(__file__).resolve().parents[1] / "docs" / "data"
#: The start of a driver of the calculator widget (run_node's script: calculator.js): its
#: scripts loaded as the page loads them, its functions as `m`, the cases as `cases`.
WIDGET = """
const assets = require("path").dirname(process.argv[2]);
global.window = {};
global.document = {readyState: "complete", querySelectorAll: () => []};
window.replayPeaks = require(assets + "/caching-allocator.js").replayPeaks;
window.planning = require(assets + "/planning.js");
require(assets + "/calculator.js");
const m = window.calculatorMirror;
const cases = JSON.parse(require("fs").readFileSync(process.argv[3], "utf8"));
"""


def run_node(script: Path, driver: str, cases: Any, tmp_path: Path) -> Any:
    """`driver` (JavaScript: argv[2] is `script`, argv[3] the cases' JSON file) run once in
    node over `cases`; what it prints, as JSON. Skipped, with the reason, without node."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the JavaScript copy cannot be run")
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    (tmp_path / "driver.js").write_text(driver)
    out = subprocess.run([node, str(tmp_path / "driver.js"), str(script),
                          str(tmp_path / "cases.json")],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    return json.loads(out)


def widget_fits(models: tuple[str, ...]) -> list[dict]:
    """The fits of `models` with their templates, read from the committed data files as the
    widget loads them: [{"fit": ..., "templates": {name: template}}]."""
    found = []
    for model in models:
        text = (DATA / "calculator" / f"model-{slug(model)}.js").read_text(encoding="utf-8")
        for fit in json.loads(text.split("] = ", 1)[1].rstrip().rstrip(";")):
            templates = {}
            if fit["replays"]:
                path = DATA / "calculator" / f"{fit['name']}.js"
                for line in path.read_text(encoding="utf-8").splitlines():
                    name = json.loads(line.split(")[", 1)[1].split("] = ", 1)[0])
                    templates[name] = json.loads(line.split("] = ", 1)[1].rstrip(";"))
            found.append({"fit": _without_nan(fit), "templates": templates})
    return found


def _without_nan(value: Any) -> Any:
    """The fit with its NaNs (a leave-one-out spread that could not be had, which the widget
    does not read) left out: JSON, which the cases travel in, has none."""
    if isinstance(value, dict):
        return {k: _without_nan(v) for k, v in value.items() if v == v}
    return [_without_nan(v) for v in value] if isinstance(value, list) else value
