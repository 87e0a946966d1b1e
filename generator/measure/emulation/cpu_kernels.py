"""Show an estimate on fake tensors the memory of the CPU's fused LSTM kernel, of its
oneDNN convolutions, of the copies its elementwise kernels make of mixed-dtype inputs, and of
the flat copies gloo's collectives make (GLOO_COPIES; a rank of a sharded step).

onednn_lstm.py gives the LSTM's bytes, onednn_conv_probes.py measures the convolutions',
cpu_promotion.py names the copies; this module puts them where the estimate counts:

- `ModelledKernelsMode`, a TorchDispatchMode below the tracker, gives the fake
  `aten::mkldnn_rnn_layer` the workspace the real kernel returns in place of the meta
  kernel's empty one. Autograd saves it for backward, so the tracker labels it an activation,
  as on a real run. It also counts the LSTM and probed convolution calls, for the notes.
- `KernelBufferTracker`, the tracker an estimate uses while that mode is on
  (`tracker_class`), holds the buffers the real kernel allocates inside itself (forward and
  backward) as temporaries, from just before the op's outputs until just after them, as
  they are live on a real run.

Enter `modelled_kernels(exp.device)` around an estimate's FakeTensorMode, inside it. It models
the CPU only: on CUDA, `nn.LSTM` runs cuDNN's `_cudnn_rnn`, whose reserve space (saved for
backward like oneDNN's workspace) is sized by cuDNN itself (`cudnnGetRNNTempSpaceSizes`,
called in aten/src/ATen/native/cudnn/RNN.cpp): closed source, with no size rule to cite, so a
CUDA estimate of an LSTM leaves it out, and says so (`unmodelled`). GRU and plain RNN layers
run cuDNN on CUDA too; their estimate counts the tensors the CPU's step-by-step path saves.
"""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path
from typing import Iterator

import torch
from torch.utils._python_dispatch import (
    TorchDispatchMode,
    _get_current_dispatch_mode_stack,
)

from generator.measure.emulation import bound_arguments, onednn_conv_probes
from generator.measure.emulation.cpu_promotion import promotion_buffers
from generator.measure.emulation.onednn_lstm import LSTMLayer
from generator.measure.tracking.tracker import MemoryTracker
from generator.results.notes import note

aten = torch.ops.aten
FORWARD, BACKWARD = aten.mkldnn_rnn_layer.default, aten.mkldnn_rnn_layer_backward.default
#: The ops whose hidden memory is modelled.
MODELLED = (FORWARD, BACKWARD)


