"""CUDA autocast's policy on CPU tensors (cuda_autocast.py): the table is PyTorch's, and the
ops that run below autocast, with their dtypes, are those CUDA's own autocast kernels run.

The yardstick: a CPU-only PyTorch still holds the AutocastCUDA kernels, and they run on fake
CUDA tensors in forward (autograd on them needs a CUDA build), so each case runs twice, on fake
CUDA tensors under CUDA's autocast and on fake CPU tensors under CPU autocast with the
emulation, and the two traces of ops must be the same."""

from __future__ import annotations

import contextlib
import gc
import weakref

import pytest
import torch
import torch.nn.functional as F
from autocast_state import forced_autocast
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.checkpoint import checkpoint, set_checkpoint_early_stop

from generator.measure.emulation.cuda_autocast import (
    APPEND_DTYPE_TARGET,
    BANNED_MESSAGE,
    CPU_KERNELS_KEPT,
    CPU_KERNELS_KEPT_FOR_FFT,
    CPU_KERNELS_REPLACED,
    CUDA_AUTOCAST_POLICY,
    FP32_APPEND_DTYPE,
    registered_ops,
)
from generator.measure.emulation.cuda_kernels import CudaKernelPolicy

F16, BF16, F32, LONG = torch.float16, torch.bfloat16, torch.float32, torch.long


def test_the_table_classifies_every_op_that_cuda_autocast_registers():
    cuda = registered_ops("AutocastCUDA")
    assert not cuda - CUDA_AUTOCAST_POLICY.keys(), "unclassified AutocastCUDA ops"
    assert not CUDA_AUTOCAST_POLICY.keys() - cuda, "the table names ops torch lacks"
    assert set(APPEND_DTYPE_TARGET) == {name for name, policy in CUDA_AUTOCAST_POLICY.items()
                                        if policy == FP32_APPEND_DTYPE}


def test_every_op_cpu_autocast_registers_is_accounted_for():
    cuda, cpu = registered_ops("AutocastCUDA"), registered_ops("AutocastCPU")
    assert CPU_KERNELS_KEPT | CPU_KERNELS_REPLACED.keys() == cuda & cpu
    assert not CPU_KERNELS_KEPT & CPU_KERNELS_REPLACED.keys()
    assert CPU_KERNELS_KEPT_FOR_FFT <= cpu - cuda


# ------------------------------------------------------------------ against CUDA's own kernels

