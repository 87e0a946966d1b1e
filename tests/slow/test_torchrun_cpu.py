"""The estimate of one rank of a multi-process step against real runs: `torchrun` starts 2 or
4 CPU processes on gloo (scripts/torchrun_step.py) that run the step the estimate models,
with DDP, FSDP2 (with and without its mixed-precision policy), tensor parallelism and
FSDP2 × TP, and each rank's CPU allocator peak (the profiler's memory events, with the frees
gloo's worker threads make put back: torchrun_step.gloo_frees) is compared with
`estimate … --device cpu --gpus N --parallel P`: within 1 % of the largest rank's, and of
every rank's where the ranks agree.

`PYTHONPATH=.:tests python tests/slow/test_torchrun_cpu.py [WORDS]` prints the table of the
cases (those whose model, process count and strategy contain every WORD)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch.distributed as dist
from conftest import REPO_ROOT, cli_env

import generator as g

if importlib.util.find_spec("torch.distributed.run") is None:
    pytest.skip("this PyTorch has no torchrun (torch.distributed.run)", allow_module_level=True)
if not dist.is_available() or not dist.is_gloo_available():
    pytest.skip("this PyTorch has no gloo backend (torch.distributed.is_gloo_available() is "
                "False)", allow_module_level=True)

SCRIPT = REPO_ROOT / "scripts" / "torchrun_step.py"
TESTS = REPO_ROOT / "tests"
SIZES = {"batch_size": 2, "seq_len": 16}
MODELS = ("llama-tiny", "torchrun_models:gpt2_tiny")  # the second: tests/torchrun_models.py
#: strategy → the options of its step; fsdp2-mp: FSDP2's MixedPrecisionPolicy, fp32 model.
STRATEGIES = {"ddp": {"parallel": "ddp"}, "fsdp2": {"parallel": "fsdp2"},
              "fsdp2-mp": {"parallel": "fsdp2", "fsdp_mixed_precision": "bf16/fp32",
                           "precision": "fp32"},
              "tp": {"parallel": "tp"}, "fsdp2-tp": {"parallel": "fsdp2-tp", "tp_size": 2}}
CASES = [(model, n, strategy) for model in MODELS for n in (2, 4) for strategy in STRATEGIES
         if strategy != "fsdp2-tp" or n == 4]
#: Cases the estimate does not meet yet, with the gap measured and what is known of it.
OPEN: dict[tuple[str, int, str], str] = {}
TOLERANCE = 0.01
CEILING_S = 600  # only a hung job waits this long


def _flags(options: dict) -> list[str]:
    return [item for name, value in options.items()
            for item in ("--" + name.replace("_", "-"), str(value))]


def real_peaks(model: str, n: int, strategy: str, out: Path) -> list[int]:
    """Each rank's CPU allocator peak in the measured step of one torchrun job."""
    shutil.rmtree(out, ignore_errors=True)
    env = {**cli_env(), "OMP_NUM_THREADS": "1"}
    env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], str(TESTS)])
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                "--nproc-per-node", str(n)]
    done = subprocess.run([*torchrun, str(SCRIPT), model, *_flags(SIZES),
                           *_flags(STRATEGIES[strategy]), "--out", str(out)],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=CEILING_S, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-4000:]
    rows = [json.loads((out / f"rank-{r}.json").read_text()) for r in range(n)]
    return [row["allocator_peak_bytes"] for row in rows]


def estimated_peak(model: str, n: int, strategy: str) -> int:
    return g.estimate(model, **SIZES, device="cpu", gpus=n,
                      **STRATEGIES[strategy]).peak_bytes


def gap(estimate: int, real: int) -> float:
    return (estimate - real) / real


# PyTorch's note that FSDP2 over TP hands out a view (the logits): nothing of memory
@pytest.mark.filterwarnings("ignore:FSDP2-wrapped module")
@pytest.mark.parametrize(("model", "n", "strategy"), [
    pytest.param(*case, marks=pytest.mark.xfail(strict=True, raises=AssertionError,
                                                reason=OPEN[case]))
    if case in OPEN else case for case in CASES])
def test_estimate_matches_every_rank(model: str, n: int, strategy: str,
                                     tmp_path: Path) -> None:
    real = real_peaks(model, n, strategy, tmp_path)
    estimate = estimated_peak(model, n, strategy)
    largest = max(real)
    assert abs(gap(estimate, largest)) <= TOLERANCE, (estimate, real)
    if (largest - min(real)) / largest <= TOLERANCE:  # the ranks agree: each one
        assert all(abs(gap(estimate, peak)) <= TOLERANCE for peak in real), (estimate, real)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        for model, n, strategy in CASES if len(sys.argv) < 2 else \
                [c for c in CASES if all(any(a == str(p) or not a.isdigit() and a in str(p)
                                          for p in c) for a in sys.argv[1:])]:
            try:
                real = real_peaks(model, n, strategy, Path(folder) / "run")
            except AssertionError as error:
                print(f"{model:28} {n} {strategy:9} real run failed: "
                      f"{str(error).strip().splitlines()[-1][:200]}", flush=True)
                continue
            estimate = estimated_peak(model, n, strategy)
            print(f"{model:28} {n} {strategy:9} estimate {estimate:>9,}  real "
                  f"{', '.join(f'{p:,}' for p in real)}  gap to largest "
                  f"{100 * gap(estimate, max(real)):+.2f} %", flush=True)
