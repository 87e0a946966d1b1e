"""Data parallelism for the sharding study: FSDP2 as training scripts apply it, a fake process
group for estimates on one CPU process, and classic DDP's gradient buckets.

`apply_fsdp2` is shared with scripts/torchrun_sharding.py, so the estimate and the real run
shard a model the same way.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
import torch.distributed as dist
from torch import nn

#: The study's precisions. amp-bf16 keeps fp32 master weights, gradients and optimizer state
#: and computes in bf16 under autocast, DDP and FSDP2 alike; FSDP2's MixedPrecisionPolicy
#: (bf16 weights gathered, gradients reduced in fp32, no autocast) is a strategy of its own
#: (studies/sharding.regime).
PRECISIONS = ("fp32", "amp-bf16")
#: DDP's defaults: 25 MiB buckets (`bucket_cap_mb`), the first one 1 MiB
#: (`dist._DEFAULT_FIRST_BUCKET_BYTES`) so that the first all-reduce starts early.
BUCKET_CAP_BYTES = 25 * 2**20
FIRST_BUCKET_BYTES = 2**20


@contextlib.contextmanager
def fake_world(world_size: int) -> Iterator[object]:
    """Rank 0 of a `world_size`-rank job, alone in this process: PyTorch's fake process group
    (torch.testing._internal.distributed.fake_pg) accepts every collective and moves nothing,
    so each rank's memory is modelled without the other ranks. Yields a 1-D device mesh."""
    # Importing the module registers the "fake" backend; it ships with PyTorch for its tests.
    from torch.distributed.device_mesh import init_device_mesh
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if dist.is_initialized():
        raise RuntimeError("a process group is already initialised in this process")
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world_size)
    try:
        yield init_device_mesh("cpu", (world_size,))
    finally:
        dist.destroy_process_group()


def apply_fsdp2(model: nn.Module, mesh: object, *, bf16_params: bool) -> None:
    """Full sharding (ZeRO-3): each block of `model.layers` is one FSDP2 unit, the root holds
    the rest (embeddings, final norm, head), as torchtitan and the FSDP2 tutorial do.
    bf16_params: FSDP2's mixed precision (torchtitan's default), bf16 weights gathered and
    gradients reduced in fp32; else the default policy, the parameters' own dtype."""
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) \
        if bf16_params else MixedPrecisionPolicy()
    for block in model.layers:
        fully_shard(block, mesh=mesh, mp_policy=policy)
    fully_shard(model, mesh=mesh, mp_policy=policy)


class DDPBuckets:
    """What classic `DistributedDataParallel` adds to a rank's memory, reproduced on fake
    tensors (its C++ reducer reads parameter data to check them across ranks, which fake
    tensors have none of): flat gradient buckets, allocated once and kept across steps, in
    reverse parameter order. As each `.grad` is accumulated it is copied into its bucket; a
    full bucket is all-reduced in place and copied back into the `.grad`s (DDP's default,
    gradient_as_bucket_view=False, which is why a DDP rank holds its gradients twice)."""

    def __init__(self, model: nn.Module) -> None:
        groups: list[list[nn.Parameter]] = []
        size, cap = 0, FIRST_BUCKET_BYTES
        for param in reversed([p for p in model.parameters() if p.requires_grad]):
            nbytes = param.numel() * param.element_size()
            if groups and size < cap and groups[-1][0].dtype == param.dtype:
                groups[-1].append(param)
                size += nbytes
            else:
                if groups:
                    cap = BUCKET_CAP_BYTES
                groups.append([param])
                size = nbytes
        self.buffers = [torch.empty(sum(p.numel() for p in group), dtype=group[0].dtype)
                        for group in groups]
        self._groups = groups
        self._where: dict[nn.Parameter, tuple[int, torch.Tensor]] = {}
        for index, (group, buffer) in enumerate(zip(groups, self.buffers)):
            views = buffer.split([p.numel() for p in group])
            self._where.update((p, (index, v)) for p, v in zip(group, views))
        self._pending = [len(group) for group in groups]
        self._handles = [p.register_post_accumulate_grad_hook(self._ready) for p in self._where]

    def _ready(self, param: nn.Parameter) -> None:
        index, view = self._where[param]
        view.copy_(param.grad.reshape(-1))
        view.div_(dist.get_world_size())
        self._pending[index] -= 1
        if self._pending[index] == 0:
            dist.all_reduce(self.buffers[index])
            for member in self._groups[index]:
                member.grad.copy_(self._where[member][1].view_as(member.grad))
            self._pending[index] = len(self._groups[index])
