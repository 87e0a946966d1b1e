"""Label every tensor storage of one training step and record when it lives.

A `TorchDispatchMode` sees each tensor an aten op creates; a weak reference to the tensor's
storage tells when the memory is given back. Labels come from what the step does with a
storage: the model's parameters, the optimizer's state, `.grad` (post-accumulate-grad hook),
tensors autograd saves for backward (saved-tensor pack hook), and autocast's low-precision
copies of parameters (`_to_copy` of a parameter into fp16/bf16). Everything else is a
temporary. Labels are applied to a storage's whole life, after the step, so a gradient is a
gradient from the moment backward creates it. PyTorch's own
`torch.distributed._tools.mem_tracker.MemTracker` uses the same technique.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from dataclasses import dataclass, field

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from generator.measure.timeline import StorageLife, TrackerReport, summarise

OUTSIDE_MODULES = "(outside modules)"
_LOW_PRECISION = (torch.float16, torch.bfloat16)
#: A later label wins over an earlier one only if it ranks higher: a parameter saved for
#: backward stays a parameter; a temporary that autograd saves becomes an activation.
_RANK = {"temporaries": 0, "activations": 1, "autocast_copies": 2, "gradients": 3,
         "optimizer_state": 4, "parameters": 5}


def top_level_blocks(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """The model's children, with module lists expanded: embeddings, layers.0, …, head."""
    blocks = []
    for name, child in model.named_children():
        if isinstance(child, (nn.ModuleList, nn.Sequential)):
            blocks.extend((f"{name}.{i}", sub) for i, sub in enumerate(child))
        else:
            blocks.append((name, child))
    return blocks


@dataclass
class _Live:
    life: StorageLife
    ref: weakref.ref = field(repr=False)


class MemoryTracker(TorchDispatchMode):
    """Use as `with MemoryTracker(model, optimizer) as tracker: step(tracker.mark_phase)`,
    then `tracker.report()`."""

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, *,
                 round_bytes: int = 1, device_type: str | None = None) -> None:
        """round_bytes: the allocator's block granularity (512 on CUDA, 1 on CPU).
        device_type: count only storages on this device type (None: all)."""
        super().__init__()
        self.model, self.optimizer = model, optimizer
        self.round_bytes, self.device_type = round_bytes, device_type
        self._clock = itertools.count(1)
        self._lock = threading.RLock()  # a free can fire inside a locked section (GC)
        self._live: dict[int, _Live] = {}
        self._lives: list[StorageLife] = []
        self._phases: list[tuple[str, int]] = []
        self._module_stack: list[str] = []
        self._handles: list = []
        self._saved_hooks = torch.autograd.graph.saved_tensors_hooks(self._on_saved, _identity)
        self._end = 0

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> "MemoryTracker":
        for tensor in itertools.chain(self.model.parameters(), self.model.buffers()):
            self._see(tensor, "parameters", born=0)
        for param in self.model.parameters():  # kept from the last step by set_to_none=False
            if param.grad is not None:
                self._see(param.grad, "gradients", born=0)
        self._label_optimizer_state(born=0)
        for param in self.model.parameters():
            if param.requires_grad:
                self._handles.append(param.register_post_accumulate_grad_hook(self._on_grad))
        self._handles.append(self.optimizer.register_step_post_hook(
            lambda *_: self._label_optimizer_state()))
        for name, block in top_level_blocks(self.model):
            self._handles.append(block.register_forward_pre_hook(self._entering(name)))
            self._handles.append(block.register_forward_hook(self._leaving))
        self._saved_hooks.__enter__()
        return super().__enter__()

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        self._saved_hooks.__exit__(*exc)
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self._end = next(self._clock)

    def mark_phase(self, name: str) -> None:
        """Note that the step enters phase `name` (forward, backward, optimizer)."""
        self._phases.append((name, next(self._clock)))

    def report(self) -> TrackerReport:
        """The peak, its breakdown, each category's maximum and the timeline of the step."""
        with self._lock:
            lives = list(self._lives)
        return summarise(lives, self._phases, end=self._end or next(self._clock))

    # -- what the step does ----------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        category = "temporaries"
        if func is torch.ops.aten._to_copy.default and self._is_parameter(args[0]):
            if isinstance(out, torch.Tensor) and out.dtype in _LOW_PRECISION:
                category = "autocast_copies"
        for tensor in tree_flatten(out)[0]:
            if isinstance(tensor, torch.Tensor):
                self._see(tensor, category)
        return out

    def _entering(self, name: str):
        def hook(*_) -> None:
            self._module_stack.append(name)
        return hook

    def _leaving(self, *_) -> None:  # must return None: a forward hook's value replaces the output
        self._module_stack.pop()

    def _on_saved(self, tensor: torch.Tensor) -> torch.Tensor:
        module = self._module_stack[-1] if self._module_stack else OUTSIDE_MODULES
        self._see(tensor, "activations", module=module)
        return tensor

    def _on_grad(self, param: torch.Tensor) -> None:
        if param.grad is not None:
            self._see(param.grad, "gradients")

    def _label_optimizer_state(self, born: int | None = None) -> None:
        for state in self.optimizer.state.values():
            for value in state.values():
                if isinstance(value, torch.Tensor):
                    self._see(value, "optimizer_state", born=born)

    # -- bookkeeping -----------------------------------------------------------------------
    def _is_parameter(self, tensor) -> bool:
        entry = self._entry(tensor)
        return entry is not None and entry.life.category == "parameters"

    def _entry(self, tensor) -> _Live | None:
        storage = _storage(tensor)
        return None if storage is None else self._live.get(id(storage))

    def _see(self, tensor: torch.Tensor, category: str, *, born: int | None = None,
             module: str | None = None) -> None:
        storage = _storage(tensor)
        if storage is None or storage.nbytes() == 0:
            return
        if self.device_type is not None and storage.device.type != self.device_type:
            return
        with self._lock:
            entry = self._live.get(id(storage))
            if entry is not None:
                life = entry.life
                if _RANK[category] > _RANK[life.category]:
                    life.category = category
                    if category == "activations":
                        life.module = module
                return
            nbytes = -(-storage.nbytes() // self.round_bytes) * self.round_bytes
            life = StorageLife(nbytes=nbytes, category=category,
                               born=next(self._clock) if born is None else born, module=module)
            key = id(storage)
            ref = weakref.ref(storage, lambda _ref, key=key, life=life: self._on_free(key, life))
            self._live[key] = _Live(life, ref)
            self._lives.append(life)

    def _on_free(self, key: int, life: StorageLife) -> None:
        with self._lock:
            life.died = next(self._clock)
            current = self._live.get(key)
            if current is not None and current.life is life:
                del self._live[key]


def _identity(tensor):
    return tensor


def _storage(tensor) -> torch.UntypedStorage | None:
    if not isinstance(tensor, torch.Tensor) or tensor.layout != torch.strided:
        return None
    try:
        return tensor.untyped_storage()
    except (RuntimeError, NotImplementedError):  # e.g. tensors without storage
        return None
