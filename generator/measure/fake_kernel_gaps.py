"""Ops whose fake (meta) kernel refuses inputs that the real kernels run.

An estimate runs the step on fake tensors, so each op's output comes from its meta kernel.
Where a meta kernel is stricter than every real kernel, a model that trains on a real
machine would fail to estimate. `FakeKernelGaps`, a TorchDispatchMode entered inside
FakeTensorMode, makes those outputs itself, as the real kernel allocates them:

- `aten._grouped_mm` (`torch.nn.functional.grouped_mm`: the experts of Mixture-of-Experts
  models in transformers 5, Mixtral, Qwen-MoE and others). Its meta kernel
  (torch/_meta_registrations.py, `_meta_grouped_mm_common`) accepts bfloat16 only, as the
  fast CUTLASS path of CUDA does; the real kernels on the CPU and on CUDA
  (aten/src/ATen/native/GroupedMMUtils.h, `_grouped_mm_validate_inputs`) also take float32
  and float16 and run them group by group (`_grouped_mm_fallback`: `mm_out` into slices of
  the output, no temporaries). The output: `create_grouped_gemm_output_tensor` of that file,
  its last dimension's stride padded to 16 bytes, in `mat_a`'s dtype.
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten
#: The dtypes the real grouped-mm kernels take (GroupedMMUtils.h) beyond the meta's bfloat16.
_FALLBACK_DTYPES = (torch.float32, torch.float16)


def grouped_mm_output(mat_a: torch.Tensor, mat_b: torch.Tensor,
                      offs: torch.Tensor | None) -> torch.Tensor:
    """The output `_grouped_mm` allocates (create_grouped_gemm_output_tensor): sizes by the
    operands' layouts, the last dimension's stride padded to a multiple of 16 bytes."""
    a_2d, b_2d = mat_a.dim() == 2, mat_b.dim() == 2
    if (a_2d or b_2d) and offs is None:
        raise RuntimeError("grouped_mm: offsets are needed with a 2D operand")
    if not (a_2d and b_2d) and mat_a.size(-1) != mat_b.size(-2):
        raise RuntimeError("grouped_mm: contraction dimension of mat_a and mat_b must match")
    if a_2d:
        size = [offs.size(0), mat_a.size(0), mat_b.size(1)] if b_2d else \
            [mat_a.size(0), mat_b.size(-1)]
    else:
        size = [mat_a.size(1), mat_b.size(1)] if b_2d else \
            [mat_a.size(0), mat_a.size(1), mat_b.size(-1)]
    alignment = 16 // mat_a.element_size()
    padded = -(-size[-1] // alignment) * alignment
    stride = [padded, 1] if a_2d != b_2d else [size[1] * padded, padded, 1]
    return torch.empty_strided(size, stride, dtype=mat_a.dtype, device=mat_a.device)


class FakeKernelGaps(TorchDispatchMode):
    """Makes the outputs of the ops the module docstring lists, where their meta kernel
    refuses what the real kernel runs; every other op passes through unchanged."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is aten._grouped_mm.default:
            mat_a, mat_b = args[0], args[1]
            offs = args[2] if len(args) > 2 else kwargs.get("offs")
            bias = args[3] if len(args) > 3 else kwargs.get("bias")
            out_dtype = args[4] if len(args) > 4 else kwargs.get("out_dtype")
            if (mat_a.dtype in _FALLBACK_DTYPES and mat_b.dtype == mat_a.dtype
                    and bias is None and out_dtype in (None, mat_a.dtype)):
                # This mode is off the stack while it handles an op, so fake mode below it
                # makes the tensor: a fake one, allocating nothing.
                return grouped_mm_output(mat_a, mat_b, offs)
        return func(*args, **kwargs)
