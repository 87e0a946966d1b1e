"""The step options added for real training setups: pure 16-bit training, AMP without a
loss scaler, checkpointing by module class and Adam's weight decay. Each changes the step as
its name says, and bad values fail with one line."""

from __future__ import annotations

import functools
import re
from typing import Any

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from generator.errors import ConfigError
from generator.experiment import Experiment
from generator.measure.backends import measure
from generator.measure.backends.common import build_workload, new_tracker
from generator.measure.models import resolve_model
from generator.measure.training.step import Trainer, tracked_step

TINY = {"model": "llama-tiny", "batch_size": 2, "seq_len": 32}
SAFE_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@functools.cache
def _cached(**kw: Any) -> dict[str, Any]:
    return measure(Experiment(**{**TINY, **kw}))


def test_pure_fp16_halves_the_model_state() -> None:
    fp32, fp16 = _cached(precision="fp32"), _cached(precision="fp16")
    for category in ("parameters", "gradients", "optimizer_state"):
        assert fp16["category_max_bytes"][category] == pytest.approx(
            fp32["category_max_bytes"][category] / 2, rel=0.01), category
    assert fp16["category_max_bytes"]["autocast_copies"] == 0  # no autocast: nothing to copy


def _optimizer_temporaries(**kw: Any) -> tuple[int, int]:
    """Bytes of the temporaries the optimizer step creates, and the gradients' bytes."""
    exp = Experiment(**{**TINY, **kw})
    with FakeTensorMode():
        trainer = Trainer.create(build_workload(resolve_model(exp.model), exp), exp,
                                 device=torch.device("cpu"), fake=True)
        trainer.warm_up()
        tracker = new_tracker(trainer, round_bytes=1, device_type=None)
        report = tracked_step(trainer, tracker)
    start = next(tick for name, tick in tracker.phases() if name == "optimizer")
    made = sum(life.nbytes for life in tracker.lives()
               if life.born >= start and life.category == "temporaries")
    return made, report.category_max_bytes["gradients"]


def test_adam_weight_decay_costs_one_gradient_sized_temporary() -> None:
    """Adam adds the decay to the gradients out of place (foreach: one new list of them,
    freed before the square roots are taken, so the step's peak stays)."""
    plain, grads = _optimizer_temporaries(optimizer="adam")
    decayed, _ = _optimizer_temporaries(optimizer="adam", weight_decay=1e-4)
    assert decayed - plain == pytest.approx(grads, rel=0.01)
    # AdamW decays the weights in place: nothing more
    assert _optimizer_temporaries(optimizer="adamw", weight_decay=1e-4)[0] \
        == _optimizer_temporaries(optimizer="adamw")[0]


def test_checkpointing_by_class_recomputes_those_modules() -> None:
    plain, by_class = _cached(), _cached(checkpoint_classes=("SwiGLU",))
    assert by_class["category_max_bytes"]["activations"] < plain["category_max_bytes"]["activations"]
    assert by_class["parameter_count"] == plain["parameter_count"]


def test_amp_without_a_scaler_runs_and_keys_apart() -> None:
    scaled = Experiment(**TINY, precision="amp-fp16")
    unscaled = Experiment(**TINY, precision="amp-fp16", loss_scaling="off")
    assert unscaled.key != scaled.key and "no-scaler" in unscaled.key
    assert _cached(precision="amp-fp16", loss_scaling="off")["peak_bytes"] > 0


def test_new_options_make_safe_keys_and_survive_json() -> None:
    exp = Experiment(**TINY, checkpoint_classes=("SwiGLU", "RMSNorm"), weight_decay=1e-4,
                     precision="bf16")
    assert SAFE_KEY.match(exp.key), exp.key
    data = exp.to_dict()
    assert data["checkpoint_classes"] == ["SwiGLU", "RMSNorm"]  # JSON's own type
    assert Experiment.from_dict(data) == exp
    assert Experiment.from_dict({**TINY, "checkpoint_classes": "SwiGLU, RMSNorm"}) \
        .checkpoint_classes == ("SwiGLU", "RMSNorm")


@pytest.mark.parametrize(("fields", "words"), [
    ({"loss_scaling": "off"}, "loss_scaling 'off' is for amp-fp16"),
    ({"checkpoint_classes": ("Not A Class",)}, "must be module class names"),
    ({"checkpoint_classes": ("SwiGLU",), "checkpointing": True}, "give one"),
    ({"weight_decay": -1.0}, "weight_decay must be a number"),
    ({"precision": "fp8"}, "unknown precision"),
])
def test_bad_values_are_refused(fields: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(words)):
        Experiment(**{**TINY, **fields})


def test_an_unknown_class_names_the_model_the_class_and_the_classes_it_has() -> None:
    with pytest.raises(ConfigError, match="LlamaForCausalLM has no module of class Nope") as e:
        measure(Experiment(**TINY, checkpoint_classes=("Nope",)))
    own = str(e.value).split("its own module classes: ")[1].split(", ")
    assert own[0] == "LlamaForCausalLM" and {"LlamaBlock", "SwiGLU"} <= set(own)
    assert "Linear" not in own  # torch.nn's classes are not listed


def test_cli_refuses_an_unknown_class_in_one_line(cli, project) -> None:
    proc = cli(["estimate", "llama-tiny", "--batch-size", 2, "--seq-len", 8,
                "--checkpoint-classes", "Nope"], project)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "Nope" in proc.stderr
