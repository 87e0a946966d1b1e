"""The copies the CPU's elementwise kernels make of inputs whose dtype differs from the op's.

An elementwise op of mixed dtypes (a bf16 tensor plus an fp32 one, a bool mask times floats)
computes in their common dtype. On CUDA the kernel reads each input in its own dtype and
casts as it goes; on the CPU, `TensorIteratorBase::compute_types`
(aten/src/ATen/TensorIterator.cpp, the `common_device == kCPU` branch) first makes a copy of
every input whose dtype is not the common one (`op.tensor().to(common_dtype_)`), and, where an
output (in place, or `out=`) has another dtype than the common one, a temporary output in the
common dtype that is copied back at the end. The copies live while the op runs and are freed
when it returns. Fake tensors run the op's meta kernel, which makes neither, so an estimate
modelling the CPU adds them (`modelled_kernels.kernel_buffers`); real CPU runs see them in
the allocator. Checked op by op against the CPU allocator: tests/unit/test_cpu_promotion.py.

It holds for the pointwise ops (`torch.Tag.pointwise`): TensorIterator's binary, comparison
and ternary configurations promote their inputs (`promote_inputs_to_common_dtype`), and so do
the backward kernels of activations; `where`'s condition and `masked_fill`'s mask are bool
masks outside the promotion. Ops of one input (a long tensor's `exp`) are left out.
"""

from __future__ import annotations

import torch
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes

from generator.measure.emulation import bound_arguments

#: Arguments that take no part in the promotion: bool masks.
OUTSIDE = {"condition", "mask"}


def promotion_buffers(func, args: tuple, kwargs: dict | None) -> list[int]:
    """Bytes of the copies the CPU kernel of `func` makes of its mixed-dtype tensors, or []."""
    if torch.Tag.pointwise not in func.tags:
        return []
    bound = bound_arguments(func, args, kwargs)
    inputs, outputs = [], []
    for argument in func._schema.arguments:
        value = bound.get(argument.name)
        if not isinstance(value, torch.Tensor) or argument.name in OUTSIDE:
            continue
        written = argument.alias_info is not None and argument.alias_info.is_write
        if written:
            outputs.append(value)
        if not written or not argument.kwarg_only:  # in place: self is read and written
            inputs.append(value)
    if len(inputs) < 2 or len({t.dtype for t in inputs + outputs}) < 2 or \
            any(t.device.type != "cpu" for t in inputs + outputs):
        return []
    common = elementwise_dtypes(*inputs, type_promotion_kind=(
        ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT))[1]
    return [t.numel() * common.itemsize for t in outputs + inputs if t.dtype != common]
