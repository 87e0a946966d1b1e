"""The estimate's CUDA emulation: fused dropout and CUDA autocast's fp32 ops."""

import pytest
import torch
import torch.nn.functional as F

from generator.measure.emulation.cuda_kernels import CudaKernelPolicy


def test_dropout_takes_the_fused_kernel_with_a_bool_mask():
    x = torch.randn(4, 8, requires_grad=True)
    assert type(F.dropout(x, 0.1, True).grad_fn).__name__ == "MulBackward0"  # CPU fallback
    with CudaKernelPolicy():
        y = F.dropout(x, 0.1, True)
        assert type(y.grad_fn).__name__ == "NativeDropoutBackward0"
        assert F.dropout(x, 0.1, False) is x  # eval: untouched
    y.sum().backward()
    assert x.grad is not None


def test_softmax_and_layer_norm_run_in_fp32_under_autocast():
    x = torch.randn(2, 4, 8)
    with CudaKernelPolicy(), torch.autocast("cpu", dtype=torch.float16):
        half = torch.nn.Linear(8, 8)(x)
        assert half.dtype == torch.float16
        assert torch.softmax(half, -1).dtype == torch.float32
        assert F.log_softmax(half, dim=-1).dtype == torch.float32
        assert half.softmax(-1).dtype == torch.float32
        assert F.layer_norm(half, (8,)).dtype == torch.float32


def test_without_autocast_nothing_changes():
    x = torch.randn(2, 8, dtype=torch.float16)
    with CudaKernelPolicy():
        assert torch.softmax(x, -1).dtype == torch.float16


def test_attention_takes_a_fused_cuda_kernel_on_fake_tensors():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode(), CudaKernelPolicy():
        q = torch.randn(2, 4, 16, 8, requires_grad=True)
        out = F.scaled_dot_product_attention(q, q, q, dropout_p=0.1)
        assert type(out.grad_fn).__name__ == "ScaledDotProductEfficientAttentionBackward0"
        half = torch.randn(2, 4, 16, 8, dtype=torch.float16, requires_grad=True)
        out = F.scaled_dot_product_attention(half, half, half, dropout_p=0.1)
        assert type(out.grad_fn).__name__ == "ScaledDotProductFlashAttentionBackward0"
        out.sum().backward()


def test_which_optimizer_state_a_gpu_step_keeps_on_the_host():
    """torch.optim's Adam family counts steps in a CPU scalar unless capturable or fused."""
    from generator.measure.emulation.cuda_kernels import optimizer_state_on_host

    def placement(optimizer) -> dict[str, bool]:
        param = optimizer.param_groups[0]["params"][0]
        param.grad = torch.ones_like(param)
        optimizer.step()
        group = optimizer.param_groups[0]
        return {key: optimizer_state_on_host(optimizer, group, key, value)
                for key, value in optimizer.state[param].items()
                if isinstance(value, torch.Tensor)}

    def weight():
        return [torch.zeros(3, requires_grad=True)]

    assert placement(torch.optim.AdamW(weight())) == {
        "step": True, "exp_avg": False, "exp_avg_sq": False}
    assert placement(torch.optim.Adam(weight(), fused=True))["step"] is False
    adam = torch.optim.Adam(weight())  # capturable needs a GPU to step: the group says it
    assert not optimizer_state_on_host(adam, {**adam.param_groups[0], "capturable": True},
                                       "step", torch.tensor(1.0))
    assert placement(torch.optim.RMSprop(weight()))["step"] is True
    assert placement(torch.optim.ASGD(weight()))["step"] is False  # on the device
    assert placement(torch.optim.SGD(weight(), lr=0.1, momentum=0.9)) == {
        "momentum_buffer": False}


# A note of what an estimate modelled appears only where the step met it (issue 34).
def test_notes_name_only_what_the_step_met():
    from generator.measure.emulation import cuda_kernels
    assert [n["id"] for n in cuda_kernels.notes(set(), autocast=False)] == []
    assert [n["id"] for n in cuda_kernels.notes({"cuda_softmax", "cuda_dropout"}, autocast=True)] \
        == ["cuda_dropout", "cuda_softmax", "cuda_autocast"]


@pytest.mark.parametrize("options, met, not_met", [
    ({}, {"cuda_dropout", "optimizer_state_on_host"}, {"cuda_attention", "cuda_softmax"}),
    ({"precision": "amp-fp16"}, {"cuda_softmax", "cuda_autocast"}, {"cuda_attention"}),
    ({"precision": "amp-bf16", "attention": "sdpa"}, {"cuda_attention"}, {"cuda_softmax"}),
    ({"optimizer": "sgd"}, set(), {"optimizer_state_on_host"}),
])
def test_an_estimate_notes_what_its_step_met(options, met, not_met):
    import generator as g
    ids = {n["id"] for n in g.estimate("tiny", batch_size=2, seq_len=16, **options)
           .to_dict()["notes"]}
    assert met <= ids and not (not_met & ids)
