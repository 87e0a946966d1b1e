"""The README's Python examples run as written: each ```python block in a fresh Python, in an
empty folder, with nothing on stdout the example did not print."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, cli_env

BLOCKS = re.findall(r"^```python\n(.*?)^```$", (REPO_ROOT / "README.md").read_text("utf-8"),
                    re.MULTILINE | re.DOTALL)


def test_the_readme_has_its_examples() -> None:
    assert len(BLOCKS) >= 2
    assert any("generator.estimate(" in block for block in BLOCKS)
    assert any("generator.track(" in block for block in BLOCKS)


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None,
                    reason="the README's examples name hf: models: pip install -e '.[hf]'")
@pytest.mark.parametrize("block", BLOCKS, ids=lambda block: block.split("\n")[-2][:40])
def test_a_readme_example_runs(block: str, tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, env=cli_env(),
                         capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip(), "an example prints what it found"
    for line in run.stdout.splitlines():
        assert "profiler_start" not in line and "USDT" not in line, line
    if "tracked.save(" in block:
        saved = Path(tmp_path, run.stdout.splitlines()[-1])
        assert saved.is_file() and saved.is_relative_to(tmp_path / "docs" / "data")
