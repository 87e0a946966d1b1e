"""The user's own training step, tracked: `generator.track(model, optimizer)`.

Around code this tool did not write (the user's loop, loss and device), the same tracker
the backends use labels every storage (tracking/tracker.py). What the tool's own step marks
by hand, hooks mark here: the forward phase begins as the model is called, the backward one
as the first gradient reaches the model's output, the optimizer's as its `step` begins. On a
CUDA GPU the caching allocator's own peaks stand beside the tracker's, as the `cuda` backend
records them. The result has the shape of every other step result, so `save` puts it where
`python -m generator render` finds it.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from torch import nn

from generator.errors import ConfigError
from generator.experiment import Experiment
from generator.files import RESULTS_DIR
from generator.measure.run import step_result
from generator.measure.tracking.tracker import CUDA_BLOCK_BYTES, MemoryTracker
from generator.measure.training.step import gc_paused
from generator.results import result_path, save
from generator.results.notes import note
from generator.results.api_types import Measurement

#: Optimizer classes by the names results give them; any other goes by its class name.
_KNOWN_OPTIMIZERS = {"AdamW": "adamw", "Adam": "adam", "SGD": "sgd", "AdamW8bit": "adamw-8bit"}


class Tracking:
    """`with Tracking(model, optimizer) as tracked: <the user's step>`; then `measurement`."""

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, *,
                 name: str | None, batch_size: int, seq_len: int, precision: str) -> None:
        if not isinstance(model, nn.Module) or not isinstance(optimizer, torch.optim.Optimizer):
            raise ConfigError("track(model, optimizer) takes a torch.nn.Module and the "
                              "torch.optim.Optimizer that trains it")
        self.model, self.optimizer = model, optimizer
        device = next(iter(model.parameters()), torch.empty(0)).device
        if device.type not in ("cpu", "cuda"):
            raise ConfigError(f"track() measures steps on the CPU or a CUDA GPU; the model's "
                              f"parameters are on {device.type}")
        self.device = device
        kind = type(optimizer).__name__
        self.experiment = Experiment(
            model=name or type(model).__name__, batch_size=batch_size, seq_len=seq_len,
            precision=precision, optimizer=_KNOWN_OPTIMIZERS.get(kind, kind.lower()),
            backend=device.type, tracked=True)
        self.result: dict[str, Any] | None = None
        self.measurement: Measurement | None = None
        self._stack = contextlib.ExitStack()
        self._tracker: MemoryTracker | None = None

    def __enter__(self) -> "Tracking":
        cuda = self.device.type == "cuda"
        if cuda:
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
        tracker = MemoryTracker(self.model, self.optimizer,
                                round_bytes=CUDA_BLOCK_BYTES if cuda else 1,
                                device_type=self.device.type)
        self._tracker = tracker
        with self._stack:  # hooks and trackers, undone at once if anything fails
            self._stack.enter_context(gc_paused())
            self._stack.callback(self.model.register_forward_pre_hook(self._forward).remove)
            self._stack.callback(self.model.register_forward_hook(self._output).remove)
            self._stack.callback(
                self.optimizer.register_step_pre_hook(self._optimizer).remove)
            self._stack.enter_context(tracker)
            self._stack = self._stack.pop_all()
        return self

    def __exit__(self, kind, error, trace) -> None:
        self._stack.close()
        if kind is None:
            self.result = self._result()
            self.measurement = Measurement.from_dict(self.result)

    def save(self, results_dir: str | Path = RESULTS_DIR) -> Path:
        """Write the result where `python -m generator render` reads results; its path."""
        if self.result is None:
            raise ConfigError("nothing tracked yet: save() after the `with` block")
        path = result_path(Path(results_dir), self.result["environment"]["machine_id"],
                           self.result["key"])
        save(path, self.result)
        return path

    # -- phases ----------------------------------------------------------------------------
    def _mark(self, phase: str) -> None:
        phases = self._tracker.phases()
        if not phases or phases[-1][0] != phase:
            self._tracker.mark_phase(phase)

    def _forward(self, *_) -> None:
        self._mark("forward")

    def _output(self, module, inputs, output) -> None:
        """The first gradient to reach the model's output begins its backward."""
        for tensor in _tensors(output):
            if tensor.requires_grad:
                tensor.register_hook(self._backward)

    def _backward(self, grad: torch.Tensor) -> None:
        self._mark("backward")

    def _optimizer(self, *_) -> None:
        self._mark("optimizer")

    # -- the result ------------------------------------------------------------------------
    def _result(self) -> dict[str, Any]:
        report = self._tracker.report()
        data = asdict(report)
        data["tracked_storages"] = data.pop("storages")
        params = list(self.model.parameters())
        truth = None
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            allocated = torch.cuda.max_memory_allocated(self.device)
            reserved = torch.cuda.max_memory_reserved(self.device)
            truth = {"source": "torch.cuda caching allocator statistics",
                     "peak_bytes": allocated, "max_reserved_bytes": reserved,
                     "allocator_overhead_bytes": reserved - allocated}
        return step_result(self.experiment, {
            **data,
            "parameter_count": sum(p.numel() for p in params),
            "trainable_parameter_count": sum(p.numel() for p in params if p.requires_grad),
            "warmup_steps": 0, "attention": None, "architecture": None, "inputs": "tokens",
            "step_seconds": None, "ground_truth": truth, "allocator": None,
            "notes": [note("tracked")],
        })


def _tensors(output: Any) -> list[torch.Tensor]:
    """The tensors of a model's output: a tensor, a tuple or list, a dict or a ModelOutput."""
    if isinstance(output, torch.Tensor):
        return [output]
    if isinstance(output, dict):
        output = list(output.values())
    if isinstance(output, (list, tuple)):
        return [t for item in output for t in _tensors(item)]
    return []
