"""known_values: small tensors made from constants keep their values while a model is built
on fake tensors, so a model reading them (drop-path rates) builds; nothing else changes."""

from __future__ import annotations

import pytest
import torch
from torch._subclasses.fake_tensor import DataDependentOutputException, FakeTensorMode

from generator.measure.known_values import LIMIT, KnownValues


def test_drop_path_rates_read_as_transformers_reads_them() -> None:
    with FakeTensorMode(), KnownValues():
        rates = torch.linspace(0, 0.3, 4, device="cpu")
        per_stage = [x.tolist() for x in rates.split([1, 3])]  # ConvNeXt
        each = [x.item() for x in torch.linspace(0, 0.3, 4)]  # Swin, PVT
        total = torch.arange(1, 5).sum().item()  # a value derived from known ones
    expected = torch.linspace(0, 0.3, 4).tolist()
    assert per_stage == [expected[:1], expected[1:]]
    assert each == expected
    assert total == 10


def test_the_tensors_stay_fake() -> None:
    with FakeTensorMode(), KnownValues():
        rates = torch.linspace(0, 1, 8)
    assert type(rates).__name__ == "FakeTensor"


@pytest.mark.parametrize("make", [
    lambda: torch.rand(4),  # random: no value to know
    lambda: torch.linspace(0, 1, LIMIT + 1),  # too large to keep
    lambda: torch.linspace(0, 1, 4).mul_(2),  # written to after it was made
    lambda: torch.empty(4),  # no defined value
], ids=["random", "too-large", "written", "empty"])
def test_unknown_values_stay_unknown(make) -> None:
    with FakeTensorMode(), KnownValues():
        tensor = make()
        with pytest.raises(DataDependentOutputException):
            tensor[0].item()


def test_without_it_fake_tensors_have_no_values() -> None:
    """The gap it fills: when this fails, PyTorch knows such values itself."""
    with FakeTensorMode(), pytest.raises(DataDependentOutputException):
        torch.linspace(0, 1, 4)[1].item()