@functools.lru_cache(maxsize=1)
def cpu_has_bf16_brgemm() -> bool:
    """Whether this CPU runs oneDNN's bf16 RNN on brgemm kernels (AVX512-BF16 or AMX-BF16,
    ref_rnn.cpp init_brgemm); read from Linux's /proc/cpuinfo, False elsewhere."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").split()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def lstm_layer(func, args: tuple, kwargs: dict | None) -> LSTMLayer:
    """The shape of one mkldnn_rnn_layer (or its backward) call. The input is time-major
    whatever `batch_first` says: ATen's mkldnn_rnn transposes it first (RNN.cpp RNNParams
    reads seq_length = input.size(0))."""
    a = bound_arguments(func, args, kwargs)
    x, cx = a["input"], a["cx_" if func is FORWARD else "cx_tmp"]
    elem = x.element_size()
    return LSTMLayer(seq_len=x.shape[0], batch=x.shape[1], input_size=x.shape[2],
                     hidden=a["hidden_size"], elem=elem, state_c_elem=cx.element_size(),
                     brgemm=x.dtype == torch.bfloat16 and cpu_has_bf16_brgemm())


def kernel_buffers(func, args: tuple, kwargs: dict | None) -> list[int]:
    """Bytes the real kernel of `func` allocates inside itself and frees before returning;
    [] for every op but the modelled ones (the LSTM's, by rule; elementwise ops' copies of
    mixed-dtype inputs, by TensorIterator's rule: cpu_promotion.py) and the probed ones
    (oneDNN's convolutions, measured: onednn_conv_probes.py)."""
    promoted = promotion_buffers(func, args, kwargs)
    if promoted:
        return promoted
    if func in GLOO_COPIES:
        return [args[GLOO_COPIES[func]].untyped_storage().nbytes()]
    if onednn_conv_probes.probed(func, args):
        hidden = onednn_conv_probes.hidden_bytes(func, args, kwargs)
        return [hidden] if hidden else []
    if func not in MODELLED:
        return []
    layer = lstm_layer(func, args, kwargs)
    if func is FORWARD:
        return layer.forward_buffers() if torch.is_grad_enabled() else []
    a = bound_arguments(func, args, kwargs)
    grad = a.get("grad_output")
    hx, cx = a["hx_"], a["cx_tmp"]
    return layer.backward_buffers(
        grad_output="none" if grad is None else
        "contiguous" if grad.is_contiguous() else "strided",
        grad_hy=a.get("grad_hy") is not None, grad_cy=a.get("grad_cy") is not None,
        shared_states=hx.untyped_storage()._cdata == cx.untyped_storage()._cdata)


#: The collectives of a sharded step (FSDP2's) that gloo, the CPU's process group
#: (ProcessGroupGloo.cpp), runs through a flat buffer of its own, which the fake process group
#: of an estimate does not: op → the argument whose size it has. Seen in the profiler's memory
#: events of two gloo processes (PyTorch 2.13): `reduce_scatter_tensor` clones its input and
#: all-reduces the clone (an input-sized block, freed once the exchange is done);
#: `all_gather_into_tensor` gathers into an output-sized block and copies it out (one at a
#: time: the call makes one and frees it, gloo's worker another). all_reduce works in place.
c10d = torch.ops.c10d
GLOO_COPIES = {c10d._reduce_scatter_base_.default: 1, c10d._allgather_base_.default: 0}


#: What an estimate modelling CUDA leaves out of a model with recurrent layers. The CLI
#: prints the notes whose identifier begins "not_modelled".
CUDNN_RESERVE_NOTE = note("not_modelled_cudnn_reserve")


def unmodelled(model: torch.nn.Module, device: str) -> list[dict]:
    """Notes on memory an estimate of `device` knows it leaves out of `model`."""
    if device == "cuda" and any(isinstance(m, torch.nn.RNNBase) for m in model.modules()):
        return [CUDNN_RESERVE_NOTE]
    return []


class ModelledKernelsMode(TorchDispatchMode):
    """Replaces the empty workspace of a fake `mkldnn_rnn_layer` (the meta kernel's
    `torch.empty(0, dtype=torch.uint8)`) with one of the real kernel's size: in an estimate
    of the CPU (`modelled`), the only one modelled_kernels enters it in. The real kernel
    makes it only when grad mode is on (training); so does this. Counts the calls, for the
    estimate's notes."""

    def __init__(self, device: str) -> None:
        super().__init__()
        self.device, self.modelled, self.lstm_calls = device, device == "cpu", 0
        self.convolutions = 0
        self.promoted = False  # whether an elementwise op copied a mixed-dtype input

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.convolutions += func in onednn_conv_probes.PROBED
        # one is enough for the note: the tracker sizes every copy (kernel_buffers)
        if self.modelled and not self.promoted:
            self.promoted = bool(promotion_buffers(func, args, kwargs))
        if func is FORWARD:
            self.lstm_calls += 1
            if self.modelled and torch.is_grad_enabled() and out[3].numel() == 0:
                size = lstm_layer(func, args, kwargs).workspace_bytes()
                # This mode is off the stack while it handles an op, so the modes below it
                # (fake mode) make the tensor: a fake one, allocating nothing.
                out = (*out[:3], torch.empty(size, dtype=torch.uint8, device=out[3].device))
        return out

    def notes(self) -> list[dict]:
        """What the estimate says about the kernels it modelled, if the step ran them."""
        found = []
        if self.modelled and self.convolutions:
            found.append(note("onednn_convolutions"))
        if self.promoted:
            found.append(note("cpu_promotion"))
        if self.lstm_calls:
            found.append(note("onednn_lstm"))
        return found


class KernelBufferTracker(MemoryTracker):
    """A MemoryTracker that also counts, as temporaries, the buffers a modelled kernel holds
    while it runs (`kernel_buffers`): born before the op's outputs, dead right after them."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        sizes = kernel_buffers(func, args, kwargs)
        if not sizes:
            return super().__torch_dispatch__(func, types, args, kwargs)
        device = next(t.device for t in args if isinstance(t, torch.Tensor))
        held = [torch.empty(n, dtype=torch.uint8, device=device) for n in sizes]
        for index in range(len(held)):  # no loop variable left holding the last one
            self.label(held[index], "temporaries")
        try:
            return super().__torch_dispatch__(func, types, args, kwargs)
        finally:
            held.clear()  # their storages die now: the tracker's weak references see it


def tracker_class() -> type[MemoryTracker]:
    """The tracker a step should use now: KernelBufferTracker inside `modelled_kernels("cpu")`
    (a modelling ModelledKernelsMode on the dispatch mode stack), else the plain MemoryTracker."""
    modelled = any(isinstance(m, ModelledKernelsMode) and m.modelled
                   for m in _get_current_dispatch_mode_stack())
    return KernelBufferTracker if modelled else MemoryTracker


@contextlib.contextmanager
def modelled_kernels(device: str) -> Iterator[ModelledKernelsMode]:
    """Model the fused LSTM kernel's memory in an estimate of `device` ("cpu" only; CUDA's
    is left out, see the module's docstring). Enter inside FakeTensorMode, before the
    tracker: `with FakeTensorMode(), modelled_kernels(exp.device) as kernels: ...`; then
    `kernels.notes()` says what was modelled. For CUDA nothing is entered: the estimate
    runs exactly as without it."""
    mode = ModelledKernelsMode(device)
    with mode if mode.modelled else contextlib.nullcontext():
        yield mode
