"""The estimate derives the measured step from the warm-up step (timeline.the_next_step)
instead of running it, where that gives the same figures: checked here against a second step
that really runs, across models and step options."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from generator.experiment import Experiment
from generator.measure.backends.common import (
    build_workload,
    new_tracker,
    tracked_warm_up,
)
from generator.measure.emulation import allocator_replay
from generator.measure.emulation.cuda_kernels import CudaKernelPolicy
from generator.measure.models import resolve_model
from generator.measure.tracking.timeline import the_next_step
from generator.measure.training import optimizer_8bit
from generator.measure.training.step import Trainer, tracked_step

CASES = [
    {"model": "tiny"},
    {"model": "tiny", "precision": "amp-bf16", "attention": "sdpa"},
    {"model": "tiny", "checkpointing": True, "optimizer_impl": "fused"},
    {"model": "llama-tiny", "precision": "bf16", "optimizer": "adam", "weight_decay": 0.1},
    {"model": "llama-tiny", "optimizer": "sgd", "checkpoint_classes": ("SwiGLU",)},
    {"model": "resnet50", "seq_len": 32, "precision": "amp-bf16"},
    {"model": "tiny", "batch_size": 4, "micro_batches": 2, "precision": "amp-bf16"},
    {"model": "tiny", "logits": "masked", "checkpointing": True},
    pytest.param({"model": "tiny", "optimizer": "adamw-8bit"}, marks=pytest.mark.skipif(
        optimizer_8bit.unavailable("adamw-8bit") is not None,
        reason="adamw-8bit needs bitsandbytes (the test extra installs it)")),
]


@pytest.mark.parametrize("fields", CASES, ids=lambda f: "-".join(map(str, f.values())))
def test_the_derived_step_is_the_step_that_runs(fields: dict[str, Any]) -> None:
    exp = Experiment(**{"batch_size": 2, "seq_len": 16, **fields})
    with FakeTensorMode(), CudaKernelPolicy():
        trainer = Trainer.create(build_workload(resolve_model(exp.model), exp), exp,
                                 device=torch.device("cpu"), fake=True)
        _, warm = tracked_warm_up(trainer, round_bytes=512, device_type=None)
        second = new_tracker(trainer, round_bytes=512, device_type=None)
        ran = tracked_step(trainer, second)
    derived = warm.report(the_next_step(warm.lives()))
    for figure in ("peak_bytes", "live_at_peak_bytes", "category_max_bytes",
                   "module_activation_bytes"):
        assert getattr(derived, figure) == getattr(ran, figure), figure
    steps = allocator_replay.TrackedSteps
    first = steps(warm.lives(), warm.phases())
    assert allocator_replay.predict([first, steps(the_next_step(warm.lives()), warm.phases())]) \
        == allocator_replay.predict([first, steps(second.lives(), second.phases())])


@pytest.mark.parametrize("fields", [{}, {"precision": "amp-fp16"}], ids=["derived", "run"])
def test_the_allocator_replays_the_warm_up_as_it_was_read_once(
        monkeypatch: pytest.MonkeyPatch, fields: dict[str, Any]) -> None:
    """A storage the warm-up left alive can be freed later (by the next step, as the fake
    mode exits, or by the garbage collector). Read twice, the warm-up's lives then disagree
    on what the next step starts with, and the replay frees one block twice. So the estimate
    reads them once: the replay gets the very lives the measured step was derived from or
    followed (amp-fp16: its GradScaler makes the estimate run the second step)."""
    from generator.measure.backends import estimate, measure

    seen: dict[str, Any] = {}
    real_predict = allocator_replay.predict

    def predict(steps, **kwargs):
        seen["replayed"] = steps[0].lives
        return real_predict(steps, **kwargs)

    real_read = estimate.TrackedSteps

    def read(lives, phases=()):
        seen.setdefault("read", lives)
        return real_read(lives, phases)

    monkeypatch.setattr(estimate.allocator_replay, "predict", predict)
    monkeypatch.setattr(estimate, "TrackedSteps", read)
    measure(Experiment(model="tiny", batch_size=2, seq_len=16, **fields))
    assert seen["replayed"] is seen["read"]
