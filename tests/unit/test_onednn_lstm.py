"""The CPU's fused LSTM kernel on fake tensors (onednn_lstm.py, cpu_kernels.py):
oneDNN's size rules, the workspace autograd saves and the buffers the kernel holds while it
runs, each against a real tiny run of the same kernel; a GRU needs no model. The estimate of
a whole model against a real step: slow/test_kernel_estimates.py."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.profiler import ProfilerActivity, profile
from torch.utils._python_dispatch import TorchDispatchMode

from generator.measure.emulation.cpu_kernels import (
    MODELLED,
    KernelBufferTracker,
    kernel_buffers,
    modelled_kernels,
    tracker_class,
)
from generator.measure.emulation.onednn_lstm import LSTMLayer, good_ld, page_packed
from generator.measure.tracking.tracker import MemoryTracker

T, N, I, H = 7, 3, 5, 16  # small, and not multiples of anything oneDNN pads to


def test_good_leading_dimensions_and_page_packing() -> None:
    assert good_ld(16, 4) == 16 and good_ld(5, 4) == 16 and good_ld(5, 2) == 32
    assert good_ld(256, 4) == 272 and good_ld(1024, 4) == 1040  # 4K aliasing avoided
    assert page_packed([]) == 0 and page_packed([1]) == 4096
    assert page_packed([5120, 1280, 3072]) == 16384  # each part starts on a page


def test_rules_reproduce_onednn_on_conv_lstm_second_layer() -> None:
    """Bytes the real kernels allocated for conv-lstm's second layer at batch 32, 200
    frames, measured with the profiler on PyTorch 2.13 (oneDNN 3.12)."""
    fp32 = LSTMLayer(200, 32, 256, 256, elem=4, state_c_elem=4)
    assert fp32.workspace_bytes() == 101_920_768
    assert fp32.scratchpad_bytes(backward=False) == 26_702_392
    assert fp32.scratchpad_bytes(backward=True) == 26_702_392
    assert fp32.weights_bytes(256, backward=False) == 1_064_960  # ldigo, ld 1040
    assert fp32.weights_bytes(256, backward=True) == 1_114_112  # ldgoi, ld 272
    assert fp32.weights_bytes(128, backward=True) == 0  # already PyTorch's own layout
    bf16 = LSTMLayer(200, 32, 256, 256, elem=2, state_c_elem=2, brgemm=True)
    assert bf16.workspace_bytes() == 72_364_032
    assert bf16.weights_bytes(256, backward=False) == 524_288


def _lstm_and_input(cls=nn.LSTM):
    torch.manual_seed(0)
    return cls(I, H, num_layers=2), torch.randn(T, N, I)


def _saved_bytes(run) -> dict[int, int]:
    """Bytes of every storage autograd saves during `run()`, by storage; the graph is kept
    alive until they are counted."""
    saved: dict[int, int] = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        saved[storage._cdata] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        output = run()
    del output
    return saved


def _forward(cls, fake: bool, modelled: bool) -> list[int]:
    def run():
        model, x = _lstm_and_input(cls)
        return model(x)[0]
    if not fake:
        return sorted(_saved_bytes(run).values())
    with FakeTensorMode(), modelled_kernels("cpu" if modelled else "cuda"):
        return sorted(_saved_bytes(run).values())


def test_fake_lstm_saves_the_workspace_a_real_run_saves() -> None:
    real = _forward(nn.LSTM, fake=False, modelled=False)
    plain_fake = _forward(nn.LSTM, fake=True, modelled=False)
    layer = LSTMLayer(T, N, I, H, 4, 4)
    # The root cause: the meta kernel's workspace is empty, so fake mode saves 0 bytes where
    # the real kernel saves one workspace per layer; everything else is the same.
    assert plain_fake.count(0) == 2
    assert real == sorted([b for b in plain_fake if b] + [
        layer.workspace_bytes(), LSTMLayer(T, N, H, H, 4, 4).workspace_bytes()])
    assert _forward(nn.LSTM, fake=True, modelled=True) == real


def test_gru_takes_the_same_path_real_and_fake() -> None:
    """On the CPU only LSTM has a fused kernel: a GRU's steps are ordinary ops that fake
    tensors see, so its saved bytes need no model."""
    assert _forward(nn.GRU, fake=True, modelled=False) == _forward(nn.GRU, fake=False,
                                                                   modelled=False)


class _Calls(TorchDispatchMode):
    """Records the modelled ops' calls (to model them from the real arguments)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in MODELLED:
            self.calls.append((func, args, kwargs))
        return func(*args, **(kwargs or {}))


