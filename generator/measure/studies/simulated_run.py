"""Study `simulated_run`: a script shipped with the package, run on a simulated GPU as a user
runs it, `python -m generator run --gpu GPU SCRIPT ARGS`: what the command printed, its exit
status and its JSON report (`--json`; with `--snapshot`, so that the report holds the
timeline of the allocator's history), for the page "Run your own script", which shows them
without importing PyTorch.

The command runs in a process of its own, as the user's would, from the folder that holds
the package, so that the script's path, and every place in the report that names it, reads
`generator/examples/…` on any machine. Nothing is allocated: the figures are estimated.

params: script (a path under the package's examples, e.g. generator/examples/plain_loop.py),
gpu (a GPU of the catalogue), args (the script's own arguments, default none).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from generator.errors import ModelError
from generator.measure.studies import unknown_params
from generator.plan.fit import DOES_NOT_FIT

VERSION = 2
BACKENDS = ("estimate",)
#: The folder that holds the package: the command runs there.
_ROOT = Path(__file__).resolve().parents[3]
#: The scripts it may run: the package's own examples, nothing from elsewhere.
_EXAMPLES = "generator/examples/"


def problems(params: dict[str, Any]) -> list[str]:
    found = unknown_params("simulated_run", params, ("script", "gpu", "args"))
    script = params.get("script")
    if not (isinstance(script, str) and script.startswith(_EXAMPLES) and script.endswith(".py")
            and ".." not in script and (_ROOT / script).is_file()):
        found.append(f"script must be one of the package's examples ({_EXAMPLES}NAME.py), "
                     f"got {script!r}")
    if not isinstance(params.get("gpu"), str):
        found.append("gpu must be a GPU of the catalogue, e.g. 'RTX 4090'")
    args = params.get("args", [])
    if not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        found.append("args must be a list of strings")
    return found


def command(params: dict[str, Any]) -> list[str]:
    """The command, as the page shows it and the user types it."""
    return ["python", "-m", "generator", "run", "--gpu", params["gpu"], params["script"],
            *params.get("args", [])]


def run(params: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        report, snapshot = Path(folder) / "report.json", Path(folder) / "snapshot.pickle"
        shown = command(params)
        done = subprocess.run([sys.executable, *shown[1:4], "--json", str(report),
                               "--snapshot", str(snapshot), *shown[4:]],
                              cwd=_ROOT, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, check=False)
        if done.returncode not in (0, DOES_NOT_FIT) or not report.is_file():
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise ModelError(f"{' '.join(shown)} ended with status {done.returncode}: {last}")
        # the printout as the command shown prints it: without the line --snapshot adds
        output = "".join(line for line in done.stdout.splitlines(keepends=True)
                         if not line.startswith("memory snapshot written to "))
        return {"command": shown, "exit_status": done.returncode, "output": output,
                "report": json.loads(report.read_text(encoding="utf-8"))}
