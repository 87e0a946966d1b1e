"""What a CUDA step does differently from a CPU step, in ways that change its memory.

The estimate runs fake CPU tensors (a CPU-only PyTorch cannot run autograd on fake CUDA
tensors), so CPU code paths would otherwise stand in for CUDA's. `CudaKernelPolicy` is the one
context the estimate enters to take CUDA's instead, in four places:

1. Dropout. On CUDA, `F.dropout` runs the fused `native_dropout` kernel and keeps a 1-byte
   bool mask for backward. On the CPU it falls back to `input * noise` with a noise tensor of
   the input's dtype: a 4-byte mask in fp32 (aten/src/ATen/native/Dropout.cpp,
   `is_fused_kernel_acceptable`). We call `native_dropout` directly, as CUDA would.
2. Attention. `F.scaled_dot_product_attention` on CUDA runs a fused kernel (flash attention
   for fp16/bf16 without a mask, memory-efficient attention otherwise) that keeps only its
   output and a log-sum-exp per row for backward; on the CPU it may fall back to the math
   path, which keeps the whole attention matrix. We call CUDA's kernels
   (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp), whose meta implementations run on
   fake tensors; under autocast after casting where CUDA autocast casts, at
   `scaled_dot_product_attention` itself.
3. Autocast. CUDA autocast runs pow, exp, log, rsqrt, sum, cumsum, softmax, the norms and the
   losses in fp32 and leaves cat, stack and conv2d.padding alone; CPU autocast keeps the
   former in 16 bits and casts the latter (aten/src/ATen/autocast_mode.h, autocast_mode.cpp).
   cuda_autocast.py gives CPU autocast CUDA's whole table, at the AutocastCPU dispatch key
   where CPU autocast itself casts, ahead of autograd.
4. Softmax of fp16 into fp32. `softmax(x, dim, dtype=float32)` (and log_softmax) of an fp16
   tensor runs CUDA's `_softmax(x, dim, half_to_float=True)`; the CPU first makes an fp32 copy
   of x (aten/src/ATen/native/SoftMax.cpp, the `input_.is_cuda()` branch; bf16 copies on both).
   CUDA autocast's softmax asks for exactly that, and eager attention often does.

5. Optimizer step counters. Beside CUDA parameters, torch.optim keeps each parameter's
   `step` count in host memory: a CPU scalar unless the group is capturable or fused
   (torch/optim/adam.py `_init_group`, and the same in Adamax, NAdam, RAdam, RMSprop, Rprop,
   Adadelta, Adagrad and Adafactor; not ASGD). A fake CPU step would count it as
   device memory, one 512-byte block per parameter; `optimizer_state_on_host` tells the
   tracker not to (the tracker's `state_on_host`).

Not modelled: an fft of a 16-bit input runs in fp32 (the CPU has no half-precision FFT;
cuda_autocast.py), and batch norm keeps its per-channel statistics in the input's dtype,
where CUDA keeps them in fp32 (a few bytes).

Dropout and attention are swapped at the torch-function level, autocast and softmax at the
dispatcher (the AutocastCPU and AutogradCPU keys): all above the autograd record, so the graph
holds exactly CUDA's kernels and casts. The dispatcher kernels stay registered for the whole
`with` block, also while a checkpointed block is recomputed in backward, where the
torch-function modes are not active.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch._subclasses.fake_tensor import is_fake
from torch.overrides import TorchFunctionMode

from generator.measure.emulation.cuda_autocast import (
    autocast_excluded,
    cached_cast,
    forget_weight_casts,
    lower_precision,
    register_cuda_autocast,
)
from generator.results.notes import note


#: The CUDA behaviours a step can meet, each with its note (results/notes.py).
MET = ("cuda_dropout", "cuda_attention", "cuda_softmax", "optimizer_state_on_host")


def notes(met: set[str], autocast: bool) -> list[dict]:
    """A note for each CUDA behaviour the estimate modelled and the step met (a policy's
    `met`): an FP32 step with eager attention gets no note of fused attention or of fp16
    softmax. Autocast's policy, when it is on."""
    found = [note(ident) for ident in MET if ident in met]
    if autocast:  # the policy's table is PyTorch 2.13's (cuda_autocast.py)
        found.append(note("cuda_autocast", torch="2.13"))
    return found

_LOW = (torch.float16, torch.bfloat16)


#: torch.optim's optimizers that keep a step count in a CPU scalar unless capturable or
#: fused (each one's `_init_group`; ASGD keeps its own on the device).
_HOST_STEP_OPTIMIZERS = tuple(getattr(torch.optim, name) for name in (
    "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Rprop", "Adadelta", "Adagrad",
    "Adafactor") if hasattr(torch.optim, name))


