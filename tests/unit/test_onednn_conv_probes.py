"""oneDNN's convolution buffers, measured for estimates of the CPU (onednn_conv_probes.py): a
fake convolution gets the bytes its real kernel holds beyond its outputs, measured once per
distinct call; other ops get none; an estimate that models CUDA never probes."""

from __future__ import annotations

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from generator.experiment import Experiment
from generator.measure.backends import measure
from generator.measure.emulation import onednn_conv_probes

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
