"""What an estimate on fake CPU tensors models of a device: CUDA's kernels and autocast policy
(cuda_kernels.py, cuda_autocast.py) and the caching allocator's input (allocator_replay.py);
the CPU's kernels (oneDNN's LSTM workspace and convolution buffers, mixed-dtype copies:
onednn_lstm.py, onednn_conv_probes.py, cpu_promotion.py, put in place by cpu_kernels.py);
and what fake tensors refuse that real devices run, or allocate where real kernels do not
(fake_kernel_gaps.py, fake_build.py)."""

from typing import Any


def bound_arguments(func, args: tuple, kwargs: dict | None) -> dict[str, Any]:
    """The op's arguments by their schema names."""
    names = [a.name for a in func._schema.arguments]
    return {**dict(zip(names, args)), **(kwargs or {})}
