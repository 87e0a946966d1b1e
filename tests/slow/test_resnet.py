"""ResNet-50: its exact architecture (on fake tensors), its batches, and what the estimate sees
as the image side and the batch grow. A real step: slow/test_training_steps.py."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from generator.errors import GeneratorError
from generator.experiment import Experiment
from generator.measure.backends import measure
from generator.measure.models import MODELS, resolve_model
from generator.measure.models.resnet import (
    RESNET50,
    ResNetConfig,
    build_resnet,
    make_image_batch,
)
from generator.measure.training.workload import Workload

CPU = torch.device("cpu")
#: torchvision.models.resnet50().parameters(), summed.
TORCHVISION_RESNET50_PARAMETERS = 25_557_032


def _estimate(**kw: Any) -> dict[str, Any]:
    return measure(Experiment(**{"model": "resnet50", "batch_size": 2, "seq_len": 64, **kw}))


def _activations(result: dict) -> int:
    return result["category_max_bytes"]["activations"]


@pytest.fixture(scope="module")
def fake_resnet() -> Workload:
    # Fake tensors allocate nothing: the 25.6M-parameter model builds in a blink.
    with FakeTensorMode():
        return MODELS["resnet50"].build()


@pytest.fixture(scope="module")
def base() -> dict:
    return _estimate()


def test_spec() -> None:
    spec = resolve_model("resnet50")
    assert spec is MODELS["resnet50"]
    assert "resnet50" in MODELS
    assert spec.max_seq_len is None and spec.architecture is None
    assert "\n" not in spec.description
    assert "ResNet-50" in spec.description and "image side" in spec.description


def test_exact_parameter_count(fake_resnet: Workload) -> None:
    assert sum(p.numel() for p in fake_resnet.model.parameters()) == TORCHVISION_RESNET50_PARAMETERS


def test_architecture_is_torchvision_v1_5(fake_resnet: Workload) -> None:
    model = fake_resnet.model
    assert list(dict(model.named_children())) == ["stem", "layers", "head"]
    assert isinstance(model.layers, torch.nn.ModuleList) and len(model.layers) == 16
    assert model.stem.conv.weight.shape == (64, 3, 7, 7)
    # Stage starts: the stride sits on the 3×3 conv (v1.5), the shortcut is a strided 1×1.
    for index, width in ((0, 64), (3, 128), (7, 256), (13, 512)):
        block = model.layers[index]
        stride = 1 if index == 0 else 2
        assert block.conv1.stride == (1, 1) and block.conv2.stride == (stride, stride)
        assert block.conv2.weight.shape == (width, width, 3, 3)
        assert block.conv3.weight.shape == (4 * width, width, 1, 1)
        assert block.downsample is not None and block.downsample[0].stride == (stride, stride)
    assert sum(block.downsample is not None for block in model.layers) == 4
    assert model.head.fc.weight.shape == (1000, 2048)
    assert all(m.training for m in model.modules())
    # Running statistics are buffers, not parameters: 53 BatchNorms × 3 buffers.
    assert len(list(model.buffers())) == 53 * 3


def test_kaiming_init_like_torchvision() -> None:
    torch.manual_seed(0)
    model = build_resnet(ResNetConfig(blocks_per_stage=(1, 1, 1, 1))).model
    conv = model.layers[1].conv2  # 128 → 128, 3×3: fan_out = 128 · 9
    assert conv.weight.std().item() == pytest.approx(math.sqrt(2 / (128 * 9)), rel=0.05)
    assert torch.equal(model.layers[1].bn2.weight, torch.ones(128))
    assert torch.equal(model.layers[1].bn2.bias, torch.zeros(128))
    zero = build_resnet(ResNetConfig(blocks_per_stage=(1, 1, 1, 1), zero_init_residual=True))
    assert not zero.model.layers[0].bn3.weight.any()


def test_batch_is_seeded_images_and_labels() -> None:
    (images,), labels = make_image_batch(RESNET50, 3, 40, CPU)
    assert images.shape == (3, 3, 40, 40) and images.dtype == torch.float32
    assert labels.shape == (3,) and labels.dtype == torch.int64
    assert 0 <= labels.min() and labels.max() < 1000
    (again,), again_labels = make_image_batch(RESNET50, 3, 40, CPU)
    assert torch.equal(images, again) and torch.equal(labels, again_labels)


def test_estimate_runs(base: dict) -> None:
    assert base.get("error") is None
    assert base["parameter_count"] == TORCHVISION_RESNET50_PARAMETERS
    assert base["architecture"] is None
    assert sum(base["live_at_peak_bytes"].values()) == base["peak_bytes"]
    assert _activations(base) > 0


def test_activations_grow_with_the_square_of_the_side(base: dict) -> None:
    ratio = _activations(_estimate(seq_len=128)) / _activations(base)
    assert ratio == pytest.approx(4, rel=0.10)


def test_activations_grow_linearly_with_the_batch(base: dict) -> None:
    ratio = _activations(_estimate(batch_size=4)) / _activations(base)
    assert ratio == pytest.approx(2, rel=0.05)


def test_checkpointing_lowers_the_activations(base: dict) -> None:
    assert _activations(_estimate(checkpointing=True)) < _activations(base) / 2


def test_activations_are_attributed_per_block(base: dict, fake_resnet: Workload) -> None:
    modules = base["module_activation_bytes"]
    blocks = ["stem", *(f"layers.{i}" for i in range(16)), "head"]
    assert [name for name, _ in fake_resnet.model.named_children()] == ["stem", "layers", "head"]
    assert set(blocks) <= set(modules)
    assert all(modules[name] > 0 for name in blocks)
    # Identical blocks inside a stage save identical tensors.
    assert modules["layers.1"] == modules["layers.2"]
    assert modules["layers.8"] == modules["layers.12"]


@pytest.mark.parametrize(("batch_size", "side", "match"),
                         [(2, 16, "at least 32"), (1, 32, "one value per channel")])
def test_untrainable_images_are_a_one_line_error(batch_size: int, side: int, match: str) -> None:
    with pytest.raises(ValueError, match=match) as caught:
        make_image_batch(RESNET50, batch_size, side, CPU)
    assert "\n" not in str(caught.value)
    # Through the tool: the batch maker's error, or the zoo's one-line wrapping of it.
    with pytest.raises((ValueError, GeneratorError), match=match) as caught:
        _estimate(batch_size=batch_size, seq_len=side)
    assert "\n" not in str(caught.value)


def test_batch_one_works_from_side_33() -> None:
    (images,), labels = make_image_batch(RESNET50, 1, 33, CPU)
    assert images.shape == (1, 3, 33, 33) and labels.shape == (1,)
