"""Running the site's JavaScript (docs/assets/) in node, against the Python it mirrors."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest


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
