"""Label every tensor storage of one training step and record when it lives.

A `TorchDispatchMode` sees each tensor an aten op creates; a weak reference to the tensor's
storage tells when the memory is given back. Labels come from what the step does with a
storage: the model's parameters, the optimizer's state, `.grad` (post-accumulate-grad hook),
tensors autograd saves for backward (saved-tensor pack hook), and autocast's low-precision
copies of parameters (`_to_copy` of a parameter into fp16/bf16). Everything else is a
temporary. Labels are applied to a storage's whole life, after the step, so a gradient is a
gradient from the moment backward creates it. PyTorch's own
`torch.distributed._tools.mem_tracker.MemTracker` uses the same technique.

Subclasses (sharded_tracker.py, cpu_allocator_blocks.py) extend it through public seams:
`storages` (which storages a tensor holds), `label`/`label_storage`, `life_began` (a new
life starts), `end_life`, `on_exit`, and the `precedence` and `categories` of their labels.
"""

from __future__ import annotations

import contextlib
import itertools
from typing import Callable, Sequence

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode_stack
from torch.utils._pytree import tree_flatten

from generator.measure.tracking.in_place_sums import InPlaceSums
from generator.measure.tracking.storage_lives import StorageLives
from generator.measure.tracking.timeline import (
    StorageLife,
    TrackerReport,
    frees_in_order,
    summarise,
)
from generator.results.shapes import CATEGORIES

OUTSIDE_MODULES = "(outside modules)"
#: The CUDA caching allocator rounds every block up to this many bytes.
CUDA_BLOCK_BYTES = 512
#: The labels, lowest precedence first. A later label wins over an earlier one only if it
#: ranks higher: a parameter saved for backward stays a parameter; a temporary that autograd
#: saves becomes an activation. `comm_buffers` (a multi-GPU step's, sharded_tracker.py) ranks
#: between autocast copies and gradients.
PRECEDENCE: tuple[str, ...] = ("temporaries", "activations", "autocast_copies", "comm_buffers",
                               "gradients", "optimizer_state", "parameters")
_LOW_PRECISION = (torch.float16, torch.bfloat16)
#: MemoryTracker's state_on_host: (optimizer, parameter group, state key, value) -> is it
#: kept in host memory?
StatePlacement = Callable[[torch.optim.Optimizer, dict, str, torch.Tensor], bool]


