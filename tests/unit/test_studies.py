"""The study kinds' own logic, without their long runs: what a cast to fp16 or bf16 loses
(underflow), the formats' facts (torch_facts), and the parameters each kind accepts.
Their runs: slow/test_study_runs.py."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import FIXTURES

from generator.errors import ConfigError
from generator.measure.studies import Study, kinds, torch_facts, underflow


def _small_gradient() -> torch.Tensor:
    """Magnitudes spread evenly over 10⁻¹⁰ … 10⁻², both signs, some exact zeros: most of
    them below fp16's smallest normal, none near its largest value."""
    values = torch.logspace(-10, -2, 10_001)
    values[::2] *= -1
    values[::100] = 0
    return values


def test_scaling_keeps_small_gradients_that_fp16_loses() -> None:
    grad = _small_gradient()
    plain = underflow.cast_effects(grad, torch.float16)
    scaled = underflow.cast_effects(grad, torch.float16, underflow.grad_scaler_initial_scale())
    lost = lambda c: c["zero_fraction"] + c["subnormal_fraction"]  # noqa: E731
    assert plain["zero"] > 0 and plain["subnormal"] > 0
    assert lost(plain) > lost(scaled)
    assert plain["zero_fraction"] > scaled["zero_fraction"]
    assert plain["mean_relative_error"] > scaled["mean_relative_error"]
    assert plain["overflow"] == scaled["overflow"] == 0
    bf16 = underflow.cast_effects(grad, torch.bfloat16)
    assert bf16["zero"] == bf16["subnormal"] == 0
    assert bf16["mean_relative_error"] > scaled["mean_relative_error"]  # coarser eps


@pytest.mark.parametrize("dtype,scale", [(torch.float16, 1.0), (torch.float16, 2.0 ** 16),
                                         (torch.bfloat16, 1.0)])
def test_counts_agree_with_the_cast_itself(dtype: torch.dtype, scale: float) -> None:
    torch.manual_seed(0)
    grad = torch.randn(200_000) * torch.exp(torch.randn(200_000) * 6) * 1e-4
    grad[::50] = 0
    found = underflow.cast_effects(grad, dtype, scale)
    cast = (grad.abs() * scale).to(dtype)
    nonzero = grad != 0
    tiny = torch.finfo(dtype).smallest_normal
    assert found["zero"] == int(((cast == 0) & nonzero).sum())
    assert found["subnormal"] == int(((cast != 0) & (cast < tiny)).sum())
    assert found["overflow"] == int(torch.isinf(cast).sum())
    assert found["zero_fraction"] == pytest.approx(found["zero"] / int(nonzero.sum()))


def test_boundaries_are_fp16s_own_edges() -> None:
    finfo = torch.finfo(torch.float16)
    zero_max, subnormal_max, finite_max = underflow.boundaries(torch.float16, 1.0)
    assert zero_max < finfo.smallest_normal * finfo.eps <= subnormal_max < finfo.smallest_normal
    assert finfo.max <= finite_max
    assert underflow.grad_scaler_initial_scale() == torch.amp.GradScaler("cpu").get_scale()


def test_torch_facts_are_what_this_pytorch_says() -> None:
    data = torch_facts.run({})
    json.dumps(data)  # a study's data is JSON as it is
    assert data["torch"] == torch.__version__
    formats = {row["name"]: row for row in data["formats"]}
    for name, dtype in (("fp32", torch.float32), ("fp16", torch.float16), ("bf16", torch.bfloat16)):
        info, row = torch.finfo(dtype), formats[name]
        assert (row["bits"], row["max"], row["eps"]) == (info.bits, info.max, info.eps), name
        assert row["smallest_normal"] == info.smallest_normal
        assert row["exponent_bits"] + row["mantissa_bits"] + 1 == info.bits
        assert 10 ** row["decades"] == pytest.approx(info.max / info.smallest_normal, rel=1e-9)
    assert (formats["fp16"]["exponent_bits"], formats["bf16"]["exponent_bits"]) == (5, 8)
    assert data["grad_scaler"]["init_scale"] == torch.amp.GradScaler("cpu").get_scale()
    assert isinstance(data["cuda_amp_deprecated"], bool)


def test_the_committed_torch_facts_fixture_is_this_pytorchs() -> None:
    """The fixture the page tests read matches a fresh run, so the pages are tested on what
    the study writes (apart from the version string)."""
    stored = json.loads((FIXTURES / "results" / "studies" / "estimate" / "torch-facts.json")
                        .read_text(encoding="utf-8"))
    fresh = torch_facts.run({})
    assert stored["data"]["formats"] == fresh["formats"]
    assert stored["data"]["grad_scaler"] == fresh["grad_scaler"]


def test_every_kind_checks_its_parameters() -> None:
    assert {"simulated_run", "torch_facts", "training_curves", "underflow"} == set(kinds())
    with pytest.raises(ConfigError, match="one of the package's examples") as caught:
        Study.from_dict({"kind": "simulated_run", "name": "r", "backend": "estimate",
                         "params": {"script": "/etc/passwd", "gpu": "RTX 4090"}})
    with pytest.raises(ConfigError, match="one of the package's examples"):
        Study.from_dict({"kind": "simulated_run", "name": "r", "backend": "estimate",
                         "params": {"script": "generator/examples/../../x.py", "gpu": "A"}})
    with pytest.raises(ConfigError) as caught:
        Study.from_dict({"kind": "underflow", "name": "u", "params": {"model": "nope",
                                                                     "batch_size": 0}})
    assert "model" in str(caught.value) and "batch_size" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        Study.from_dict({"kind": "training_curves", "name": "t",
                         "params": {"precisions": ["amp-bf16"], "steps": -1, "speed": 1}})
    message = str(caught.value)
    assert "fp32 first" in message and "steps" in message and "speed" in message
    with pytest.raises(ConfigError, match="bogus"):
        Study.from_dict({"kind": "torch_facts", "name": "f", "backend": "estimate",
                         "params": {"bogus": 1}})
    with pytest.raises(ConfigError, match="runs on estimate"):
        Study.from_dict({"kind": "torch_facts", "name": "f", "backend": "cpu"})
    with pytest.raises(ConfigError, match="unknown study kind 'nope'") as caught:
        Study.from_dict({"kind": "nope", "name": "Bad Name"})
    assert "study name" in str(caught.value)


