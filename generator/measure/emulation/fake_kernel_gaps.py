"""Ops whose fake (meta) kernel refuses inputs that the real kernels run, or allocates an
output that the real kernel does not.

An estimate runs the step on fake tensors, so each op's output comes from its meta kernel.
Where a meta kernel is stricter than every real kernel, a model that trains on a real
machine would fail to estimate; where it makes a new tensor that the real kernel does not,
the estimate counts memory no real run holds. `installed()` gives fake tensors, while it
lasts, a rule of their own for those ops (FakeTensorMode consults its rules,
`fake_impls.op_implementations_dict`, before the meta kernel), which makes the output as the
real kernel does and leaves every other call to the meta kernel. A rule, not a dispatch
mode: a mode would add a Python call to every op of every estimate (about a tenth of the
step's time) for ops that few steps run.

- `aten._grouped_mm` (`torch.nn.functional.grouped_mm`: the experts of Mixture-of-Experts
  models in transformers 5, Mixtral, Qwen-MoE and others). Its meta kernel
  (torch/_meta_registrations.py, `_meta_grouped_mm_common`) accepts bfloat16 only, as the
  fast CUTLASS path of CUDA does; the real kernels on the CPU and on CUDA
  (aten/src/ATen/native/GroupedMMUtils.h, `_grouped_mm_validate_inputs`) also take float32
  and float16 and run them group by group (`_grouped_mm_fallback`: `mm_out` into slices of
  the output, no temporaries). The output: `create_grouped_gemm_output_tensor` of that file,
  its last dimension's stride padded to 16 bytes, in `mat_a`'s dtype.
- `_c10d_functional.wait_tensor` (a rank of a multi-GPU step: DTensor's redistributions, e.g.
  tensor parallelism gathering the logits of a vocabulary-parallel head). The real op waits
  for the collective that writes its input and returns that input itself
  (torch/csrc/distributed/c10d/Functional.cpp); its meta kernel (_wait_tensor_meta in
  torch/distributed/_functional_collectives.py) returns a new `empty_like(input)`: a second
  tensor of the collective's output size for as long as the two live, e.g. one more copy of
  the full logits through a TP forward's loss (128,000 B more than the real ranks of the
  tiny LLaMA's FSDP2 × TP on gloo). An estimate meets it at every functional collective: in
  fake mode they take themselves for traced and wait at once (`_maybe_wrap_tensor`), where
  a real eager run waits when the output is first used; the output is the same either way.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from torch._subclasses import fake_impls
from torch._subclasses.fake_tensor import FakeTensor, in_kernel_invocation_manager

aten = torch.ops.aten
#: The dtypes the real grouped-mm kernels take (GroupedMMUtils.h) beyond the meta's bfloat16.
_FALLBACK_DTYPES = (torch.float32, torch.float16)


def grouped_mm_layout(mat_a: torch.Tensor, mat_b: torch.Tensor,
                      offs: torch.Tensor | None) -> tuple[list[int], list[int]]:
    """The size and stride of the output `_grouped_mm` allocates
    (create_grouped_gemm_output_tensor): sizes by the operands' layouts, the last
    dimension's stride padded to a multiple of 16 bytes."""
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
    return size, ([padded, 1] if a_2d != b_2d else [size[1] * padded, padded, 1])


def _grouped_mm(fake_mode, func, mat_a, mat_b, offs=None, bias=None, out_dtype=None):
    """Fake tensors' rule for `aten._grouped_mm`: the dtypes only the real kernels take;
    NotImplemented (the meta kernel then) for the rest."""
    if not (mat_a.dtype in _FALLBACK_DTYPES and mat_b.dtype == mat_a.dtype
            and bias is None and out_dtype in (None, mat_a.dtype)):
        return NotImplemented
    size, stride = grouped_mm_layout(mat_a, mat_b, offs)
    with in_kernel_invocation_manager(fake_mode):
        out = torch.empty_strided(size, stride, dtype=mat_a.dtype, device="meta")
    return FakeTensor(fake_mode, out, mat_a.device)


def _wait_tensor(_fake_mode, _func, tensor, *_args, **_kwargs):
    """Fake tensors' rule for `_c10d_functional.wait_tensor`: its input, as the real op
    returns it (nothing to wait for on a fake process group)."""
    return tensor


def _rules() -> dict:
    """Each op with a rule → the rule. wait_tensor only where this PyTorch has
    torch.distributed's functional collectives (a build without them has no such op)."""
    rules = {aten._grouped_mm.default: _grouped_mm}
    if hasattr(torch.ops._c10d_functional, "wait_tensor"):
        rules[torch.ops._c10d_functional.wait_tensor.default] = _wait_tensor
    return rules


@contextlib.contextmanager
def installed() -> Iterator[None]:
    """Fake tensors take the rules meanwhile, and only their own afterwards. A rule PyTorch
    has by then (its own fix of the gap) is left as it is; entered again inside itself (a
    study within an estimate), the rules stay until the outermost exit."""
    global _holders
    rules = fake_impls.op_implementations_dict
    if _holders == 0:
        for op, rule in _rules().items():
            if op not in rules:
                rules[op] = rule
                _added.append(op)
    _holders += 1
    try:
        yield
    finally:
        _holders -= 1
        if _holders == 0:
            for op in _added:
                del rules[op]
            _added.clear()


#: How many `installed()` are open, and the ops whose rules the outermost added.
_holders = 0
_added: list = []
