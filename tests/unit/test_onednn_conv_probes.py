"""oneDNN's convolution and half-precision matmul buffers, measured for estimates of the CPU
(onednn_conv_probes.py): a fake convolution or bf16 product gets the bytes its real kernel
holds beyond its outputs, measured once per distinct call; other ops (a float32 product)
get none; an estimate that models CUDA never probes; the simulation of the CPU holds them
beside the op's outputs, as the allocator does."""

from __future__ import annotations

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import generator as g
from generator.experiment import Experiment
from generator.measure.backends import measure
from generator.measure.emulation import onednn_conv_probes
from generator.measure.tracking.cpu_allocator_blocks import allocator_blocks, peak_bytes

aten = torch.ops.aten
CONV_ARGS = ([1, 1], [1, 1], [1, 1], False, [0, 0], 1)


def _conv(x, w):
    return (x, w, None, *CONV_ARGS)


def test_a_fake_convolution_gets_what_the_real_kernel_holds(monkeypatch) -> None:
    x, w = torch.zeros(4, 16, 12, 12), torch.zeros(32, 16, 3, 3)
    real = onednn_conv_probes.peak_beyond_outputs(lambda: aten.convolution(*_conv(x, w)))
    monkeypatch.setattr(onednn_conv_probes, "_measured", {})
    with FakeTensorMode():
        fx, fw = torch.empty(4, 16, 12, 12), torch.empty(32, 16, 3, 3)
        assert onednn_conv_probes.hidden_bytes(aten.convolution.default, _conv(fx, fw), {}) == real
        calls = []
        monkeypatch.setattr(onednn_conv_probes, "peak_beyond_outputs",
                            lambda call: calls.append(call) or 0)
        onednn_conv_probes.hidden_bytes(aten.convolution.default, _conv(fx, fw), {})
        assert calls == []  # measured once per distinct call
        onednn_conv_probes.hidden_bytes(aten.convolution.default, _conv(fx[:2], fw), {})
        assert len(calls) == 1  # another batch is another call
        assert onednn_conv_probes.hidden_bytes(aten.mm.default, (fx, fw), {}) == 0


def test_an_estimate_of_cuda_never_probes(monkeypatch) -> None:
    def refuse(call):
        raise AssertionError("probed a kernel while modelling CUDA")

    monkeypatch.setattr(onednn_conv_probes, "peak_beyond_outputs", refuse)
    monkeypatch.setattr(onednn_conv_probes, "_measured", {})
    figures = measure(Experiment(model="convnet-small", batch_size=2, seq_len=16))
    assert figures["peak_bytes"] > 0
    with pytest.raises(AssertionError, match="probed"):
        measure(Experiment(model="convnet-small", batch_size=2, seq_len=16, device="cpu"))


def _product(dtype: torch.dtype) -> torch.Tensor:
    """A weight gradient's product, as a linear layer's backward makes it: a transposed
    input times the gradient."""
    x = torch.zeros(256, 512, dtype=dtype).t()
    grad = torch.zeros(256, 128, dtype=dtype)
    return x.mm(grad)


def test_a_half_precision_product_is_probed_and_a_float32_one_is_not(monkeypatch) -> None:
    monkeypatch.setattr(onednn_conv_probes, "_measured", {})
    with FakeTensorMode():
        x, grad = torch.empty(256, 512).t(), torch.empty(256, 128)
        assert onednn_conv_probes.hidden_bytes(aten.mm.default, (x, grad), {}) == 0
        half = (x.bfloat16(), grad.bfloat16())
        assert onednn_conv_probes.hidden_bytes(aten.mm.default, half, {}) > 0


def test_the_simulation_of_the_cpu_holds_a_products_buffers_beside_its_output() -> None:
    from torch.profiler import ProfilerActivity, profile, record_function

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        with record_function("product"):
            _product(torch.bfloat16)
    real = peak_bytes(*allocator_blocks(prof, "product"))
    with g.simulated_gpu(device="cpu") as cpu:
        _product(torch.bfloat16)
    assert cpu.report().allocated_bytes == real
