"""The one training step that every backend runs and measures."""

from __future__ import annotations

import contextlib
import gc
from dataclasses import dataclass
from functools import partial
from typing import Callable, Iterator

import torch
from torch import nn
from torch.overrides import _get_current_function_mode_stack
from torch.utils.checkpoint import checkpoint

from generator.errors import ConfigError
from generator.experiment import Experiment
from generator.measure.tracking.timeline import TrackerReport
from generator.measure.tracking.tracker import MemoryTracker
from generator.measure.training.lora import with_lora
from generator.measure.training.precision import (
    AUTOCAST_DTYPE,
    MODEL_DTYPE,
    autocast_context,
    make_grad_scaler,
    make_optimizer,
)
from generator.measure.training.quantize_4bit import quantized
from generator.measure.training.workload import Workload

#: Called with "forward", "backward", "optimizer" as the step enters each phase.
PhaseCallback = Callable[[str], None]

MAX_WARMUP_STEPS = 8


def _no_phase(_name: str) -> None:
    pass


@dataclass
class Trainer:
    """A workload with its optimizer and loss scaler, ready to run steps."""

    workload: Workload
    batch_size: int
    seq_len: int
    precision: str
    device: torch.device
    optimizer: torch.optim.Optimizer
    scaler: torch.amp.GradScaler | None
    fake: bool = False
    """Fake tensors carry no values: GradScaler cannot check them for inf, so we assume none."""
    set_to_none: bool = True
    """zero_grad(set_to_none=...): True frees .grad between steps, False keeps it zeroed."""
    zero_grad_before_backward: bool = False
    """zero_grad() after the forward pass instead of after the optimizer step, as a loop that
    calls it between forward and backward does: the last step's gradients live through the
    forward pass."""
    input_dtype: torch.dtype | None = None
    """Pure 16-bit training: floating-point inputs are made in the model's dtype."""
    micro_batches: int = 1
    """Gradient accumulation: forward and backward per micro-batch, one optimizer step."""

    @classmethod
    def create(cls, workload: Workload, exp: Experiment, *, device: torch.device,
               fake: bool = False,
               parallelize: Callable[[Workload], Workload] | None = None) -> "Trainer":
        """parallelize: shares the model out over GPUs (parallel.Sharding), once the model is
        cast, adapted and checkpointed, before the optimizer takes its parameters."""
        dtype = MODEL_DTYPE[exp.precision]
        if dtype != torch.float32:  # built in fp32, then cast whole, as users do
            cast_model(workload.model, dtype)
        if exp.quantization != "none":  # QLoRA's base, loaded in 4 bits before PEFT wraps it
            workload = quantized(workload, quant_type=exp.quantization,
                                 compute_dtype=AUTOCAST_DTYPE[exp.precision] or dtype)
        if exp.lora_rank:  # on the cast model, as users load it and then wrap it in PEFT
            workload = with_lora(workload, rank=exp.lora_rank, targets=exp.lora_targets,
                                 dropout=exp.lora_dropout)
        if exp.checkpointing:  # the model's own way where it has one (Hugging Face)
            if workload.enable_checkpointing is not None:
                workload.enable_checkpointing(checkpoint_context(exp))
            else:
                checkpoint_layers(workload.model, selective=_selective(exp))
        if exp.checkpoint_classes:
            checkpoint_classes(workload.model, exp.checkpoint_classes)
            if workload.before_class_checkpointing is not None:
                workload.before_class_checkpointing(exp.checkpoint_classes)
        if parallelize is not None:
            workload = parallelize(workload)
        # The weights that train, as the Trainer hands them over (LoRA: the adapters alone)
        trained = [p for p in workload.model.parameters() if p.requires_grad]
        if not trained:
            raise ConfigError(f"{exp.model}: no parameter requires grad, so there is nothing "
                              "to train")
        opt = make_optimizer(exp.optimizer, trained,
                             impl=exp.optimizer_impl, modelled_device=exp.device,
                             weight_decay=exp.weight_decay)
        return cls(workload, exp.batch_size, exp.seq_len, exp.precision, device, opt,
                   make_grad_scaler(exp.precision, device.type, exp.loss_scaling), fake,
                   set_to_none=exp.zero_grad != "zeros",
                   zero_grad_before_backward=exp.zero_grad == "before-backward",
                   input_dtype=dtype if dtype != torch.float32 else None,
                   micro_batches=exp.micro_batches)

    def step(self, phase: PhaseCallback = _no_phase) -> float:
        """(forward → loss → backward) per micro-batch → optimizer step → zero_grad.

        Returns the loss as a float (the batch's mean), or NaN under fake tensors. The last
        loss stays referenced until the step ends, as in a user's loop that reads it after
        the optimizer step."""
        opt, scaler = self.optimizer, self.scaler
        values = []
        for micro_batch in range(self.micro_batches):
            loss = None  # the previous micro-batch's loss is read and let go first
            loss = self._forward_backward(phase, first=micro_batch == 0)
            values.append(float("nan") if self.fake else float(loss.detach()))
        phase("optimizer")
        if scaler is None:
            opt.step()
        else:
            scaler.unscale_(opt)
            if self.fake:
                opt.step()  # scaler.step would call .item() on a fake inf flag
            else:
                scaler.step(opt)
            scaler.update()
        if not self.zero_grad_before_backward:
            opt.zero_grad(set_to_none=self.set_to_none)
        del loss
        return sum(values)

    @property
    def keeps_gradients(self) -> bool:
        """Whether the gradients are still there when the step ends."""
        return not self.set_to_none or self.zero_grad_before_backward

    def _forward_backward(self, phase: PhaseCallback, first: bool = True) -> torch.Tensor:
        """One micro-batch, forward and backward; returns its loss. Its gradients add to
        those of the micro-batches before it (first: there are none, or the last step's,
        which zero_grad before backward lets go)."""
        model, scaler = self.workload.model, self.scaler
        phase("forward")
        inputs, target = self.workload.make_batch(self.batch_size // self.micro_batches,
                                                  self.seq_len, self.device)
        if self.input_dtype is not None:
            inputs = _floats_as(inputs, self.input_dtype)
        with autocast_context(self.precision, self.device.type):
            output = model(**inputs) if isinstance(inputs, dict) else model(*inputs)
            loss = self.workload.loss_fn(output, target)
        del output, inputs, target  # what backward needs is held by autograd, not by us
        if self.micro_batches > 1:  # the mean over the whole batch, as one step would take
            loss = loss / self.micro_batches
        if first and self.zero_grad_before_backward:
            self.optimizer.zero_grad(set_to_none=self.set_to_none)
        phase("backward")
        if scaler is None:
            loss.backward()
        else:
            scaler.scale(loss).backward()
        return loss

    def warm_up(self, phase: PhaseCallback = _no_phase) -> int:
        """Run steps until the optimizer has its state (it is created lazily at the first real
        step; under fp16 GradScaler may skip the first steps on inf). Returns the step count."""
        for count in range(1, MAX_WARMUP_STEPS + 1):
            self.step(phase)
            if self.optimizer.state:
                return count
        raise RuntimeError(f"the optimizer took no step in {MAX_WARMUP_STEPS} warm-up steps "
                           "(every step overflowed under loss scaling)")


