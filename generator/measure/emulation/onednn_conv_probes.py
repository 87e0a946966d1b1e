"""What oneDNN's convolution and half-precision matmul kernels take from the CPU allocator
inside themselves, measured.

On the CPU, `aten.convolution` and `aten.convolution_backward` run oneDNN (through ideep),
which takes buffers from PyTorch's CPU allocator that never become tensors: the input, the
weights and the output reordered to and from oneDNN's blocked layouts, and the primitive's
scratchpad (ideep books one per call, `scratchpad_mode::user`). They live only while the
kernel runs, and fake tensors, which run a meta kernel, see none of them. Where a training
step peaks inside a convolution's backward, they are its peak's missing part: convnet-small's
estimate of the CPU in bf16 came out 2.7 % under the real run's. A matrix product in bf16 or
fp16 runs oneDNN's matmul, which packs its operands into buffers of its own once its output
is allocated (MATMULS): a GPT-2 trained by Hugging Face's Trainer wholly in bf16 with
checkpointing peaks inside one, and its simulation of the CPU came out 2.5 % short.

Unlike the LSTM's workspace (onednn_lstm.py), these sizes follow no rule one could
cite: oneDNN picks an implementation (jit, brgemm, reference) by the CPU's instruction set,
its cache sizes and the thread count, and the scratchpad of brgemm's backward by weights
keeps per-thread reduction buffers. So an estimate of the CPU measures them on the machine
that runs it: each distinct call (op, shapes, strides, dtypes and other arguments) runs once
for real, on zero-filled tensors, under the profiler; the most the allocator held inside the
call beyond what the call returns is what the estimate holds as temporaries while the op runs
(modelled_kernels.KernelBufferTracker). An estimate that models CUDA never probes.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, Iterator

import torch
from torch._subclasses.fake_tensor import unset_fake_temporarily
from torch.profiler import ProfilerActivity, profile, record_function
from torch.utils._python_dispatch import _disable_current_modes
from torch.utils._pytree import tree_map

from generator.measure.tracking.cpu_allocator_blocks import allocator_blocks, peak_bytes

aten = torch.ops.aten
#: The ops probed: the CPU kernels behind nn.Conv1d/2d/3d and their backward.
PROBED = (aten.convolution.default, aten.convolution_backward.default)
#: The matrix products probed where an input is in half precision (bf16, fp16): the CPU runs
#: them on oneDNN's matmul (aten/src/ATen/native/mkldnn/Matmul.cpp), whose packed
#: operands and scratchpad the allocator hands out inside the call: 18,048 bytes for a 64 × 64
#: product in bf16, 2.1 MB for a 512 × 1024 by 1024 × 1024 one on two threads. In float32
#: the same products took nothing from the allocator (an addmm: a row of its output's
#: size, measured): not probed.
MATMULS = (aten.mm.default, aten.addmm.default, aten.bmm.default, aten.baddbmm.default)
HALF = (torch.bfloat16, torch.float16)
#: One measurement per distinct call for the whole process: the kernel's buffers depend on
#: nothing else (not on the values, which oneDNN's convolutions never branch on).
_measured: dict[tuple, int] = {}
#: The profiler range each probed call runs in.
PROBE = "generator::kernel_probe"


def hidden_bytes(func, args: tuple, kwargs: dict | None) -> int:
    """Bytes the real CPU kernel of `func` holds inside the call beyond its outputs, at the
    call's own peak; 0 for ops not probed."""
    if not probed(func, args):
        return 0
    key = (func, _signature(args), _signature(kwargs or {}))
    if key not in _measured:
        with _disable_current_modes(), unset_fake_temporarily():
            real_args, real_kwargs = tree_map(_zeros_like, (args, kwargs or {}))
            _measured[key] = peak_beyond_outputs(lambda: func(*real_args, **real_kwargs))
    return _measured[key]


def probed(func, args: tuple) -> bool:
    """Whether the call is one whose kernel's buffers are measured: a convolution, or a
    matrix product of half-precision inputs."""
    if func in PROBED:
        return True
    return func in MATMULS and any(isinstance(a, torch.Tensor) and a.dtype in HALF
                                   for a in args)


def _signature(value: Any) -> Any:
    """What the kernel's buffers can depend on: every tensor's shape, strides and dtype, and
    every other argument as it is."""
    def one(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            return ("tensor", tuple(x.shape), tuple(x.stride()), x.dtype)
        return x
    flat = tree_map(one, value)
    return repr(flat)


def _zeros_like(x: Any) -> Any:
    """A real CPU tensor laid out as `x` (a fake one), filled with zeros."""
    if not isinstance(x, torch.Tensor):
        return x
    return torch.empty_strided(tuple(x.shape), tuple(x.stride()), dtype=x.dtype).zero_()


def peak_beyond_outputs(call: Callable[[], Any]) -> int:
    """Run `call` under the profiler: the CPU allocator's highest total of the blocks the
    call allocated, less those still held when it returns (its outputs); never negative.
    The profile is read as the cpu backend reads a step's (cpu_allocator_blocks.py)."""
    with _quiet_stderr(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        with record_function(PROBE):
            outputs = call()
    del outputs
    blocks, window = allocator_blocks(prof, PROBE)
    held = sum(block.nbytes for block in blocks if block.freed is None)
    return max(0, peak_bytes(blocks, window) - held)


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Kineto prints a line to stderr as each profile starts and stops; a probe is no news."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
