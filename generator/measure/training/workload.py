"""What a model brings to a training step: the module, a batch maker and a loss."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch
from torch import nn

#: make_batch(batch_size, seq_len, device) -> (inputs, target); the model is called as
#: model(*inputs), or model(**inputs) when inputs is a dict (Hugging Face models, whose
#: inputs include the labels). A user's one bare tensor becomes (tensor,) (models/user.py).
BatchMaker = Callable[[int, int, torch.device], "tuple[Any, Any]"]
#: loss_fn(model_output, target) -> a scalar tensor.
LossFn = Callable[[Any, Any], torch.Tensor]


@dataclass(frozen=True)
class Workload:
    """One model ready to train: `loss_fn(model(*inputs), target)` is the step's loss."""

    model: nn.Module
    make_batch: BatchMaker
    loss_fn: LossFn
    blocks: Sequence[tuple[str, nn.Module]] | None = None
    """The parts activations are attributed to; None: the model's children (tracker.py)."""
    enable_checkpointing: Callable[[Callable[[], tuple]], None] | None = None
    """The model's own way to recompute activations in backward, called with the
    `context_fn` its checkpoints take (step.checkpoint_context); None: the step wraps the
    blocks of `model.layers` (step.checkpoint_layers)."""
    attention: str | None = None
    """The attention the model runs where the model chose it (attention "auto": what
    transformers picked for a Hugging Face model); None: the experiment's own."""
    before_class_checkpointing: Callable[[tuple[str, ...]], None] | None = None
    """What the model needs once modules of these classes are recomputed in backward
    (step.checkpoint_classes); None: nothing."""
    notes: tuple[dict, ...] = ()
    """What was done to the model beyond building it (LoRA's adapters), for the result's
    notes."""
