"""What a model brings to a training step: the module, a batch maker and a loss."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch import nn

#: make_batch(batch_size, seq_len, device) -> (inputs, target); the model is called as model(*inputs).
BatchMaker = Callable[[int, int, torch.device], "tuple[tuple[torch.Tensor, ...], Any]"]
#: loss_fn(model_output, target) -> a scalar tensor.
LossFn = Callable[[Any, Any], torch.Tensor]


@dataclass(frozen=True)
class Workload:
    """One model ready to train: `loss_fn(model(*inputs), target)` is the step's loss."""

    model: nn.Module
    make_batch: BatchMaker
    loss_fn: LossFn
