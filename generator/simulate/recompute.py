"""A checkpointed block's recomputation, in the modes its forward pass ran in.

`torch.utils.checkpoint` recomputes a block in backward, where the torch-function modes of
the forward pass are no longer active: the run's Placement (placement.py: `device="cuda"`
inside the block) and the device's kernels (CudaKernelPolicy's fused dropout and attention)
would be missing, so the recomputation would pick other kernels than the forward pass did,
and checkpoint's own check stops the script ("a different number of tensors was saved").
The estimate meets the same in its own checkpointing (measure/training/step.py,
`reentered`); a script's checkpointing is its own (Hugging Face's
`gradient_checkpointing_enable`, a loop's own `checkpoint(...)`), so here the function each
checkpoint runs re-enters, when it is recomputed, the modes that were active when it ran
first. Both of checkpoint's variants are covered: the generator the non-reentrant one runs
and the autograd Function the reentrant one applies, both looked up in
torch.utils.checkpoint as each checkpoint is taken, so a framework that imported
`checkpoint` itself before the run is covered too.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

import torch.utils.checkpoint as torch_checkpoint
from torch.overrides import _get_current_function_mode_stack

from generator.measure.training.step import reentered


def in_same_modes(function: Callable) -> Callable:
    """`function`, run in the torch-function modes active now whenever it is called."""
    modes = list(_get_current_function_mode_stack())

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        with reentered(modes):
            return function(*args, **kwargs)

    return run


def _non_reentrant(original: Callable) -> Callable:
    """_checkpoint_without_reentrant_generator, its function recomputed in the same modes."""

    def generator(function: Callable, *args: Any, **kwargs: Any):
        return original(in_same_modes(function), *args, **kwargs)

    return generator


#: torch.utils.checkpoint's own, as imported (the module's name for it changes in a run).
_CHECKPOINT_FUNCTION = torch_checkpoint.CheckpointFunction


class _Reentrant(_CHECKPOINT_FUNCTION):
    """CheckpointFunction, its function recomputed in the same modes."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):  # noqa: ANN001 autograd's
        return _CHECKPOINT_FUNCTION.forward(ctx, in_same_modes(run_function),
                                            preserve_rng_state, *args)


@contextlib.contextmanager
def in_forward_modes() -> Iterator[None]:
    """Every checkpoint taken in the block recomputes in its forward pass's modes."""
    generator = torch_checkpoint._checkpoint_without_reentrant_generator
    function = torch_checkpoint.CheckpointFunction
    torch_checkpoint._checkpoint_without_reentrant_generator = _non_reentrant(generator)
    torch_checkpoint.CheckpointFunction = _Reentrant
    try:
        yield
    finally:
        torch_checkpoint._checkpoint_without_reentrant_generator = generator
        torch_checkpoint.CheckpointFunction = function
