"""A script run two ways on this CPU, for the slow tests of the shipped examples
(generator/examples/): for real, its allocator's peak read from the profiler's memory events
as the `cpu` backend reads it, and as `python -m generator run --device cpu`, the simulation
modelling this CPU. The check of truth is that the two agree within 1 % (no constant tuned
to it): the simulation counts every storage the script makes and the buffers the CPU's
kernels hold; the profiler counts every block c10's CPU allocator hands out while the script
runs. Each run has a process of its own, as the user's would: frameworks keep state for the
process (accelerate's AcceleratorState cannot be made twice with other settings)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import warm_python
from conftest import cli_env, run_cli
from torch.profiler import ProfilerActivity, profile, record_function

from generator.measure import quiet_profiler
from generator.measure.backends.cpu import allocator_peak_bytes
from generator.simulate.pretrained import ON_THE_SCRIPTS_THREAD
from generator.simulate.runner import Script

WINDOW = "generator::script"
#: How far the simulation of the CPU may be from the real run.
TOLERANCE = 0.01


def profiled_peak(script: str, args: list[str]) -> int:
    """The CPU allocator's peak while `script` runs for real in this process."""
    with quiet_profiler(), profile(activities=[ProfilerActivity.CPU],
                                   profile_memory=True) as prof:
        with record_function(WINDOW):
            status = Script(script, tuple(args)).run()
    if status:
        raise SystemExit(f"the script ended with status {status}")
    return allocator_peak_bytes(prof, WINDOW)


def real_cpu_peak(script: Path, args: tuple[str, ...], cwd: Path) -> int:
    """The CPU allocator's peak while `script` runs for real, in a process of its own. The
    profiler sees the allocations of the script's thread alone, so a checkpoint is loaded
    there, as the simulation loads it (pretrained.ON_THE_SCRIPTS_THREAD)."""
    done = warm_python.run(__file__, [str(script), *args], cwd,
                           {**cli_env(), **ON_THE_SCRIPTS_THREAD}, timeout=600)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip().splitlines()[-1])


def simulated_cpu_peak(tmp_path: Path, script: Path, args: tuple[str, ...]) -> int:
    """The same as `run --device cpu --steps all` reports it, in a process of its own."""
    report = tmp_path / "cpu-report.json"
    done = run_cli(["run", "--device", "cpu", "--steps", "all", "--json", report, script,
                    *args], tmp_path)
    assert done.returncode == 0, done.stderr
    return json.loads(report.read_text())["allocated_bytes"]


def assert_cpu_agrees(tmp_path: Path, script: Path, args: tuple[str, ...] = ()) -> None:
    real = real_cpu_peak(script, args, tmp_path)
    simulated = simulated_cpu_peak(tmp_path, script, args)
    assert abs(simulated - real) <= TOLERANCE * real, (simulated, real)


def run_on_a_gpu(tmp_path: Path, script: Path, args: tuple[str, ...] = (),
                 gpu: str = "RTX 4090", steps: int = 3) -> tuple[str, dict]:
    """`run --gpu GPU --json FILE SCRIPT ARGS`: its output and its JSON report, after
    checking that it printed a row per optimizer step and the verdict."""
    report = tmp_path / "gpu-report.json"
    done = run_cli(["run", "--gpu", gpu, "--json", report, script, *args], tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(report.read_text())
    assert len(data["steps"]) == steps and data["verdict"] == "yes"
    table = done.stdout.split("optimizer step")[1].splitlines()[1:steps + 1]
    assert [row.split()[0] for row in table] == [str(n) for n in range(1, steps + 1)]
    assert f"fits in NVIDIA GeForce {gpu}" in done.stdout
    return done.stdout, data


if __name__ == "__main__":  # real_cpu_peak's process: SCRIPT ARGS…, the peak printed last
    print(profiled_peak(sys.argv[1], sys.argv[2:]))