def _buffers_inside(prof, name: str) -> list[list[int]]:
    """For each call of op `name`, the sizes of the blocks allocated and freed inside it."""
    from torch._C._profiler import _EventType

    found = []

    def walk(event, inside: list | None) -> None:
        if inside is None and event.name == name:
            inside = []
            found.append(inside)
        if event.tag == _EventType.Allocation and inside is not None:
            inside.append((event.extra_fields.ptr, event.extra_fields.alloc_size))
        for child in event.children:
            walk(child, inside)

    for root in prof.profiler.kineto_results.experimental_event_tree():
        walk(root, None)
    sizes = []
    for allocations in found:
        live, freed = {}, []
        for ptr, size in allocations:
            if size > 0:
                live[ptr] = size
            elif ptr in live:
                freed.append(live.pop(ptr))
        sizes.append(sorted(freed))
    return sizes


def test_kernel_buffers_are_what_the_real_kernels_allocate_inside() -> None:
    model, x = _lstm_and_input()
    calls = _Calls()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        with calls:
            output = model(x)[0]
            output.mean().backward()  # mean's gradient is a broadcast: copied to contiguous
    modelled = {func: [sorted(kernel_buffers(f, a, k)) for f, a, k in calls.calls if f is func]
                for func in MODELLED}
    assert _buffers_inside(prof, "aten::mkldnn_rnn_layer") == modelled[MODELLED[0]]
    assert _buffers_inside(prof, "aten::mkldnn_rnn_layer_backward") == modelled[MODELLED[1]]
    assert all(modelled[MODELLED[1]])


def test_the_estimate_uses_the_buffer_tracker_only_when_modelling_the_cpu() -> None:
    assert tracker_class() is MemoryTracker
    with FakeTensorMode():
        with modelled_kernels("cpu"):
            assert tracker_class() is KernelBufferTracker
        with modelled_kernels("cuda"):
            assert tracker_class() is MemoryTracker


def test_buffer_tracker_holds_the_buffers_around_the_op_only() -> None:
    """Under fake tensors the tracker counts each call's buffers from just before its
    outputs to just after: at the step's end none is left."""
    with FakeTensorMode(), modelled_kernels("cpu"):
        model, x = _lstm_and_input()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        with KernelBufferTracker(model, optimizer) as tracker:
            model(x)[0].mean().backward()
        report = tracker.report()
    layer = LSTMLayer(T, N, H, H, 4, 4)
    temporaries = report.timeline["bytes"]["temporaries"]
    assert max(temporaries) >= sum(layer.forward_buffers())
    assert temporaries[-1] < layer.scratchpad_bytes(backward=True)
    assert report.live_at_peak_bytes["activations"] >= 2 * layer.workspace_bytes()


@pytest.mark.skipif(not torch.ops.mkldnn._is_mkldnn_bf16_supported(),
                    reason="this CPU runs bf16 LSTMs step by step, not through oneDNN")
def test_bf16_workspace_matches_a_real_run() -> None:
    def run():
        model, x = _lstm_and_input()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return model(x)[0]
    real = sorted(_saved_bytes(run).values())
    with FakeTensorMode(), modelled_kernels("cpu"):
        assert sorted(_saved_bytes(run).values()) == real


def test_notes_say_what_was_modelled_when_an_lstm_ran() -> None:
    with FakeTensorMode(), modelled_kernels("cpu") as kernels:
        assert kernels.notes() == []
        _lstm_and_input()[0](_lstm_and_input()[1])
    assert kernels.lstm_calls == 2 and kernels.notes() == [{"id": "onednn_lstm", "values": {}}]
    with FakeTensorMode(), modelled_kernels("cuda") as kernels:  # nothing entered for CUDA
        assert not any(isinstance(m, TorchDispatchMode) and m is kernels
                       for m in torch.utils._python_dispatch._get_current_dispatch_mode_stack())
