"""What a CUDA step does differently from a CPU step, in ways that change its memory.

The estimate runs fake CPU tensors (a CPU-only PyTorch cannot run autograd on fake CUDA
tensors), so two CPU code paths would otherwise stand in for CUDA's:

1. Dropout. On CUDA, `F.dropout` runs the fused `native_dropout` kernel and keeps a 1-byte
   bool mask for backward. On the CPU it falls back to `input * noise` with a noise tensor of
   the input's dtype: a 4-byte mask in fp32 (aten/src/ATen/native/Dropout.cpp,
   `is_fused_kernel_acceptable`). We call `native_dropout` directly, as CUDA would.
2. Autocast. CUDA's autocast runs softmax and log_softmax with `dtype=float32`
   (fp32_set_opt_dtype) and layer_norm / group_norm in fp32; CPU autocast leaves them in the
   input's precision (aten/src/ATen/autocast_mode.cpp). Attention's softmax output, saved
   for backward, is 4 bytes per element on CUDA and 2 on the CPU.

3. Attention. `F.scaled_dot_product_attention` on CUDA runs a fused kernel (flash attention
   for fp16/bf16 without a mask, memory-efficient attention otherwise) that keeps only its
   output and a log-sum-exp per row for backward; on the CPU it may fall back to the math
   path, which keeps the whole attention matrix. We call CUDA's kernels, whose meta
   implementations run on fake tensors.

The mode works on torch functions, above autograd, so what it changes is recorded in the
graph exactly as CUDA's own kernels and casts would be.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

_LOW = (torch.float16, torch.bfloat16)
_SOFTMAX = {F.softmax, F.log_softmax, torch.softmax, torch.log_softmax,
            torch.Tensor.softmax, torch.Tensor.log_softmax}
_NORMS = {F.layer_norm, F.group_norm}


class CudaKernelPolicy(TorchFunctionMode):
    """Give dropout and attention CUDA's fused kernels, and softmax, log_softmax, layer_norm
    and group_norm CUDA autocast's fp32 policy."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func is F.dropout:
            return _fused_dropout(*args, **kwargs)
        if func is F.scaled_dot_product_attention:
            return _fused_attention(*args, **kwargs)
        if torch.is_autocast_enabled("cpu") and args and _is_low(args[0]):
            if func in _SOFTMAX and kwargs.get("dtype") is None and len(args) < 3:
                kwargs["dtype"] = torch.float32
            elif func in _NORMS:
                args = tuple(_to_fp32(a) for a in args)
                kwargs = {k: _to_fp32(v) for k, v in kwargs.items()}
        return func(*args, **kwargs)


def _fused_dropout(input: torch.Tensor, p: float = 0.5, training: bool = True,
                   inplace: bool = False) -> torch.Tensor:
    if not training or p == 0 or inplace:
        return F.dropout(input, p, training, inplace)
    return torch.native_dropout(input, p, True)[0]


def _fused_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                     scale=None, enable_gqa=False):
    """The kernel CUDA's SDPA dispatcher picks first on recent GPUs (sdp_utils.cpp)."""
    if enable_gqa:
        return F.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
                                              is_causal, scale=scale, enable_gqa=True)
    if query.dtype in _LOW and attn_mask is None and query.shape[-1] <= 256:
        return torch.ops.aten._scaled_dot_product_flash_attention(
            query, key, value, dropout_p, is_causal, scale=scale)[0]
    return torch.ops.aten._scaled_dot_product_efficient_attention(
        query, key, value, attn_mask, query.requires_grad, dropout_p, is_causal, scale=scale)[0]


def _is_low(value) -> bool:
    return isinstance(value, torch.Tensor) and value.dtype in _LOW


def _to_fp32(value):
    return value.float() if _is_low(value) else value