def tracked_step(trainer: Trainer, tracker: MemoryTracker) -> TrackerReport:
    """One measured step of `trainer` under `tracker`, which is entered for it; returns its
    report. The garbage collector waits until the step is over, so that nothing is freed at
    a moment that depends on Python's GC schedule."""
    with gc_paused(), tracker:
        trainer.step(tracker.mark_phase)
    return tracker.report()


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Python's garbage collector waits while a tracker watches: nothing is then freed at a
    moment that depends on the GC's schedule."""
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _Checkpointed(nn.Module):
    """A block whose activations are recomputed in backward instead of kept from forward.
    selective: what it keeps all the same (selective_checkpoint.contexts); None: nothing
    but its inputs."""

    def __init__(self, block: nn.Module,
                 selective: Callable[[], tuple] | None = None) -> None:
        super().__init__()
        self.block = block
        self.selective = selective

    def forward(self, *args, **kwargs):
        modes = list(_get_current_function_mode_stack())

        def run(*inner_args, **inner_kwargs):
            with reentered(modes):
                return self.block(*inner_args, **inner_kwargs)

        # Non-reentrant: the variant PyTorch recommends; it supports keyword arguments and
        # does not need inputs that require grad.
        if self.selective is not None:
            kwargs = {**kwargs, "context_fn": self.selective}
        return checkpoint(run, *args, use_reentrant=False, **kwargs)


@contextlib.contextmanager
def reentered(modes: list) -> Iterator[None]:
    """The recomputation in backward runs without the torch-function modes that were active
    in forward (such as the estimate's CUDA policy), so it could pick other kernels than
    forward did: re-enter those that are not active."""
    active = _get_current_function_mode_stack()
    with contextlib.ExitStack() as stack:
        for mode in modes:
            if not any(mode is m for m in active):
                stack.enter_context(mode)
        yield


def recompute_in_same_modes() -> tuple[contextlib.AbstractContextManager, ...]:
    """A `context_fn` for `torch.utils.checkpoint.checkpoint`: nothing around the forward
    pass, the forward pass's torch-function modes around the recomputation."""
    return contextlib.nullcontext(), reentered(list(_get_current_function_mode_stack()))


