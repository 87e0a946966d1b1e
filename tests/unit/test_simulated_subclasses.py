"""Parameter subclasses of simulated tensors (generator/simulate/subclasses.py), as
bitsandbytes makes its 4-bit weights (Params4bit), and their own `to()` on the way to the
simulated GPU (placement.py): tiny fake tensors; the QLoRA example itself runs in
tests/slow/test_run_frameworks.py."""

from __future__ import annotations

import importlib.util

import pytest
import torch
from torch import nn
from torch._subclasses.fake_tensor import FakeTensor

import generator as g


class Tagged(nn.Parameter):
    """A parameter subclass made as bitsandbytes makes its own: `_make_subclass`, then an
    attribute of its own."""

    def __new__(cls, data: torch.Tensor, tag: str = "") -> "Tagged":
        made = torch.Tensor._make_subclass(cls, data, False)
        made.tag = tag
        return made


def test_a_parameter_subclass_of_a_fake_tensor_is_both() -> None:
    before = torch.Tensor._make_subclass
    with g.simulated_gpu("4090"):
        weight = Tagged(torch.empty(64, 64, device="cuda"), tag="frozen")
        assert isinstance(weight, Tagged) and isinstance(weight, FakeTensor)
        assert isinstance(weight, nn.Parameter) and not weight.requires_grad
        assert weight.tag == "frozen" and weight.is_cuda and type(weight).__name__ == "Tagged"
        assert torch.cuda.memory_allocated() == 64 * 64 * 4  # its storage, counted once
        layer = nn.Linear(64, 64, bias=False)
        layer.weight = weight
        layer.to("cuda", dtype=torch.bfloat16)  # Module._apply's swap keeps class and tag
        assert type(layer.weight) is type(weight) and layer.weight.tag == "frozen"
        assert layer.weight.dtype == torch.bfloat16
        assert layer(torch.ones(2, 64, device="cuda", dtype=torch.bfloat16)).shape == (2, 64)
    assert torch.Tensor._make_subclass is before
    real = Tagged(torch.ones(2), tag="real")  # outside a run: PyTorch's own
    assert type(real) is Tagged and not isinstance(real, FakeTensor)


@pytest.mark.skipif(importlib.util.find_spec("bitsandbytes") is None,
                    reason="bitsandbytes is not installed (the test extra has it)")
def test_a_4bit_linear_layer_quantizes_on_its_way_to_the_gpu(monkeypatch) -> None:
    """bitsandbytes' Linear4bit built on the host in bf16 and moved to the GPU: Params4bit's
    own `to()` quantizes it there (two weights a byte, a scale a block of 64), and the layer
    runs forward and backward through its 4-bit matmul; the code table its double
    quantization made of fake tensors is gone afterwards."""
    from generator.measure import importing_bitsandbytes

    with importing_bitsandbytes():
        import bitsandbytes as bnb
        from bitsandbytes import functional
    monkeypatch.setattr(functional, "name2qmap", {})  # no table yet, as in a fresh process
    with g.simulated_gpu("4090"):
        layer = bnb.nn.Linear4bit(256, 128, bias=False, compute_dtype=torch.bfloat16,
                                  compress_statistics=True, quant_type="nf4").to(torch.bfloat16)
        assert torch.cuda.memory_allocated() == 0
        layer.cuda()
        weight = layer.weight
        assert isinstance(weight, bnb.nn.Params4bit) and weight.bnb_quantized and weight.is_cuda
        assert weight.dtype == torch.uint8 and weight.numel() == 256 * 128 // 2
        assert layer.quant_state is weight.quant_state and weight.quant_state.absmax.is_cuda
        assert torch.cuda.memory_allocated() >= 256 * 128 // 2 + 256 * 128 // 64 * 4
        x = torch.ones(4, 256, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        y = layer(x)
        assert y.shape == (4, 128) and y.dtype == torch.bfloat16 and y.is_cuda
        y.sum().backward()
        assert x.grad.shape == x.shape and weight.grad is None
        assert isinstance(functional.name2qmap.get("dynamic"), FakeTensor)  # its 8-bit table
    assert "dynamic" not in functional.name2qmap  # a real quantization makes its own again
