"""`python -m generator run`, in this process (`generator.cli.main`) and through its runner
(simulate/runner.py): the script runs as Python runs it (its own sys.argv, __main__,
sys.path[0], exit status and traceback; everything after it is its own), the report is
printed after it, and mistakes end as one line with exit status 2. Tiny scripts on fake
tensors; the example's run in a subprocess: slow/test_run_script.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import assert_refused

from generator.errors import ConfigError, GeneratorError
from generator.simulate.runner import Script

RECORDS = '''
import json, pathlib, sys
pathlib.Path(sys.argv[1]).write_text(json.dumps({
    "argv": sys.argv, "name": __name__, "path0": sys.path[0],
    "main": sys.modules["__main__"].__dict__ is globals()}))
'''

TRAINS = '''
import sys, torch
from torch import nn
model = nn.Linear(64, 64).to("cuda")
optimizer = torch.optim.AdamW(model.parameters())
for step in range(int(sys.argv[1])):
    loss = model(torch.randn(8, 64, device="cuda")).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"step {step} loss {loss.item():.3f} allocated {torch.cuda.memory_allocated()}")
'''


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_script_gets_its_own_argv_main_and_path(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    script = _write(tmp_path / "sub", "records.py", RECORDS)
    out = tmp_path / "seen.json"
    argv, path, main = list(sys.argv), list(sys.path), sys.modules["__main__"]
    assert Script(str(script), (str(out), "--steps", "5", "-m", "x")).run() == 0
    seen = json.loads(out.read_text())
    assert seen == {"argv": [str(script), str(out), "--steps", "5", "-m", "x"],
                    "name": "__main__", "path0": str(script.parent), "main": True}
    assert (sys.argv, sys.path, sys.modules["__main__"]) == (argv, path, main)


def test_a_module_runs_as_python_m_runs_it(tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "userpkg"
    package.mkdir()
    _write(package, "__init__.py", "")
    _write(package, "records.py", RECORDS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "seen.json"
    assert Script("userpkg.records", (str(out), "a"), module=True).run() == 0
    seen = json.loads(out.read_text())
    assert seen["argv"] == [str(package / "records.py"), str(out), "a"]
    assert seen["name"] == "__main__" and seen["path0"] == str(tmp_path)
    with pytest.raises(ConfigError, match="no module named 'userpkg.nothing'"):
        Script("userpkg.nothing", module=True).check()


@pytest.mark.parametrize("ending, status", [("sys.exit(4)", 4), ("sys.exit()", 0),
                                            ("raise SystemExit(None)", 0)])
def test_the_script_s_exit_status_is_its_own(tmp_path: Path, ending: str, status: int) -> None:
    assert Script(str(_write(tmp_path, "ends.py", f"import sys\n{ending}\n"))).run() == status


def test_the_script_s_exception_prints_its_own_traceback(tmp_path: Path, capsys) -> None:
    script = _write(tmp_path, "fails.py", "def inner():\n    raise ValueError('mine')\n\n"
                                          "inner()\n")
    assert Script(str(script)).run() == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):\n  File \"" + str(script))
    assert "ValueError: mine" in err and "runpy" not in err and "runner.py" not in err


def test_a_mistake_against_the_tool_passes_through(tmp_path: Path) -> None:
    script = _write(tmp_path, "mistake.py",
                    "from generator.errors import ConfigError\nraise ConfigError('no')\n")
    with pytest.raises(GeneratorError, match="no"):
        Script(str(script)).run()
    with pytest.raises(ConfigError, match="no script at"):
        Script(str(tmp_path / "missing.py")).check()


# --------------------------------------------------------------------------- the command


def test_run_prints_the_script_then_the_report(cli, tmp_path: Path) -> None:
    script = _write(tmp_path, "trains.py", TRAINS)
    report = tmp_path / "report.json"
    done = cli(["run", "--gpu", "4090", "--steps", "2", "--json", report, script, "5"],
               tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.index("step 0 loss 0.000") < out.index("simulated NVIDIA GeForce RTX 4090")
    assert "step 1 loss" not in out  # stopped at its second optimizer step, before the print
    assert "stopped after 2 optimizer steps" in out and "fits in NVIDIA GeForce RTX 4090" in out
    assert f"  {script}:11: item\n" in out  # the loss printed once, as a placeholder
    data = json.loads(report.read_text())
    assert len(data["steps"]) == 2 and data["verdict"] == "yes"
    assert all(set(s) >= {"allocated_bytes", "reserved_bytes"} for s in data["steps"])
    assert data["reserved_bytes"] >= data["allocated_bytes"] >= data["peak_bytes"] > 0


def test_run_with_no_gpu_named_says_which_it_assumed(cli, tmp_path: Path) -> None:
    done = cli(["run", "--steps", "all", _write(tmp_path, "trains.py", TRAINS), "1"], tmp_path)
    assert done.returncode == 0 and "H100 80GB HBM3 (assumed: --gpu NAME for yours)" in \
        done.stdout


def test_a_run_that_does_not_fit_exits_3(cli, tmp_path: Path) -> None:
    script = _write(tmp_path, "too_big.py", (
        "import torch\ntry:\n    torch.empty(2**31, dtype=torch.uint8, device='cuda')\n"
        "except torch.cuda.OutOfMemoryError as error:\n    print('caught', error)\n"))
    done = cli(["run", "--gpu-memory", "1GiB", script], tmp_path)
    assert done.returncode == 3 and "caught CUDA out of memory" in done.stdout
    assert ": no, " in done.stdout


def test_a_script_that_raises_exits_1_after_the_report(cli, tmp_path: Path) -> None:
    done = cli(["run", _write(tmp_path, "fails.py", "raise KeyError('mine')\n")], tmp_path)
    assert done.returncode == 1 and "KeyError: 'mine'" in done.stderr
    assert "simulated NVIDIA H100" in done.stdout


@pytest.mark.parametrize("args, needles", [
    (["run", "missing.py"], ("no script at missing.py",)),
    (["run", "--steps", "0", "x.py"], ("--steps", "positive integer or 'all'")),
    (["run", "--steps", "some", "x.py"], ("--steps", "'some'")),
    (["run"], ("give a script to run",)),
    (["run", "--gpu", "nosuchgpu", "x.py"], ("nosuchgpu",)),
    (["run", "--json", "nowhere/report.json", "x.py"], ("--json", "nowhere")),
])
def test_bad_run_arguments_end_as_one_line(cli, tmp_path: Path, args: list[str],
                                           needles: tuple[str, ...]) -> None:
    _write(tmp_path, "x.py", "")
    assert_refused(cli, tmp_path, args, *needles)


def test_a_custom_cuda_extension_ends_as_one_line_naming_the_call(cli, tmp_path: Path) -> None:
    script = _write(tmp_path, "extension.py", (
        "from torch.utils.cpp_extension import load\n"
        "load(name='mine', sources=['mine.cu'])\n"))
    assert_refused(cli, tmp_path, ["run", script], "torch.utils.cpp_extension.load",
                   "cannot model")