def checkpoint_context(exp: Experiment) -> Callable[[], tuple]:
    """The `context_fn` of each block a model checkpoints its own way (Hugging Face's):
    the recomputation in the forward pass's torch-function modes, and with
    checkpoint_policy "selective-op" torchtitan's op policy (selective_checkpoint.py)."""
    selective = _selective(exp)
    return recompute_in_same_modes if selective is None else also_in_same_modes(selective)


def also_in_same_modes(selective: Callable[[], tuple]) -> Callable[[], tuple]:
    """A `context_fn` of selective checkpointing (`selective`, e.g.
    selective_checkpoint.contexts), with the recomputation in the forward pass's
    torch-function modes as well (recompute_in_same_modes)."""
    def contexts() -> tuple[contextlib.AbstractContextManager, ...]:
        forward, recompute = selective()
        return forward, _together(recompute, recompute_in_same_modes()[1])

    return contexts


def _selective(exp: Experiment) -> Callable[[], tuple] | None:
    """selective_checkpoint.contexts for the device `exp` models, or None for full
    checkpointing."""
    if exp.checkpoint_policy != "selective-op":
        return None
    from generator.measure.training import selective_checkpoint

    return partial(selective_checkpoint.contexts, exp.device)


@contextlib.contextmanager
def _together(*contexts: contextlib.AbstractContextManager) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        for context in contexts:
            stack.enter_context(context)
        yield


def cast_model(model: nn.Module, dtype: torch.dtype) -> None:
    """`model.to(dtype)` for real and fake tensors alike: under FakeTensorMode `Module.to`
    swaps parameters in place, which fails on the weak references fake mode keeps. Tied
    parameters stay tied (one new Parameter per old one); those already in `dtype` stay."""
    new: dict[int, torch.Tensor] = {}
    with torch.no_grad():
        for module in model.modules():
            for table in (module._parameters, module._buffers):
                for name, old in table.items():
                    if old is None or not old.is_floating_point() or old.dtype == dtype:
                        continue
                    if id(old) not in new:
                        value = old.detach().to(dtype)
                        new[id(old)] = nn.Parameter(value, old.requires_grad) \
                            if isinstance(old, nn.Parameter) else value
                    table[name] = new[id(old)]


def _floats_as(inputs, dtype: torch.dtype):
    def cast(value):
        return value.to(dtype) if isinstance(value, torch.Tensor) and value.is_floating_point() \
            else value
    if isinstance(inputs, dict):
        return {name: cast(value) for name, value in inputs.items()}
    return tuple(cast(value) for value in inputs)


def checkpoint_classes(model: nn.Module, names: tuple[str, ...]) -> None:
    """Recompute every module of the named classes in backward: each one's forward runs
    under non-reentrant checkpointing, as `torch.distributed._composable.checkpoint` applied
    to those modules does (nested ones too), with the forward pass's torch-function modes
    around the recomputation."""
    present = {type(m).__name__ for m in model.modules()}
    unknown = [name for name in names if name not in present]
    if unknown:
        raise ConfigError(f"checkpoint_classes: {type(model).__name__} has no module of class "
                          f"{', '.join(unknown)}; {_model_classes(model)}")
    for module in model.modules():
        if type(module).__name__ in names:
            module.forward = _checkpointed(module.forward)


def _model_classes(model: nn.Module) -> str:
    """The model's own module classes (not torch.nn's), in the order they first appear, for
    an error that shows what can be named."""
    own = dict.fromkeys(type(m).__name__ for m in model.modules()
                        if not type(m).__module__.startswith("torch."))
    return f"its own module classes: {', '.join(own)}" if own else \
        "it has only torch.nn module classes"


def _checkpointed(forward: Callable) -> Callable:
    def run(*args, **kwargs):
        return checkpoint(forward, *args, use_reentrant=False, preserve_rng_state=False,
                          context_fn=recompute_in_same_modes, **kwargs)
    return run


def checkpoint_layers(model: nn.Module, *,
                      selective: Callable[[], tuple] | None = None) -> None:
    """Wrap every block of `model.layers` (the transformer blocks of the zoo's models).
    selective: the `context_fn` of selective checkpointing (_selective), or None."""
    layers = getattr(model, "layers", None)
    if not isinstance(layers, nn.ModuleList):
        raise ConfigError("checkpointing needs a model with its blocks in an nn.ModuleList "
                          "named `layers`; name the classes to recompute instead with "
                          "--checkpoint-classes (checkpoint_classes in a suite)")
    for index, block in enumerate(layers):
        layers[index] = _Checkpointed(block, selective)
