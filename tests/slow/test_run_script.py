"""`python -m generator run` as a user runs it, in a subprocess, on the shipped example
(generator/examples/plain_loop.py); and the check of truth: the same script run for real on
this CPU, its allocator's peak read from the profiler's memory events as the `cpu` backend
reads it, against `run --device cpu`, the simulation modelling this CPU (script_runs.py)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import REPO_ROOT, assert_refused, run_cli
from script_runs import assert_cpu_agrees

EXAMPLE = REPO_ROOT / "generator" / "examples" / "plain_loop.py"


def test_the_example_on_a_simulated_gpu(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_cli(["run", "--gpu", "RTX 4090", "--json", report, EXAMPLE, "--steps", "4"],
                   tmp_path)
    assert done.returncode == 0, done.stderr
    assert "step 3: loss 0.0000" in done.stdout  # the script's own prints, placeholders
    assert "max memory allocated:" in done.stdout  # it saw a CUDA GPU
    assert "simulated NVIDIA GeForce RTX 4090" in done.stdout and "nvidia-smi" in done.stdout
    data = json.loads(report.read_text())
    assert len(data["steps"]) == 4 and data["verdict"] == "yes"
    assert not data["stopped_after_steps"]
    printed = float(done.stdout.split("max memory allocated: ")[1].split(" MiB")[0])
    assert abs(printed * 2**20 - data["allocated_bytes"]) < 0.1 * 2**20  # the same figure


def test_the_example_as_a_module_stopped_after_its_steps(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_cli(["run", "--steps", "2", "--json", report, "-m",
                    "generator.examples.plain_loop", "--steps", "6"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "stopped after 2 optimizer steps" in done.stdout
    assert "assumed: --gpu NAME for yours" in done.stdout
    assert len(json.loads(report.read_text())["steps"]) == 2


def test_a_missing_script_is_one_line(tmp_path: Path) -> None:
    assert_refused(run_cli, tmp_path, ["run", "nothing.py"], "no script at nothing.py")


def test_the_simulation_of_the_cpu_against_a_real_run_on_it(tmp_path: Path) -> None:
    """Within 1 % (no constant tuned to it; script_runs.py)."""
    assert_cpu_agrees(tmp_path, EXAMPLE, ("--steps", "3"))


# ------------------------------------------------------------------ bad input, as a user meets it


def _script(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_script_that_raises_exits_1_with_its_own_traceback(tmp_path: Path) -> None:
    script = _script(tmp_path, "fails.py", "import torch\n\ndef step():\n"
                                           "    raise ValueError('the script\\'s own')\n\n"
                                           "x = torch.ones(2, device='cuda')\nstep()\n")
    done = run_cli(["run", script], tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f'Traceback (most recent call last):\n  File "{script}"')
    assert "ValueError: the script's own" in done.stderr
    assert "generator" not in done.stderr.replace(str(tmp_path), "")  # no frame of the tool's
    assert "simulated NVIDIA H100" in done.stdout  # the report of what ran until then


def test_a_custom_cuda_extension_ends_as_one_line(tmp_path: Path) -> None:
    """Refused where it is called, before anything is compiled (no compiler is needed)."""
    script = _script(tmp_path, "extension.py", (
        "from torch.utils.cpp_extension import load_inline\n"
        "mine = load_inline(name='mine', cpp_sources='', cuda_sources='__global__ void k() {}')\n"))
    assert_refused(run_cli, tmp_path, ["run", script], "torch.utils.cpp_extension.load_inline",
                   "custom CUDA extension", "cannot model")


def test_an_op_with_no_fake_kernel_ends_as_one_line_naming_it(tmp_path: Path) -> None:
    script = _script(tmp_path, "custom_op.py", (
        "import torch\n"
        "library = torch.library.Library('userlib', 'DEF')\n"
        "library.define('fused(Tensor x) -> Tensor')\n"
        "library.impl('fused', lambda x: x * 2, 'CUDA')\n"
        "x = torch.randn(8, device='cuda')\n"
        "y = torch.ops.userlib.fused(x)\n"))
    assert_refused(run_cli, tmp_path, ["run", script], f"{script}:6 calls userlib.fused.default",
                   "no fake kernel", "cannot run it")


def test_steps_0_is_one_line(tmp_path: Path) -> None:
    _script(tmp_path, "x.py", "")
    assert_refused(run_cli, tmp_path, ["run", "--steps", "0", "x.py"], "--steps",
                   "positive integer or 'all'")


def test_a_run_and_an_estimate_that_do_not_fit_exit_3(tmp_path: Path) -> None:
    """The status a CI job gates on, the same for both commands (plan/fit.py)."""
    from generator.plan.fit import DOES_NOT_FIT

    run = run_cli(["run", "--gpu", "RTX 3060", "--steps", "1", EXAMPLE, "--batch-size", "4096",
                   "--seq-len", "512"], tmp_path)
    assert run.returncode == DOES_NOT_FIT, run.stderr
    assert "fits in NVIDIA GeForce RTX 3060" in run.stdout and "out of memory" in run.stdout
    estimate = run_cli(["estimate", "gpt2-small", "-b", "16", "-s", "1024", "--gpu",
                        "RTX 3060"], tmp_path)
    assert estimate.returncode == DOES_NOT_FIT, estimate.stderr
    assert "fits in NVIDIA GeForce RTX 3060 (" in estimate.stdout and ": no, " in estimate.stdout
    fits = run_cli(["estimate", "gpt2-small", "-b", "1", "-s", "128", "--gpu", "H100"],
                   tmp_path)
    assert fits.returncode == 0, fits.stderr
