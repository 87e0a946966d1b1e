"""fake_kernel_gaps: where a meta kernel refuses what the real kernels run, the estimate
makes the output the real kernel would, checked here against the real CPU kernel."""

from __future__ import annotations

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from generator.measure.fake_kernel_gaps import FakeKernelGaps

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
    with FakeTensorMode() as fake, FakeKernelGaps():
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
    """When PyTorch's meta kernel takes float32 itself, FakeKernelGaps can go."""
    with FakeTensorMode() as fake:
        a = fake.from_tensor(torch.zeros(M, K))
        b = fake.from_tensor(torch.zeros(GROUPS, K, N))
        with pytest.raises(RuntimeError, match="BF16"):
            torch.nn.functional.grouped_mm(a, b, offs=fake.from_tensor(OFFS))
