"""The estimate of one rank of a multi-process step against real runs (generator/validate/
torchrun.py): `torchrun` starts 2 or 4 CPU processes on gloo that run the step the estimate
models, and each rank's CPU allocator peak is compared with `estimate … --device cpu --gpus N
--parallel P`: within 1 % of the largest rank's, and of every rank's where the ranks agree.
The suite keeps every strategy once (torchrun.SAMPLE); `python -m generator validate --only
torchrun` runs all the cases and prints each gap."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch.distributed as dist

from generator.validate import torchrun

if importlib.util.find_spec("torch.distributed.run") is None:
    pytest.skip("this PyTorch has no torchrun (torch.distributed.run)", allow_module_level=True)
if not dist.is_available() or not dist.is_gloo_available():
    pytest.skip("this PyTorch has no gloo backend (torch.distributed.is_gloo_available() is "
                "False)", allow_module_level=True)


def test_the_sample_has_every_strategy_both_models_and_both_counts() -> None:
    assert set(torchrun.SAMPLE) <= set(torchrun.CASES)
    assert {s for _, _, s in torchrun.SAMPLE} == set(torchrun.STRATEGIES)
    assert {m for m, _, _ in torchrun.SAMPLE} == set(torchrun.MODELS)
    assert {n for _, n, _ in torchrun.SAMPLE} == {2, 4}


# PyTorch's note that FSDP2 over TP hands out a view (the logits): nothing of memory
@pytest.mark.filterwarnings("ignore:FSDP2-wrapped module")
@pytest.mark.parametrize(("model", "n", "strategy"), torchrun.SAMPLE)
def test_estimate_matches_every_rank(model: str, n: int, strategy: str,
                                     tmp_path: Path) -> None:
    row = torchrun.compare(model, n, strategy, tmp_path)
    assert row["within"], row
