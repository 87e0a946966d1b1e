"""Selective activation checkpointing by op, as torchtitan applies it to each transformer
block: a checkpointed block keeps the outputs of a few expensive ops from its forward pass
and recomputes the rest in backward (`torch.utils.checkpoint` with
`create_selective_checkpoint_contexts`).

The policy is torchtitan's at commit 9dec370 (2024-12-26), the commit of its published
Llama 3.1 H100 benchmarks: `torchtitan/parallelisms/parallelize_llama.py`, `_save_list` and
`_custom_policy` in `_apply_ac_to_transformer_block`
(https://github.com/pytorch/torchtitan/blob/9dec370/torchtitan/parallelisms/parallelize_llama.py).
It saves the outputs of `aten.mm` except every second one, of SDPA's flash and
memory-efficient kernels, of the functional `reduce_scatter_tensor` (tensor parallelism's),
and of `aten.abs` and `aten.max` (float8's amax), and recomputes everything else.

What the ops are in a CUDA step, and in the estimate (probed under FakeTensorMode with the
estimate's CUDA emulation, torch 2.13):
- A linear layer without bias (LLaMA's, torchtitan's and Hugging Face's) on a 3-D input is
  `aten.linear` → `matmul`, which folds the batch into rows and runs `aten.mm` (ATen's
  LinearAlgebra.cpp `should_fold`), on CUDA as on the CPU; with a bias it is `aten.addmm`
  (Linear.cpp `_flatten_nd_linear`), which the policy does not name, on either device. The
  seven mm of a LLaMA block come in the same order in both codes (q, k, v, o, gate/w1,
  up/w3, down/w2): q, v, gate and down are kept, k, o and up recomputed.
- Attention without a mask in 16 bits runs CUDA's `_scaled_dot_product_flash_attention`;
  the estimate calls that kernel itself (cuda_kernels.py), except with grouped-query
  attention (`enable_gqa=True`, what transformers asks for without a mask), where CUDA's
  flash kernel takes the smaller key/value heads as they are and the estimate runs the
  CPU's flash kernel, `_scaled_dot_product_flash_attention_for_cpu`, in its place (the same
  output and a log-sum-exp per row). Modelling CUDA, the policy keeps that stand-in as
  CUDA's flash kernel would be kept; a real CPU step recomputes it, as torchtitan's list
  does not name it.
- Nothing in a step without tensor parallelism or float8 runs `reduce_scatter_tensor`,
  `abs` or `max`; they are kept in the list as torchtitan wrote it.

torchtitan's policy also counted mm apart while recomputing; PyTorch 2.13 calls the policy
only in the forward pass (recomputation reads the cache by position), so one count per
forward pass of a block is the whole of it.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts

from generator.measure.tracking.tracker import label_saved

#: torchtitan's `_save_list` at 9dec370.
SAVE_LIST = frozenset({
    torch.ops.aten.mm.default,
    torch.ops.aten._scaled_dot_product_efficient_attention.default,
    torch.ops.aten._scaled_dot_product_flash_attention.default,
    torch.ops._c10d_functional.reduce_scatter_tensor.default,
    torch.ops.aten.abs.default,
    torch.ops.aten.max.default,
})
#: The kernel an estimate of a CUDA step runs for CUDA's flash attention with grouped-query
#: attention (cuda_kernels._attention_kernel).
CUDA_FLASH_STAND_IN = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default

Policy = Callable[..., CheckpointPolicy]


def op_policy(device: str) -> Policy:
    """torchtitan's `_custom_policy` for one forward pass of one block, on the device
    modelled ("cuda" or "cpu"): a new one for each pass, since it counts the mm it has
    seen."""
    saved = (SAVE_LIST | {CUDA_FLASH_STAND_IN}) if device == "cuda" else SAVE_LIST
    mm_seen = 0

    def policy(ctx, func, *args, **kwargs) -> CheckpointPolicy:
        nonlocal mm_seen
        if func == torch.ops.aten.mm.default:
            mm_seen += 1
        # Saves the output of every op in the list, except every second mm
        keep = func in saved and not (func == torch.ops.aten.mm.default and mm_seen % 2 == 0)
        return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE

    return policy


def contexts(device: str, *, kept: Callable[[Any, Any], None] | None = None) -> tuple:
    """The forward and recompute contexts of one checkpointed forward pass
    (`torch.utils.checkpoint`'s `context_fn`). What the policy keeps is labelled an
    activation for any tracker watching (no saved-tensor hook sees it: checkpointing's own
    hooks stand in front). kept(op, output): called for each output kept."""
    decide = op_policy(device)

    def policy(ctx, func, *args, **kwargs) -> CheckpointPolicy:
        decision = decide(ctx, func, *args, **kwargs)
        if decision == CheckpointPolicy.MUST_SAVE:
            label_saved(ctx.op_output)
            if kept is not None:
                kept(func, ctx.op_output)
        return decision

    return create_selective_checkpoint_contexts(policy)
