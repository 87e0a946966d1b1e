"""The one training step that every backend runs and measures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from .precision import autocast_context, make_grad_scaler, make_optimizer
from .workload import Workload

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

    @classmethod
    def create(cls, workload: Workload, *, batch_size: int, seq_len: int, precision: str,
               optimizer: str, device: torch.device, modelled_device: str,
               fake: bool = False) -> "Trainer":
        opt = make_optimizer(optimizer, workload.model.parameters(),
                             foreach=modelled_device == "cuda")
        return cls(workload, batch_size, seq_len, precision, device, opt,
                   make_grad_scaler(precision, device.type), fake)

    def step(self, phase: PhaseCallback = _no_phase) -> float:
        """forward → loss → backward → optimizer step → zero_grad(set_to_none=True).

        Returns the loss as a float, or NaN under fake tensors."""
        model, opt, scaler = self.workload.model, self.optimizer, self.scaler
        phase("forward")
        inputs, target = self.workload.make_batch(self.batch_size, self.seq_len, self.device)
        with autocast_context(self.precision, self.device.type):
            output = model(*inputs)
            loss = self.workload.loss_fn(output, target)
        del output, inputs, target  # what backward needs is held by autograd, not by us
        phase("backward")
        if scaler is None:
            loss.backward()
        else:
            scaler.scale(loss).backward()
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
        opt.zero_grad(set_to_none=True)
        value = float("nan") if self.fake else float(loss.detach())
        del loss
        return value

    def warm_up(self) -> int:
        """Run steps until the optimizer has its state (it is created lazily at the first real
        step; under fp16 GradScaler may skip the first steps on inf). Returns the step count."""
        for count in range(1, MAX_WARMUP_STEPS + 1):
            self.step()
            if self.optimizer.state:
                return count
        raise RuntimeError(f"the optimizer took no step in {MAX_WARMUP_STEPS} warm-up steps "
                           "(every step overflowed under loss scaling)")
