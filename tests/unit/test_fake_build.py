"""fake_build: while a model is built on fake tensors, small tensors made from constants keep
their values (drop-path rates read with .item()), and a module converts (.to(dtype))."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch._subclasses.fake_tensor import DataDependentOutputException, FakeTensorMode

from generator.measure.emulation.fake_build import LIMIT, KnownValues, fake_build


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


def test_a_fake_module_converts() -> None:
    FakeTensorMode.cache_clear()  # as in a fresh estimate (see the test below)
    with FakeTensorMode(), fake_build():
        net = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 2)).to(torch.bfloat16)
        weight = net[0].weight
        net.float()
    assert {p.dtype for p in net.parameters()} == {torch.float32}
    assert isinstance(weight, nn.Parameter) and weight.requires_grad  # swapped in place


def test_without_it_a_fake_module_does_not_convert() -> None:
    """The gap it fills (PyTorch swaps fake parameters and its fake mode keeps a weak
    reference to each): when this fails, `fake_build` need not patch the swap any more.
    Whether it fails depends on fake mode's dispatch cache (a cached detach keeps no weak
    reference), so the cache starts empty here, as in a fresh estimate."""
    FakeTensorMode.cache_clear()
    with FakeTensorMode(), pytest.raises(RuntimeError, match="swap"):
        nn.Linear(8, 8).to(torch.bfloat16)


def test_a_build_on_real_tensors_goes_through_unchanged() -> None:
    """Callers enter fake_build whatever the tensors are; outside fake mode it adds nothing."""
    original = torch.utils.swap_tensors
    with fake_build():
        assert torch.utils.swap_tensors is original
        assert torch.linspace(0, 1, 3).tolist() == [0.0, 0.5, 1.0]
    with FakeTensorMode(), fake_build():
        assert torch.utils.swap_tensors is not original
    assert torch.utils.swap_tensors is original


def test_a_foreach_op_that_writes_makes_its_values_unknown() -> None:
    """`_foreach_add_` writes a list of tensors (an optimizer's step counts): what KnownValues
    knew of them is forgotten, and fake tensors' own constants answer instead."""
    with FakeTensorMode(), KnownValues():
        counts = [torch.tensor(0.0), torch.tensor(0.0)]
        torch._foreach_add_(counts, 1)
        assert [c.item() for c in counts] == [1.0, 1.0]
