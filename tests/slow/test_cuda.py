"""What only a CUDA GPU can check: the tracker against the caching allocator, and fp16 with
GradScaler training. Skipped, with the reason, on machines without one."""

from __future__ import annotations

import pytest
import torch

from generator.experiment import Experiment
from generator.measure.backends import measure
from generator.measure.studies import training_curves

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not torch.cuda.is_available(),
                                 reason="needs a CUDA GPU (none on this machine)")]


def test_cuda_tracker_agrees_with_caching_allocator() -> None:
    result = measure(Experiment(model="tiny", batch_size=4, seq_len=32, backend="cuda"))
    truth = result["ground_truth"]["peak_bytes"]
    assert abs(result["peak_bytes"] / truth - 1) < 0.05


def test_fp16_with_grad_scaler_trains_on_cuda() -> None:
    data = training_curves.run({"steps": 40, "batch_size": 16, "eval_size": 64,
                                "max_points": 20, "device": "cuda"})
    fp16 = next(r for r in data["runs"] if r["precision"] == "amp-fp16")
    assert fp16["skipped_steps"] is not None and fp16["final_scale"] > 0
    assert fp16["loss"][-1] < fp16["loss"][0]


def test_cuda_run_reports_all_five_steps_and_what_building_left() -> None:
    """The accuracy page compares the estimate with the peaks over the five untracked steps
    (as the allocator simulation counts them), and the start state tells which start is
    real. The tracked step runs after them: nothing is given back to the driver between, so
    its reserved peak is at least theirs."""
    truth = measure(Experiment(model="tiny", batch_size=4, seq_len=32,
                               backend="cuda"))["ground_truth"]
    assert 0 < truth["steps_peak_bytes"] <= truth["steps_max_reserved_bytes"]
    assert truth["max_reserved_bytes"] >= truth["steps_max_reserved_bytes"]
    start = truth["before_steps"]
    assert 0 < start["allocated_bytes"] <= start["reserved_bytes"] <= \
        truth["steps_max_reserved_bytes"]
