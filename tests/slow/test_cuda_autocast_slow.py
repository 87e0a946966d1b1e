"""CUDA autocast's emulation against CUDA's own autocast kernels, over every sample input of
PyTorch's OpInfo database (torch.testing._internal), not only the unit tests' few cases.

A CPU-only PyTorch holds the AutocastCUDA kernels, and they run on fake CUDA tensors in forward.
Each sample runs on fake CUDA tensors under CUDA autocast and on fake CPU tensors under CPU
autocast with `CudaKernelPolicy`, in a subprocess (a C++ abort must not take pytest down); the
ops that reach the tensors, with their dtypes, must be the same. Left out: samples that CUDA's
kernels cannot run without a GPU, device moves of constants (a `_to_copy` to the same dtype),
the ops of LEFT_OUT, and the fft ops on 16-bit inputs, which the CPU cannot run in half
precision (cuda_autocast_table.CPU_KERNELS_KEPT_FOR_FFT)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

#: Left out: kernel choices made above autocast by CudaKernelPolicy (compared in the unit
#: tests), and batch norm, whose CUDA kernel keeps its per-channel statistics in fp32 for a
#: 16-bit input (a few bytes; not modelled).
LEFT_OUT = ("nn.functional.scaled_dot_product_attention",
            "nn.functional.multi_head_attention_forward", "nn.functional.dropout",
            "native_batch_norm", "_native_batch_norm_legit", "nn.functional.batch_norm")


LOWS = ("float16", "bfloat16")


@pytest.fixture(scope="module")
def reports() -> dict:
    """Both 16-bit dtypes scanned in one subprocess: op_db is imported, and each op's fp32
    samples built, once for the two."""
    # this checkout's `generator` first, whichever copy is installed
    path = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                         os.environ.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, __file__, *LOWS], capture_output=True, text=True,
                          timeout=1200, check=False, env={**os.environ, "PYTHONPATH": path})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("low", LOWS)
def test_every_opinfo_sample_runs_below_autocast_as_on_cuda(reports: dict, low: str) -> None:
    report = reports[low]
    assert report["compared"] > 1000
    assert report["mismatches"] == {}


def _scan(low_names: list[str]) -> dict:
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves, tree_map

    # common_utils imports expecttest for its TestCase base class, which we do not use
    sys.modules.setdefault("expecttest", types.SimpleNamespace(TestCase=object))
    from torch.testing._internal.common_methods_invocations import op_db

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, when run alone
    from autocast_state import forced_autocast

    from generator.measure.emulation.cuda_kernels import CudaKernelPolicy

    lows = [getattr(torch, name) for name in low_names]

    class Trace(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            ins, outs = dtypes((args, kwargs)), dtypes(out)
            moved = func in (torch.ops.aten._to_copy.default, torch.ops.aten.lift_fresh.default)
            if func is not torch.ops.prim.device.default and not (moved and ins == outs):
                self.calls.append(f"{func} {ins} -> {outs}")
            return out

    def dtypes(tree) -> list[str]:
        return [str(t.dtype) for t in tree_leaves(tree) if isinstance(t, torch.Tensor)]

    def run(op, sample, device: str, low) -> list[str] | None:
        emulation = CudaKernelPolicy() if device == "cpu" else contextlib.nullcontext()
        with FakeTensorMode(), emulation:
            def fake(value):
                if not isinstance(value, torch.Tensor):
                    return value
                return torch.empty_strided(value.shape, value.stride(), dtype=value.dtype,
                                           device=device)
            args = tree_map(fake, (sample.input, *sample.args))
            kwargs = tree_map(fake, sample.kwargs)
            with torch.no_grad(), forced_autocast(device, low), Trace() as trace:
                try:
                    op.op(*args, **kwargs)
                except Exception as error:  # noqa: BLE001 - compared, not hidden
                    return None if device == "cuda" else [f"error: {error}"[:200]]
        return trace.calls

    def samples_of(op, dtype) -> list:
        try:
            samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))[:3]
        except Exception:  # noqa: BLE001 - an op without samples for this dtype
            return []
        return [sample for sample in samples
                if not any(isinstance(t, torch.Tensor) and t.layout != torch.strided
                           for t in tree_leaves((sample.input, sample.args, sample.kwargs)))]

    mismatches: dict[str, dict[str, list[str]]] = {name: {} for name in low_names}
    compared = dict.fromkeys(low_names, 0)
    for op in op_db:
        if op.name in LEFT_OUT:
            continue
        fp32 = samples_of(op, torch.float32)  # the same under either 16-bit autocast
        for name, low in zip(low_names, lows, strict=True):
            for dtype in (torch.float32, low):
                if op.name.startswith("fft.") and dtype == low:
                    continue
                for sample in fp32 if dtype == torch.float32 else samples_of(op, dtype):
                    cuda = run(op, sample, "cuda", low)
                    if cuda is None:
                        continue  # CUDA's kernels need a GPU for this one
                    compared[name] += 1
                    cpu = run(op, sample, "cpu", low)
                    if cpu != cuda:
                        mismatches[name].setdefault(
                            op.name, [f"{dtype}: cuda {cuda[:6]} cpu {cpu[:6]}"])
    return {name: {"compared": compared[name], "mismatches": mismatches[name]}
            for name in low_names}


if __name__ == "__main__":
    print(json.dumps(_scan(sys.argv[1:])))