def optimizer_state_on_host(optimizer: torch.optim.Optimizer, group: dict, key: str,
                            value: torch.Tensor) -> bool:
    """Whether a GPU step keeps this optimizer state in host memory: the scalar `step`
    count of torch.optim's Adam family, unless its group is capturable or fused."""
    return (isinstance(optimizer, _HOST_STEP_OPTIMIZERS) and key == "step"
            and value.dim() == 0 and not (group.get("capturable") or group.get("fused")))


class CudaKernelPolicy(TorchFunctionMode):
    """Give dropout and attention CUDA's fused kernels, CPU autocast CUDA's op policy and
    softmax CUDA's half-to-float kernel. Re-entrant (step.py re-enters it for recomputation).
    `met` names the behaviours (MET) the step under it actually met, for its notes."""

    def __init__(self):
        super().__init__()
        self.met: set[str] = set()

    def state_on_host(self, optimizer: torch.optim.Optimizer, group: dict, key: str,
                      value: torch.Tensor) -> bool:
        """optimizer_state_on_host, remembering that the step kept state on the host."""
        on_host = optimizer_state_on_host(optimizer, group, key, value)
        if on_host:
            self.met.add("optimizer_state_on_host")
        return on_host

    def __enter__(self):
        _DispatcherKernels.acquire()
        try:
            return super().__enter__()
        except BaseException:
            _DispatcherKernels.release()
            raise

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            self.met |= _DispatcherKernels.met
            _DispatcherKernels.release()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is F.dropout:
            out, fused = _fused_dropout(*args, **kwargs)
            if fused:
                self.met.add("cuda_dropout")
            return out
        if func is F.scaled_dot_product_attention:
            self.met.add("cuda_attention")
            return _fused_attention(*args, **kwargs)
        return func(*args, **kwargs)


class _DispatcherKernels:
    """Our AutocastCPU and AutogradCPU kernels: registered at the first acquire, unregistered
    (the CPU's own kernels back) at the last release, whichever mode instances hold them."""

    holders = 0
    library: torch.library.Library | None = None
    met: set[str] = set()
    """What the kernels met since the first acquire: "cuda_softmax"."""

    @classmethod
    def acquire(cls) -> None:
        if cls.holders == 0:
            cls.met = set()
            library = torch.library.Library("aten", "IMPL")
            register_cuda_autocast(library)
            library.impl("softmax.int", _half_to_float(torch.ops.aten._softmax), "AutogradCPU")
            library.impl("log_softmax.int", _half_to_float(torch.ops.aten._log_softmax),
                         "AutogradCPU")
            cls.library = library
        cls.holders += 1

    @classmethod
    def release(cls) -> None:
        cls.holders -= 1
        if cls.holders == 0:
            cls.library._destroy()
            cls.library = None
            forget_weight_casts()


def _half_to_float(kernel):
    """SoftMax.cpp's softmax/log_softmax with dtype, taking the CUDA branch. Real CPU tensors
    (tests) keep the copy: the CPU kernel has no half-to-float variant; fake ones run its
    meta implementation."""

    def softmax(input, dim, dtype=None):
        if input.dtype == torch.float16 and dtype == torch.float32 and is_fake(input):
            _DispatcherKernels.met.add("cuda_softmax")
            return kernel(input, dim, True)
        return kernel(input if dtype is None else input.to(dtype), dim, False)

    return softmax


def _fused_dropout(input: torch.Tensor, p: float = 0.5, training: bool = True,
                   inplace: bool = False) -> tuple[torch.Tensor, bool]:
    """Dropout's output, and whether CUDA's fused kernel (a 1-byte mask) stood in."""
    if not training or p == 0 or inplace:
        return F.dropout(input, p, training, inplace), False
    return torch.native_dropout(input, p, True)[0], True


def _fused_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                     scale=None, enable_gqa=False):
    """CUDA autocast casts the arguments of `scaled_dot_product_attention`
    (lower_precision_fp) and picks the kernel below autocast, by the cast dtypes: so do we."""
    if not torch.is_autocast_enabled("cpu"):
        return _attention_kernel(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                 enable_gqa)
    query, key, value, attn_mask = (cached_cast(lower_precision(), tensor)
                                    for tensor in (query, key, value, attn_mask))
    with autocast_excluded():
        return _attention_kernel(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                 enable_gqa)


def _attention_kernel(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    """The kernel CUDA's SDPA dispatcher picks first on recent GPUs (sdp_utils.cpp)."""
    if enable_gqa:
        return F.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
                                              is_causal, scale=scale, enable_gqa=True)
    if query.dtype in _LOW and attn_mask is None and query.shape[-1] <= 256:
        return torch.ops.aten._scaled_dot_product_flash_attention(
            query, key, value, dropout_p, is_causal, scale=scale)[0]
    return torch.ops.aten._scaled_dot_product_efficient_attention(
        query, key, value, attn_mask, query.requires_grad, dropout_p, is_causal, scale=scale)[0]
