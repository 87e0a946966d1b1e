"""A process started warm (warm_python.py) is what a new interpreter would be: the same exit
status, standard streams, folder, arguments and environment, stdin empty, a seed of its own,
a timeout as subprocess.run's, and a cold start where the folder holds a copy of the tool."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import warm_python
from conftest import cli_env

SCRIPT = """\
import os, random, sys
print("argv", sys.argv[1:], "cwd", os.getcwd(), "stdin", repr(sys.stdin.read()))
print("env", os.environ.get("WARM_PYTHON_CHECK"), "path0", sys.path[0])
print("main", __name__, "transformers imported", "transformers" in sys.modules)
print("seed", random.random(), file=sys.stderr)
sys.exit(int(sys.argv[1]))
"""


def _cold(argv: list[str], cwd: Path, env: dict[str, str], timeout: float | None = None):
    return subprocess.run([sys.executable, *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=timeout)


def test_a_script_runs_as_in_a_new_interpreter(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(SCRIPT, encoding="utf-8")
    env = {**cli_env(), "WARM_PYTHON_CHECK": "é"}
    warm = warm_python.run(str(script), ["3", "an argument"], tmp_path, env)
    again = warm_python.run(str(script), ["3", "an argument"], tmp_path, env)
    cold = _cold([str(script), "3", "an argument"], tmp_path, env)
    assert warm.returncode == cold.returncode == 3
    assert warm.stdout == cold.stdout and "transformers imported False" in warm.stdout
    assert warm.stderr.startswith("seed ") and warm.stderr != again.stderr  # seeded anew


def test_a_module_runs_from_its_folder_and_says_what_the_cold_one_says(tmp_path: Path) -> None:
    args = ["estimate", "tiny", "-b", "2", "-s", "16", "--gpu", "no such gpu"]
    warm = warm_python.run("generator", args, tmp_path, cli_env(), module=True)
    cold = _cold(["-m", "generator", *args], tmp_path, cli_env())
    assert (warm.returncode, warm.stdout, warm.stderr) == \
        (cold.returncode, cold.stdout, cold.stderr)
    assert warm.returncode == 2 and warm.stderr.count("\n") == 1


def test_past_its_timeout_the_child_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "sleeps.py"
    script.write_text("import time\ntime.sleep(600)\n", encoding="utf-8")
    with pytest.raises(subprocess.TimeoutExpired):
        warm_python.run(str(script), [], tmp_path, cli_env(), timeout=1)
    script.write_text("print('after')\n", encoding="utf-8")
    assert warm_python.run(str(script), [], tmp_path, cli_env()).stdout == "after\n"
    missing = warm_python.run("missing.py", [], tmp_path, cli_env())
    assert missing.returncode == 2 and "can't open file" in missing.stderr  # python's own


def test_a_copy_of_the_tool_in_the_folder_is_the_one_imported(tmp_path: Path) -> None:
    (tmp_path / "generator").mkdir()
    (tmp_path / "generator" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "generator" / "__main__.py").write_text("print('the copy')\n", encoding="utf-8")
    done = warm_python.run("generator", [], tmp_path, cli_env(), module=True)
    assert done.stdout == "the copy\n"
