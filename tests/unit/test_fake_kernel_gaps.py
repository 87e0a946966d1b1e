"""fake_kernel_gaps: where a meta kernel refuses what the real kernels run, or allocates what
they do not, fake tensors get a rule that makes the output the real kernel would, checked here
against the real CPU kernel."""

from __future__ import annotations

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from generator.measure.emulation import fake_kernel_gaps

GROUPS, M, K, N = 3, 16, 24, 40
OFFS = torch.tensor([5, 9, 16], dtype=torch.int32)  # three groups of tokens (or of K)
LAYOUTS = {  # (mat_a, mat_b, offs): the four layouts the kernel takes
    "2d x 3d (experts' forward)": ((M, K), (GROUPS, K, N), OFFS),
    "3d x 2d": ((GROUPS, M, K), (K, N), torch.tensor([8, 16, 24], dtype=torch.int32)),
    "2d x 2d (experts' weight gradients)": ((M, K), (K, N),
                                             torch.tensor([8, 16, 24], dtype=torch.int32)),
    "3d x 3d": ((GROUPS, M, K), (GROUPS, K, N), None),
}


def _fake_output(a: torch.Tensor, b: torch.Tensor, offs) -> torch.Tensor:
    with fake_kernel_gaps.installed(), FakeTensorMode() as fake:
        return torch.nn.functional.grouped_mm(
            fake.from_tensor(a), fake.from_tensor(b),
            offs=None if offs is None else fake.from_tensor(offs))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_output_is_the_real_kernels(layout: str, dtype: torch.dtype) -> None:
    a_size, b_size, offs = LAYOUTS[layout]
    a, b = torch.randn(a_size).to(dtype), torch.randn(b_size).to(dtype)
    real = torch.nn.functional.grouped_mm(a, b, offs=offs)
    fake = _fake_output(a, b, offs)
    assert (fake.shape, fake.stride(), fake.dtype) == (real.shape, real.stride(), real.dtype)
    assert fake.untyped_storage().nbytes() == real.untyped_storage().nbytes()


def test_the_last_dimension_is_padded_to_16_bytes() -> None:
    # experts' weights stored (out, in) and transposed, as transformers does: 35 float32
    # output columns (140 bytes) get a row stride of 36 (144 bytes), as from the real kernel
    a, b = torch.randn(M, K), torch.randn(GROUPS, 35, K).transpose(-2, -1)
    real = torch.nn.functional.grouped_mm(a, b, offs=OFFS)
    fake = _fake_output(a, b, OFFS)
    assert fake.stride() == real.stride() == (36, 1)
    assert fake.untyped_storage().nbytes() == real.untyped_storage().nbytes()


def test_bfloat16_is_left_to_the_meta_kernel() -> None:
    a, b = torch.zeros(M, K, dtype=torch.bfloat16), torch.zeros(GROUPS, K, N, dtype=torch.bfloat16)
    out = _fake_output(a, b, OFFS)
    assert (out.shape, out.dtype) == ((M, N), torch.bfloat16)


def test_the_gap_is_still_there() -> None:
    """PyTorch's meta kernel refuses float32 (on meta tensors, where the rule does not
    apply): when this fails, PyTorch has closed the gap and the rule can go."""
    a, b = torch.empty(M, K, device="meta"), torch.empty(GROUPS, K, N, device="meta")
    with pytest.raises(RuntimeError, match="BF16"):
        torch.nn.functional.grouped_mm(a, b, offs=OFFS.to("meta"))


needs_functional_collectives = pytest.mark.skipif(
    not hasattr(torch.ops._c10d_functional, "wait_tensor"),
    reason="this PyTorch has no functional collectives (torch.distributed)")


@needs_functional_collectives
def test_wait_tensor_returns_its_input_as_the_real_op_does() -> None:
    # The real op returns its input itself (c10d's Functional.cpp); so must the fake one,
    # else a gathered tensor is counted twice while both live.
    wait = torch.ops._c10d_functional.wait_tensor.default
    with fake_kernel_gaps.installed(), FakeTensorMode() as fake:
        gathered = fake.from_tensor(torch.zeros(4, 16, 500))
        waited = wait(gathered)
    assert waited is gathered


@needs_functional_collectives
def test_the_wait_tensor_gap_is_still_there() -> None:
    """PyTorch's meta kernel makes a new tensor: when this fails, the rule can go."""
    gathered = torch.empty(4, 16, 500, device="meta")
    waited = torch.ops._c10d_functional.wait_tensor(gathered)
    assert waited.untyped_storage() is not gathered.untyped_storage()


def test_the_rules_last_as_long_as_the_outermost_installed() -> None:
    rules = fake_kernel_gaps.fake_impls.op_implementations_dict
    ops = list(fake_kernel_gaps._rules())
    assert not any(op in rules for op in ops)  # PyTorch's own fake tensors have none
    with fake_kernel_gaps.installed():
        mine = {op: rules[op] for op in ops}
        with fake_kernel_gaps.installed():
            assert all(rules[op] is mine[op] for op in ops)
        assert all(rules[op] is mine[op] for op in ops)
    assert not any(op in rules for op in ops)
