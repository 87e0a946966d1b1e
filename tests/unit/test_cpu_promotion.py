"""The copies the CPU's elementwise kernels make of mixed-dtype inputs (cpu_promotion.py),
held op by op against the CPU allocator: each op runs for real under the profiler, and the
blocks it allocated and freed before returning must be exactly the ones the rule names."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from torch.profiler import ProfilerActivity, profile, record_function
from torch.utils._python_dispatch import TorchDispatchMode

from generator.measure.emulation.cpu_promotion import promotion_buffers
from generator.measure.tracking.cpu_allocator_blocks import allocator_blocks

aten = torch.ops.aten
BF16 = torch.randn(64, 100).bfloat16()
FP32, FP16 = torch.randn(64, 100), torch.randn(64, 100).half()
MASK, LONG = torch.rand(64, 100) > 0.5, torch.randint(1, 5, (64, 100))
ROW = torch.randn(100)  # broadcast against the others
ZERO_DIM = torch.tensor(2.0)

CASES: dict[str, Callable[[], object]] = {
    "bf16 + fp32": lambda: BF16 + FP32,
    "fp32 - bf16": lambda: FP32 - BF16,
    "bf16 * fp32 row": lambda: BF16 * ROW,
    "fp16 / bf16 (both to fp32)": lambda: FP16 / BF16,
    "bool * fp32": lambda: MASK * FP32,
    "long + fp32": lambda: LONG + FP32,
    "bf16 * 0-dim fp32 (bf16 wins)": lambda: BF16 * ZERO_DIM,
    "maximum": lambda: torch.maximum(BF16, FP32),
    "eq": lambda: torch.eq(BF16, FP32),
    "lt": lambda: BF16 < FP32,
    "where (its condition stays bool)": lambda: torch.where(MASK, BF16, FP32),
    "addcmul": lambda: torch.addcmul(FP32, BF16, FP32),
    "pow": lambda: torch.pow(BF16, FP32),
    "logical_and": lambda: torch.logical_and(BF16, FP32),
    "bitwise_and": lambda: torch.bitwise_and(LONG, MASK),
    "sigmoid_backward": lambda: aten.sigmoid_backward(BF16, FP32),
    "tanh_backward": lambda: aten.tanh_backward(BF16, FP32),
    "threshold_backward": lambda: aten.threshold_backward(BF16, FP32, 0.0),
    "silu_backward": lambda: aten.silu_backward(BF16, FP32),
    "masked_fill (its mask is not cast)": lambda: FP32.masked_fill(MASK, 0.0),
    "same dtypes": lambda: FP32 + FP32,
}
IN_PLACE: dict[str, Callable[[], tuple[torch.Tensor, Callable]]] = {
    # a bf16 output of an fp32 computation: its input copy and a temporary fp32 output
    "bf16.add_(fp32)": lambda: (BF16.clone(), lambda x: x.add_(FP32)),
    "fp32.mul_(bf16)": lambda: (FP32.clone(), lambda x: x.mul_(BF16)),
    "out=bf16": lambda: (torch.empty_like(BF16), lambda out: torch.add(FP32, FP32, out=out)),
}


class _Predicted(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.sizes += promotion_buffers(func, args, kwargs)
        return func(*args, **(kwargs or {}))


def _freed_inside(run: Callable[[], object]) -> list[int]:
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof, \
            record_function("op"):
        out = run()
    blocks, _ = allocator_blocks(prof, "op")
    del out
    return sorted(b.nbytes for b in blocks if b.freed is not None)


def _predicted(run: Callable[[], object]) -> list[int]:
    with _Predicted() as mode:
        run()
    return sorted(mode.sizes)


@pytest.mark.parametrize("name", CASES)
def test_the_rule_names_the_copies_the_kernel_makes(name: str) -> None:
    assert _predicted(CASES[name]) == _freed_inside(CASES[name])


@pytest.mark.parametrize("name", IN_PLACE)
def test_outputs_of_another_dtype_get_a_temporary(name: str) -> None:
    target, run = IN_PLACE[name]()
    predicted = _predicted(lambda: run(target.clone()))
    fresh = target.clone()
    assert predicted == _freed_inside(lambda: run(fresh))


def test_a_mixed_op_costs_its_copies() -> None:
    assert _predicted(CASES["bf16 + fp32"]) == [64 * 100 * 4]  # the bf16 input, as fp32
    assert _predicted(CASES["fp16 / bf16 (both to fp32)"]) == [64 * 100 * 4] * 2
    assert _predicted(CASES["same dtypes"]) == []