def round_up(nbytes: int, block: int) -> int:
    """`nbytes` rounded up to a whole number of allocator blocks of `block` bytes."""
    return -(-nbytes // block) * block


def own_storage(tensor: object) -> torch.UntypedStorage | None:
    """The storage of a plain strided tensor; None for anything else (sparse tensors,
    wrapper subclasses, tensors without storage, non-tensors)."""
    if not isinstance(tensor, torch.Tensor) or tensor.layout != torch.strided:
        return None
    try:
        return tensor.untyped_storage()
    except (RuntimeError, NotImplementedError):  # e.g. tensors without storage
        return None


def top_level_blocks(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """The model's children, with module lists expanded: embeddings, layers.0, …, head."""
    blocks = []
    for name, child in model.named_children():
        if isinstance(child, (nn.ModuleList, nn.Sequential)):
            blocks.extend((f"{name}.{i}", sub) for i, sub in enumerate(child))
        else:
            blocks.append((name, child))
    return blocks


class MemoryTracker(TorchDispatchMode):
    """Use as `with MemoryTracker(model, optimizer) as tracker: step(tracker.mark_phase)`,
    then `tracker.report()` (step.tracked_step does this)."""

    #: The labels a storage can get, lowest precedence first (see PRECEDENCE).
    precedence: tuple[str, ...] = PRECEDENCE
    #: The categories of the report, in the order results list them.
    categories: tuple[str, ...] = CATEGORIES

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, *,
                 round_bytes: int = 1, device_type: str | None = None,
                 blocks: Sequence[tuple[str, nn.Module]] | None = None,
                 in_place_sums: bool = False,
                 state_on_host: StatePlacement | None = None) -> None:
        """round_bytes: the allocator's block granularity (CUDA_BLOCK_BYTES on CUDA, 1 on
        CPU). device_type: count only storages on this device type (None: all).
        blocks: the named parts activations are attributed to (default: top_level_blocks).
        in_place_sums: report the step a user's untracked step would be, where autograd adds
        gradients up in place (in_place_sums.py); an estimate's tracker does.
        state_on_host(optimizer, group, key, value): whether the optimizer keeps this state in host
        memory on the device modelled; such state is not counted (an estimate of a GPU step
        runs on fake CPU tensors, where every tensor looks like the device's)."""
        super().__init__()
        self.model, self.optimizer = model, optimizer
        self.blocks = list(blocks) if blocks is not None else top_level_blocks(model)
        self.round_bytes, self.device_type = round_bytes, device_type
        self._rank = {name: i for i, name in enumerate(self.precedence)}
        self._storages = StorageLives()
        self.sums = InPlaceSums() if in_place_sums else None
        self.state_on_host = state_on_host
        self._phases: list[tuple[str, int]] = []
        self._module_stack: list[str] = []
        self._undo = contextlib.ExitStack()
        self._saved_hooks = torch.autograd.graph.saved_tensors_hooks(self._on_saved, _identity)
        self._end = 0

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> "MemoryTracker":
        try:
            for tensor in itertools.chain(self.model.parameters(), self.model.buffers()):
                self.label(tensor, "parameters", born=0)
            for param in self.model.parameters():  # kept from the last step (set_to_none=False)
                if param.grad is not None:
                    self.label(param.grad, "gradients", born=0)
            self._label_optimizer_state(born=0)
            for param in self.model.parameters():
                if param.requires_grad:
                    self.on_exit(param.register_post_accumulate_grad_hook(self._on_grad).remove)
            self.on_exit(self.optimizer.register_step_post_hook(
                lambda *_: self._label_optimizer_state()).remove)
            for name, block in self.blocks:
                self.on_exit(block.register_forward_pre_hook(self._entering(name)).remove)
                self.on_exit(block.register_forward_hook(self._leaving).remove)
            self._saved_hooks.__enter__()
            self.on_exit(lambda: self._saved_hooks.__exit__(None, None, None))
            return super().__enter__()
        except BaseException:  # leave no hook behind
            self._undo.close()
            raise

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        self._undo.close()
        self._end = self._storages.tick()

    def on_exit(self, undo: Callable[[], object]) -> None:
        """Call `undo` when the tracker exits (last registered, first called), e.g. a hook
        handle's `remove`; a subclass registers its hooks here before `__enter__` runs."""
        self._undo.callback(undo)

    def mark_phase(self, name: str) -> None:
        """Note that the step enters phase `name` (forward, backward, optimizer)."""
        self._phases.append((name, self._storages.tick()))

    def lives(self) -> list[StorageLife]:
        """Every storage seen so far, in the order first seen; frees that follow one another
        are put in one order (timeline.frees_in_order), so an estimate repeats to the byte.
        With in_place_sums, a sum autograd would make in place lives in the first
        gradient's storage (accumulation.InPlaceSums.fold)."""
        with self._storages.lock:
            lives = self._storages.all
            if self.sums is not None:
                lives = self.sums.fold(lives, self._rank)
            return frees_in_order(lives)

    def phases(self) -> list[tuple[str, int]]:
        """The phases marked so far, each with the clock tick it began at."""
        return list(self._phases)

    def report(self, lives: list[StorageLife] | None = None) -> TrackerReport:
        """The peak, its breakdown, each category's maximum and the timeline of the step
        (of `lives` instead of the ones seen, if given: timeline.the_next_step's)."""
        return summarise(self.lives() if lives is None else lives, self.phases(),
                         end=self._end or self._storages.tick(), categories=self.categories)

    # -- labels ----------------------------------------------------------------------------
    def storages(self, tensor: object) -> list[torch.UntypedStorage]:
        """The storages `tensor` holds that this tracker counts: its own storage. A subclass
        for wrapper tensors (e.g. DTensor) returns those of their inner tensors instead."""
        storage = own_storage(tensor)
        return [] if storage is None else [storage]

    def label(self, tensor: object, category: str, *, born: int | None = None,
              module: str | None = None) -> None:
        """Label the storages of a tensor the step uses (see `label_storage`)."""
        for storage in self.storages(tensor):
            self.label_storage(storage, category, born=born, module=module)

    def label_storage(self, storage: torch.UntypedStorage, category: str, *,
                      born: int | None = None, module: str | None = None) -> None:
        """Count `storage` from now (or from tick `born`) until it is freed, as `category`;
        a storage already counted takes the label only if it ranks higher. The label holds
        for the storage's whole life. module: the block whose activation it is."""
        if storage.nbytes() == 0:
            return
        if self.device_type is not None and storage.device.type != self.device_type:
            return
        with self._storages.lock:
            life = self._storages.get(storage)
            if life is None:
                self._storages.add(storage, nbytes=round_up(storage.nbytes(), self.round_bytes),
                                   category=category, born=born, module=module)
                self.life_began(storage)
            elif self._rank[category] > self._rank[life.category]:
                life.category = category
                if category == "activations":
                    life.module = module

    def life_began(self, storage: torch.UntypedStorage) -> None:
        """Called as a storage's life starts (its first label, or the first after
        `end_life`), in the order of `lives()`; a subclass may note more about it."""

    def end_life(self, storage: torch.UntypedStorage) -> None:
        """The storage gives its bytes back now although the object lives on (e.g. it is
        about to be resized); a later label starts a new life."""
        self._storages.end(storage)

    # -- what the step does ----------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        category = "temporaries"
        if func is torch.ops.aten._to_copy.default and self._is_parameter(args[0]):
            if isinstance(out, torch.Tensor) and out.dtype in _LOW_PRECISION:
                category = "autocast_copies"
        for tensor in tree_flatten(out)[0]:
            if isinstance(tensor, torch.Tensor):
                self.label(tensor, category)
        if self.sums is not None:
            self.sums.note(func, args, kwargs, out, self._life_of)
        return out

    def _entering(self, name: str):
        def hook(*_) -> None:
            self._module_stack.append(name)
        return hook

    def _leaving(self, *_) -> None:  # must return None: a forward hook's value replaces the output
        self._module_stack.pop()

    def _on_saved(self, tensor: torch.Tensor) -> torch.Tensor:
        module = self._module_stack[-1] if self._module_stack else OUTSIDE_MODULES
        self.label(tensor, "activations", module=module)
        return tensor

    def _on_grad(self, param: torch.Tensor) -> None:
        if param.grad is not None:
            self.label(param.grad, "gradients")

    def _label_optimizer_state(self, born: int | None = None) -> None:
        group_of = {id(param): group for group in self.optimizer.param_groups
                    for param in group["params"]}
        on_host = []
        for param, state in self.optimizer.state.items():
            for key, value in state.items():
                if not isinstance(value, torch.Tensor):
                    continue
                group = group_of.get(id(param), {})
                if self.state_on_host and self.state_on_host(self.optimizer, group, key, value):
                    on_host += self.storages(value)
                else:
                    self.label(value, "optimizer_state", born=born)
        # Born during the step, they were counted as temporaries until now.
        self._storages.discard(on_host)

    # -- bookkeeping -----------------------------------------------------------------------
    def _life_of(self, tensor) -> StorageLife | None:
        storage = own_storage(tensor)
        return None if storage is None else self._storages.get(storage)

    def _is_parameter(self, tensor) -> bool:
        life = self._life_of(tensor)
        return life is not None and life.category == "parameters"


def _identity(tensor):
    return tensor


def label_saved(outputs: object) -> None:
    """Label the tensors in `outputs` activations for every tracker watching the step: an
    op's outputs kept for backward where no saved-tensor hook sees them (selective
    checkpointing caches them behind checkpointing's own hooks). Called from within a
    dispatch mode above the trackers, which are then on the mode stack."""
    for tracker in _watching():
        for tensor in tree_flatten(outputs)[0]:
            if isinstance(tensor, torch.Tensor):
                tracker._on_saved(tensor)


def label_for_trackers(outputs: object, category: str) -> None:
    """Label the tensors in `outputs` `category` for every tracker watching the step: a
    tensor whose role the ops that made it do not tell (e.g. a modelled copy to the GPU)."""
    for tracker in _watching():
        for tensor in tree_flatten(outputs)[0]:
            if isinstance(tensor, torch.Tensor):
                tracker.label(tensor, category)


def _watching() -> list[MemoryTracker]:
    return [mode for mode in _get_current_dispatch_mode_stack()
            if isinstance(mode, MemoryTracker)]
