"""The cuda backend's bookkeeping, on a machine without a GPU: torch.cuda's statistics are
replaced by a script of known values and the step runs on the CPU, so what is checked is
which statistic lands in which field (what building left, the five untracked steps'
peaks, the tracked step's), not a GPU's numbers (tests/slow/test_cuda.py, on a GPU)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

from generator.experiment import Experiment
from generator.measure.backends import cuda as cuda_backend
from generator.measure.models import resolve_model
from generator.measure.tracking.tracker import MemoryTracker
from generator.measure.training.step import Trainer


class ScriptedCuda:
    """torch.cuda's statistics as a script: what is allocated and reserved after building,
    then each peak by phase (reset_peak_memory_stats starts the next phase)."""

    OutOfMemoryError = torch.cuda.OutOfMemoryError

    def __init__(self) -> None:
        self.phase = 0
        # phase 1: the five untracked steps (the warm-up and four timed); phase 2: the
        # tracked step
        self.allocated_peaks = {1: [1000], 2: [900]}
        self.reserved_peaks = {1: [2200], 2: [2100]}

    def reset_peak_memory_stats(self) -> None:
        self.phase += 1

    def max_memory_allocated(self) -> int:
        return self.allocated_peaks[self.phase].pop(0)

    def max_memory_reserved(self) -> int:
        return self.reserved_peaks[self.phase].pop(0)

    def memory_allocated(self) -> int:
        return 100

    def memory_reserved(self) -> int:
        return 200 if self.phase == 0 else 2100

    def init(self) -> None: ...

    def synchronize(self) -> None: ...

    def memory_stats(self) -> dict:
        return {}

    def mem_get_info(self) -> tuple[int, int]:
        return 10_000, 13_000

    def get_device_properties(self, device) -> SimpleNamespace:
        return SimpleNamespace(name="Scripted GPU", total_memory=13_000)


class TorchOnTheCpu:
    """torch, but `torch.device(...)` is the CPU and torch.cuda is the script."""

    def __init__(self, cuda: ScriptedCuda) -> None:
        self.cuda = cuda

    def device(self, *args, **kwargs) -> torch.device:
        return torch.device("cpu")

    def __getattr__(self, name: str):
        return getattr(torch, name)


def test_each_statistic_lands_in_its_field(monkeypatch) -> None:
    cuda = ScriptedCuda()
    monkeypatch.setattr(cuda_backend, "torch", TorchOnTheCpu(cuda))
    steps: list[tuple[int, bool]] = []  # (phase, tracked) of each step, in order
    step = Trainer.step
    monkeypatch.setattr(Trainer, "step", lambda self, *a, **k: (steps.append((cuda.phase, any(
        isinstance(mode, MemoryTracker) for mode in _get_current_dispatch_mode_stack()))),
        step(self, *a, **k))[1])
    exp = Experiment(model="tiny", batch_size=2, seq_len=16, backend="cuda")
    result = cuda_backend.run(exp, resolve_model("tiny"))
    truth = result["ground_truth"]
    assert truth["before_steps"] == {"allocated_bytes": 100, "reserved_bytes": 200}
    # the five steps a user sees run untracked (a tracked step allocates more); the tracked
    # step that labels the memory comes after them, with peaks of its own
    assert steps == [(1, False)] * (result["warmup_steps"] + cuda_backend.UNTRACKED_STEPS) \
        + [(2, True)]
    assert result["warmup_steps"] + cuda_backend.UNTRACKED_STEPS == 5
    assert (truth["steps_peak_bytes"], truth["steps_max_reserved_bytes"]) == (1000, 2200)
    assert (truth["peak_bytes"], truth["max_reserved_bytes"]) == (900, 2100)
    assert truth["allocator_overhead_bytes"] == 1200
    assert truth["context_bytes"] == 13_000 - 10_000 - 2100


def test_the_model_is_built_where_and_in_the_dtype_the_option_says(monkeypatch) -> None:
    """built_on_device: built under the device, in its training dtype from the start (no
    fp32 weights to free); by default built elsewhere, cast, then moved."""
    spec = resolve_model("tiny")
    built_in: list[torch.dtype] = []

    def build(**kwargs):
        built_in.append(torch.get_default_dtype())
        return spec.build(**kwargs)

    moves: list[str] = []
    to = torch.nn.Module.to
    monkeypatch.setattr(torch.nn.Module, "to", lambda self, *a, **k: (
        moves.append(str(a[0] if a else k)), to(self, *a, **k))[1])
    for on_device in (False, True):
        monkeypatch.setattr(cuda_backend, "torch", TorchOnTheCpu(ScriptedCuda()))
        exp = Experiment(model="tiny", batch_size=2, seq_len=16, backend="cuda",
                         precision="fp16", built_on_device=on_device)
        result = cuda_backend.run(exp, dataclasses.replace(spec, build=build))
        assert result["ground_truth"]["peak_bytes"] == 900
    assert built_in == [torch.float32, torch.float16]
    assert torch.get_default_dtype() == torch.float32
    assert moves == ["cpu"]  # the moved model only, to the (scripted) device
