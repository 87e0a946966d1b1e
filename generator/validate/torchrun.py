"""One rank's estimate against real multi-process runs on this CPU.

`torchrun` starts 2 or 4 CPU processes on gloo (generator/cli/torchrun_step.py) that run
the step the estimate models, with DDP, FSDP2 (with and without its mixed-precision policy),
tensor parallelism and FSDP2 × TP, and each rank's CPU allocator peak (the profiler's memory
events, with the frees gloo's worker threads make put back) is compared with `estimate …
--device cpu --gpus N --parallel P`: within 1 % of the largest rank's, and of every rank's
where the ranks agree.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from generator.measure.models.gpt2 import GPT2Config, build_gpt2
from generator.measure.training.workload import Workload

SIZES = {"batch_size": 2, "seq_len": 16}
MODELS = ("llama-tiny", "generator.validate.torchrun:gpt2_tiny")
#: strategy → the options of its step; fsdp2-mp: FSDP2's MixedPrecisionPolicy, fp32 model.
STRATEGIES = {"ddp": {"parallel": "ddp"}, "fsdp2": {"parallel": "fsdp2"},
              "fsdp2-mp": {"parallel": "fsdp2", "fsdp_mixed_precision": "bf16/fp32",
                           "precision": "fp32"},
              "tp": {"parallel": "tp"}, "fsdp2-tp": {"parallel": "fsdp2-tp", "tp_size": 2}}
CASES = [(model, n, strategy) for model in MODELS for n in (2, 4) for strategy in STRATEGIES
         if strategy != "fsdp2-tp" or n == 4]
#: The test suite's sample: every strategy once, both models and both process counts.
SAMPLE = [("llama-tiny", 2, "ddp"), (MODELS[1], 2, "fsdp2"), ("llama-tiny", 4, "fsdp2-mp"),
          (MODELS[1], 4, "tp"), ("llama-tiny", 4, "fsdp2-tp")]
TOLERANCE = 0.01
CEILING_S = 600  # only a hung job waits this long


def gpt2_tiny() -> Workload:
    """A GPT-2-style model small enough for several CPU processes at once: the built-in GPT-2
    (fused qkv, tied head, GELU MLP, dropout), 2 blocks of width 64 with 4 heads and a
    1000-token vocabulary."""
    return build_gpt2(GPT2Config(vocab_size=1000, hidden_size=64, num_layers=2, num_heads=4,
                                 intermediate_size=256, max_position_embeddings=128))


def _flags(options: dict[str, Any]) -> list[str]:
    return [item for name, value in options.items()
            for item in ("--" + name.replace("_", "-"), str(value))]


def real_peaks(model: str, n: int, strategy: str, out: Path) -> list[int]:
    """Each rank's CPU allocator peak in the measured step of one torchrun job."""
    shutil.rmtree(out, ignore_errors=True)
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])}
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                "--nproc-per-node", str(n), "-m", "generator.cli.torchrun_step"]
    done = subprocess.run([*torchrun, model, *_flags(SIZES), *_flags(STRATEGIES[strategy]),
                           "--out", str(out)], env=env, capture_output=True, text=True,
                          timeout=CEILING_S, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"torchrun {model} {n} {strategy} failed:\n{done.stderr[-4000:]}")
    rows = [json.loads((out / f"rank-{r}.json").read_text()) for r in range(n)]
    return [row["allocator_peak_bytes"] for row in rows]


def estimated_peak(model: str, n: int, strategy: str) -> int:
    from generator import api

    return api.estimate(model, **SIZES, device="cpu", gpus=n, **STRATEGIES[strategy]).peak_bytes


def gap(estimate: int, real: int) -> float:
    return (estimate - real) / real


def compare(model: str, n: int, strategy: str, out: Path) -> dict[str, Any]:
    """One case: the real ranks' peaks, the estimate, and whether they agree."""
    real = real_peaks(model, n, strategy, out)
    estimate = estimated_peak(model, n, strategy)
    largest = max(real)
    agree = (largest - min(real)) / largest <= TOLERANCE  # the ranks agree: hold each one
    within = abs(gap(estimate, largest)) <= TOLERANCE and \
        (not agree or all(abs(gap(estimate, peak)) <= TOLERANCE for peak in real))
    return {"id": f"{model.rsplit(':', 1)[-1]}-{n}-{strategy}", "model": model, "gpus": n,
            "strategy": strategy, "estimate_bytes": estimate, "rank_peak_bytes": real,
            "gap_to_largest": gap(estimate, largest), "within": within}