class _Trace(TorchDispatchMode):
    """The ops that reach the tensors (below autocast and autograd), with in and out dtypes."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is not torch.ops.prim.device.default:
            self.calls.append((func, _dtypes((args, kwargs)), _dtypes(out)))
        return out


def _dtypes(tree) -> tuple:
    return tuple(leaf.dtype for leaf in tree_leaves(tree) if isinstance(leaf, torch.Tensor))


def _trace(device: str, low: torch.dtype, call, inputs: list[tuple]) -> list | str:
    emulation = CudaKernelPolicy() if device == "cpu" else contextlib.nullcontext()
    with FakeTensorMode(), emulation:
        tensors = [torch.empty(shape, dtype=dtype, device=device) for shape, dtype in inputs]
        # no tensor requires grad: autograd on a fake CUDA tensor aborts a CPU-only build
        with torch.no_grad(), forced_autocast(device, low), _Trace() as trace:
            try:
                call(*tensors)
            except RuntimeError as error:
                return str(error)
    return trace.calls


A, B, V = ((4, 8), F32), ((8, 8), F32), ((8,), F32)
H, HB = ((4, 8), F16), ((4, 8), BF16)
IMAGE, KERNEL = ((1, 2, 6, 6), F32), ((3, 2, 3, 3), F32)
CASES = {  # name: (call, inputs); each runs with fp16 and bf16 autocast
    "mm: lower_precision_fp, C++ CPU kernel": (torch.mm, [A, B]),
    "linear: lower_precision_fp, C++ CPU kernel": (F.linear, [A, B, V]),
    "einsum: lower_precision_fp, ours": (lambda a, b: torch.einsum("ij,jk->ik", a, b), [A, B]),
    "addmv: lower_precision_fp, ours": (torch.addmv, [V, B, V]),
    "conv2d padding='same': CPU-only overload falls through to convolution":
        (lambda x, w: F.conv2d(x, w, padding="same"), [IMAGE, KERNEL]),
    "pow: fp32": (lambda h: torch.pow(h, 3.0), [H]),
    "exp, rsqrt, log1p: fp32": (lambda h: (h.exp(), h.rsqrt(), h.log1p()), [H]),
    "softplus, logsumexp: fp32": (lambda h: (F.softplus(h), h.logsumexp(1)), [H]),
    "layer_norm, group_norm, rms_norm: fp32": (lambda h, w: (
        F.layer_norm(h, (8,), w, w), F.group_norm(h, 2), F.rms_norm(h, (8,))), [H, ((8,), F16)]),
    "mse_loss: fp32, C++ CPU kernel": (F.mse_loss, [H, A]),
    "softmax, log_softmax: fp32_set_opt_dtype":
        (lambda h: (h.softmax(-1), F.log_softmax(h, dim=-1)), [H]),
    "softmax bf16: fp32_set_opt_dtype": (lambda h: h.softmax(-1), [HB]),
    "sum, cumsum: fp32_set_opt_dtype": (lambda h: (h.sum(), h.sum(1), h.cumsum(0)), [H]),
    "sum with a dtype: kept": (lambda h: h.sum(dtype=F16), [H]),
    "sum of fp32: dtype set all the same": (lambda a: a.sum(), [A]),
    "prod: fp32_set_opt_dtype, where the CPU casts": (lambda h: h.prod(1), [H]),
    "norm: fp32_append_dtype": (lambda h: (h.norm(), torch.norm(h, dim=1)), [H]),
    "addcmul, atan2: promote": (lambda h, a: (torch.addcmul(h, h, a), torch.atan2(h, a),
                                              torch.addcmul(h, h, h)), [H, A]),
    "scatter_add, bilinear: promote": (lambda h, a, i, w: (
        h.scatter_add(0, i, a), F.bilinear(h, a, w)), [H, A, ((4, 8), LONG), ((1, 8, 8), F32)]),
    "cat, stack: not cast on CUDA": (lambda h, a: (torch.cat([h, a]), torch.stack([h, a])),
                                     [H, A]),
    "cross_entropy: log_softmax and nll_loss on CUDA":
        (lambda h, t: F.cross_entropy(h, t), [H, ((4,), LONG)]),
    "binary_cross_entropy: banned": (F.binary_cross_entropy, [H, H]),
}


@pytest.mark.parametrize("low", [F16, BF16], ids=["fp16", "bf16"])
@pytest.mark.parametrize("case", list(CASES))
def test_the_ops_below_autocast_are_those_of_cuda(case, low):
    call, inputs = CASES[case]
    inputs = [(shape, low if dtype == F16 else dtype) for shape, dtype in inputs]
    cuda = _trace("cuda", low, call, inputs)
    assert cuda and (isinstance(cuda, list) or "banned" in case), cuda
    assert _trace("cpu", low, call, inputs) == cuda


def test_banned_binary_cross_entropy_says_what_cuda_says():
    message = _trace("cuda", F16, F.binary_cross_entropy, [H, H])
    assert message == BANNED_MESSAGE == _trace("cpu", F16, F.binary_cross_entropy, [H, H])


def test_one_op_of_each_class_takes_its_cuda_dtype():
    with FakeTensorMode(), CudaKernelPolicy(), torch.autocast("cpu", dtype=F16):
        x, h = torch.randn(4, 8), torch.randn(4, 8, dtype=F16)
        assert torch.mm(x, x.t()).dtype == F16  # lower_precision_fp
        assert torch.pow(h, 3.0).dtype == F32  # fp32
        assert h.softmax(-1).dtype == h.sum().dtype == F32  # fp32_set_opt_dtype
        assert h.norm().dtype == F32  # fp32_append_dtype
        assert torch.addcmul(h, h, x).dtype == F32  # promote: fp32 wins
        assert torch.addcmul(h, h, h).dtype == F16  # promote: all 16-bit
        assert torch.cat([h, x]).dtype == F32  # no policy: cat's own type promotion
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(h.sigmoid(), h.sigmoid())  # banned


# ------------------------------------------------------------------ what autograd records

def test_casts_come_before_autograd_and_backward_keeps_cuda_dtypes():
    saved: list[torch.dtype] = []
    with (FakeTensorMode(), CudaKernelPolicy(),
          torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t.dtype) or t,
                                                   lambda t: t)):
        linear = torch.nn.Linear(8, 8)
        x = torch.randn(4, 8, requires_grad=True)
        with torch.autocast("cpu", dtype=F16):
            hidden = linear(x)  # saves fp16 casts of x and of the weight
            cubed = torch.pow(hidden, 3.0)  # the cast to fp32 is in the graph: fp32 saved
            probs = cubed.softmax(-1)
        assert (hidden.dtype, cubed.dtype, probs.dtype) == (F16, F32, F32)
        assert type(cubed.grad_fn.next_functions[0][0]).__name__ == "ToCopyBackward0"
        probs.sum().backward()
        assert linear.weight.grad.dtype == F32
    assert saved == [F16, F16, F32, F32]  # + pow's input, softmax's output


def test_cat_of_fp16_and_fp32_promotes_itself_without_a_cast():
    def cast_inputs(policy) -> list[str]:
        with FakeTensorMode(), policy, torch.autocast("cpu", dtype=F16):
            half = torch.randn(2, 8, dtype=F16, requires_grad=True)
            joined = torch.cat([half, torch.randn(2, 8, requires_grad=True)])
            assert joined.dtype == F32
            return [type(f).__name__ for f, _ in joined.grad_fn.next_functions]
    assert "ToCopyBackward0" in cast_inputs(contextlib.nullcontext())  # CPU autocast
    assert "ToCopyBackward0" not in cast_inputs(CudaKernelPolicy())


def test_after_the_policy_exits_cpu_autocast_is_itself_again():
    x = torch.randn(4, 8, dtype=BF16, requires_grad=True)
    with CudaKernelPolicy(), torch.autocast("cpu", dtype=BF16):
        assert torch.pow(x, 2).dtype == F32
        with CudaKernelPolicy():  # re-entered, as step.py does for recomputation
            assert x.sum().dtype == F32
        assert x.exp().dtype == F32
    with torch.autocast("cpu", dtype=BF16):
        assert torch.pow(x, 2).dtype == BF16
        assert x.prod().dtype == F32  # the CPU's own fp32 kernel, back
        joined = torch.cat([torch.randn(4, 8, requires_grad=True), x])
        assert type(joined.grad_fn.next_functions[1][0]).__name__ == "ToCopyBackward0"


def test_a_checkpointed_block_recomputes_under_the_cuda_policy():
    """The recomputation runs in backward, outside the torch-function mode stack (in full:
    early stop would end it at pow, the last op that saves a tensor)."""
    dtypes: list[torch.dtype] = []
    linear = torch.nn.Linear(8, 8)

    def block(x):
        cubed = torch.pow(linear(x), 3.0)
        dtypes.append(cubed.dtype)
        return cubed

    with CudaKernelPolicy():
        with torch.autocast("cpu", dtype=BF16), set_checkpoint_early_stop(False):
            out = checkpoint(block, torch.randn(4, 8, requires_grad=True), use_reentrant=False)
        out.sum().backward()
    assert dtypes == [F32, F32]


def test_weight_casts_made_by_our_kernels_are_cached_until_autocast_exits():
    weight = torch.randn(8, 8, requires_grad=True)
    with CudaKernelPolicy():
        with torch.autocast("cpu", dtype=BF16):
            first, second = (torch.mv(weight, torch.randn(8, requires_grad=True))  # mv: ours
                             for _ in range(2))
            cast = first.grad_fn._saved_self
            assert cast.dtype == BF16 and second.grad_fn._saved_self is cast
            alive = weakref.ref(cast)
            del first, second, cast
            gc.collect()
            assert alive() is not None  # held by the cache, as CUDA's would be
        assert alive() is None  # autocast's exit cleared it


def test_attention_casts_at_sdpa_as_cuda_autocast_does():
    with FakeTensorMode(), CudaKernelPolicy(), torch.autocast("cpu", dtype=F16):
        q = torch.randn(2, 4, 16, 8, requires_grad=True)
        flash = F.scaled_dot_product_attention(q, q, q)
        mask = torch.zeros(16, 16)
        efficient = F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    assert type(flash.grad_fn).__name__ == "ScaledDotProductFlashAttentionBackward0"
    assert type(efficient.grad_fn).__name__ == "ScaledDotProductEfficientAttentionBackward0"
    assert flash.dtype == efficient.dtype == F16  # the efficient kernel got fp16 inputs too
