"""CUDA autocast's fp32 policy, applied on the CPU so that an estimate models a CUDA step.

The estimate runs CPU autocast (a CPU-only PyTorch cannot run autograd on fake CUDA tensors),
but the two autocasts do not keep the same ops in low precision. CUDA's list in
aten/src/ATen/autocast_mode.cpp runs softmax and log_softmax with `dtype=float32`
(fp32_set_opt_dtype) and layer_norm / group_norm in fp32; CPU autocast leaves all four in
the input's precision. For memory this matters: attention's softmax output, saved for
backward, is 4 bytes per element on CUDA and 2 on the CPU. This mode gives those ops CUDA's
behaviour while autocast is on. It works on torch functions, above autograd, so the casts are
part of the recorded graph exactly as autocast's own would be.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

_LOW = (torch.float16, torch.bfloat16)
_SOFTMAX = {F.softmax, F.log_softmax, torch.softmax, torch.log_softmax,
            torch.Tensor.softmax, torch.Tensor.log_softmax}
_NORMS = {F.layer_norm, F.group_norm}


class CudaAutocastPolicy(TorchFunctionMode):
    """Give softmax, log_softmax, layer_norm and group_norm CUDA autocast's fp32 policy."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if torch.is_autocast_enabled("cpu") and args and _is_low(args[0]):
            if func in _SOFTMAX and kwargs.get("dtype") is None and len(args) < 3:
                kwargs["dtype"] = torch.float32
            elif func in _NORMS:
                args = tuple(_to_fp32(a) for a in args)
                kwargs = {k: _to_fp32(v) for k, v in kwargs.items()}
        return func(*args, **kwargs)


def _is_low(value) -> bool:
    return isinstance(value, torch.Tensor) and value.dtype in _LOW


def _to_fp32(value):
    return value.float() if _is_low(value) else value
