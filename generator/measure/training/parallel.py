"""A step over several GPUs: the process group and device mesh of a job (`world`), and the
model shared out by a strategy (`Sharding`): DDP, FSDP2 as training scripts apply it (every
block and the root), HSDP, tensor parallelism by the model's plan (tensor_parallel.py), and
FSDP2 × TP on a 2-D mesh.

An estimate runs rank 0 of the job alone in this process, on PyTorch's fake process group
(collectives accepted, nothing moved) and fake tensors. The same code shards a real job's
model under torchrun (generator/cli/torchrun_step.py), so that the estimate and the real run
share a model the same way. Every rank of these layouts holds storages of the same sizes
(FSDP2 pads each shard to one size; tensor parallelism needs the heads and widths divided
evenly), so rank 0's figures are each rank's.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from generator.errors import ConfigError
from generator.experiment.option import group_size
from generator.experiment.strategies import STRATEGIES

#: DDP's defaults: 25 MiB buckets (`bucket_cap_mb`), the first one 1 MiB
#: (`dist._DEFAULT_FIRST_BUCKET_BYTES`) so that the first all-reduce starts early.
BUCKET_CAP_BYTES = 25 * 2**20
FIRST_BUCKET_BYTES = 2**20


#: FSDP2's MixedPrecisionPolicy dtypes by name (experiment.FSDP_MIXED_PRECISIONS).
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def mesh_shape(exp) -> dict[str, int]:
    """The mesh of an experiment's job, e.g. {"replicate": 2, "shard": 8} for hsdp on 16
    GPUs in shard groups of 8."""
    names = STRATEGIES[exp.parallel].mesh
    if len(names) == 1:
        return {names[0]: exp.gpus}
    inner = group_size(exp)
    return {names[0]: exp.gpus // inner, names[1]: inner}


def tp_ranks(exp) -> int:
    """The ranks of one tensor-parallel group (its mesh's last dimension); 1 without TP."""
    strategy = STRATEGIES[exp.parallel]
    return mesh_shape(exp)[strategy.mesh[-1]] if strategy.tensor_parallel else 1


@contextlib.contextmanager
def world(exp, *, fake: bool = True) -> Iterator[Any]:
    """The device mesh of `exp`'s job (None for one GPU). fake: rank 0 alone on the fake
    process group, torn down afterwards; else the process group torchrun started, which must
    have exp.gpus ranks."""
    if exp.parallel == "none":
        yield None
        return
    from torch.distributed.device_mesh import init_device_mesh

    shape = mesh_shape(exp)
    with fake_process_group(exp.gpus) if fake else contextlib.nullcontext(), \
            warnings.catch_warnings():
        # FSDP2 warns that a model returning a view may skip an all-gather if the caller
        # then changes it in place; the step never does, and the warning is not the user's.
        warnings.filterwarnings("ignore", message="FSDP2-wrapped module .* returned a view")
        if dist.get_world_size() != exp.gpus:
            raise ConfigError(f"this job has {dist.get_world_size()} ranks, the experiment "
                              f"{exp.gpus} GPUs")
        if fake and len(shape) > 1:
            yield _rank_zero_mesh(shape)
        else:
            yield init_device_mesh("cpu", tuple(shape.values()), mesh_dim_names=tuple(shape))


def _rank_zero_mesh(shape: dict[str, int]) -> Any:
    """A 2-D mesh as rank 0 sees it, on the fake process group: the process groups of rank
    0's row and column only. init_device_mesh makes every group of every dimension (one
    new_group each, all N / size of them: 40 s over 2²⁰ GPUs), which a real job needs
    (every rank calls it) and rank 0 alone does not."""
    from torch.distributed.device_mesh import DeviceMesh

    ranks = torch.arange(dist.get_world_size(), dtype=torch.int).view(*shape.values())
    # rank 0's group along each dimension: its index 0 in every other dimension
    groups = [dist.new_group(ranks.select(1 - dim, 0).tolist()) for dim in range(2)]
    return DeviceMesh.from_group(groups, "cpu", mesh=ranks, mesh_dim_names=tuple(shape))


class Sharding:
    """Shares a workload's model out by `exp.parallel` over `mesh`, as Trainer.create's
    `parallelize` (after the casts, adapters and checkpointing, before the optimizer):
    tensor parallelism first, then FSDP2 or DDP. Afterwards `persistent` holds the buffers
    that outlive the step (DDP's buckets) and `cast_category` the label of low-precision
    copies of parameters (FSDP2's policy casts shards before the all-gather: communication
    buffers), and `host` what FSDP2's CPU offload keeps in host memory (cpu_offload.py; None
    without it). fake: on fake tensors DDP's C++ reducer cannot run (it reads parameter data),
    so its buckets are reproduced (DDPBuckets); a real run wraps the model in
    DistributedDataParallel."""

    def __init__(self, exp, mesh, *, fake: bool) -> None:
        self.exp, self.mesh, self.fake = exp, mesh, fake
        self.persistent: list[torch.Tensor] = []
        self.cast_category = ("comm_buffers" if exp.fsdp_mixed_precision != "none"
                              else "autocast_copies")
        self.blocks: list[str] = []
        """The modules FSDP2 made units of, by name (the root is one more)."""
        self.tp_plan = ""
        """Whose tensor-parallel plan split the model (tensor_parallel.plan_source; "" without
        TP)."""
        self.host = None
        if exp.cpu_offload:
            from generator.measure.training.cpu_offload import HostMemory

            self.host = HostMemory()

    def __call__(self, workload):
        # FSDP2 over TP joins the two meshes, which fake tensors cannot (tensor_parallel.py)
        from generator.measure.training.tensor_parallel import meshes_outside_fake_mode

        strategy = STRATEGIES[self.exp.parallel]
        with meshes_outside_fake_mode() if strategy.shards and strategy.tensor_parallel \
                else contextlib.nullcontext():
            return self._share_out(workload)

    def _share_out(self, workload):
        from dataclasses import replace

        exp, mesh, model = self.exp, self.mesh, workload.model
        strategy = STRATEGIES[exp.parallel]
        if strategy.tensor_parallel:
            from generator.measure.training.tensor_parallel import (
                apply_tensor_parallel,
                plan_source,
                tp_problems,
            )

            tp_mesh = mesh[strategy.mesh[-1]]
            problems = tp_problems(model, tp_mesh.size())
            if problems:
                raise ConfigError(f"{exp.model} cannot take parallel {exp.parallel} over "
                                  f"{tp_mesh.size()} GPUs: {'; '.join(problems)}")
            apply_tensor_parallel(model, tp_mesh)
            self.tp_plan = plan_source(model)
        if strategy.data_parallel == "replicate":
            if self.fake:
                self.persistent = DDPBuckets(model).buffers
            else:
                from torch.nn.parallel import DistributedDataParallel

                workload = replace(workload, model=DistributedDataParallel(model))
        elif strategy.shards:  # over the whole mesh, or the outer dimension beside TP
            fsdp_mesh = mesh[strategy.mesh[0]] if strategy.tensor_parallel else mesh
            self.blocks = apply_fsdp2(model, fsdp_mesh, policy=self._policy(),
                                      reshard_after_forward=exp.reshard_after_forward,
                                      offload=self.host is not None)
            if self.host is not None:
                from generator.measure.training.cpu_offload import offload_parameters

                offload_parameters(model, self.host)
        return workload

    def copies_modelled(self) -> contextlib.AbstractContextManager:
        """On fake tensors, the copies FSDP2's CPU offload makes between host and GPU
        (cpu_offload.copies_modelled); nothing to do without offload."""
        if self.host is None or not self.fake:
            return contextlib.nullcontext()
        from generator.measure.training.cpu_offload import copies_modelled

        return copies_modelled(self.host)

    def _policy(self):
        from torch.distributed.fsdp import MixedPrecisionPolicy

        if self.exp.fsdp_mixed_precision == "none":
            return MixedPrecisionPolicy()
        param, reduce = self.exp.fsdp_mixed_precision.split("/")
        return MixedPrecisionPolicy(param_dtype=DTYPES[param], reduce_dtype=DTYPES[reduce])


def communicators(exp) -> int:
    """The NCCL communicators a rank of `exp`'s job uses: one per mesh dimension (none on
    one GPU)."""
    return len(STRATEGIES[exp.parallel].mesh) if exp.parallel in STRATEGIES else 0


def layout(exp, sharding: Sharding) -> dict[str, Any]:
    """What a result keeps of how the step was shared out."""
    return {"strategy": exp.parallel, "gpus": exp.gpus, "mesh": mesh_shape(exp),
            "rank": 0, "fsdp_blocks": len(sharding.blocks),
            "host_bytes": None if sharding.host is None else sharding.host.held_at_optimizer[0],
            "batch_per_rank": exp.batch_size,
            "data_parallel_ranks": exp.gpus // tp_ranks(exp)}


def notes(exp, sharding: Sharding, *, cuda: bool) -> list[dict]:
    from generator.gpus import communicator_bytes
    from generator.results.notes import note

    mesh = " × ".join(f"{name} {size}" for name, size in mesh_shape(exp).items())
    found = [note("parallel_rank", strategy=exp.parallel, gpus=exp.gpus, mesh=mesh)]
    strategy = STRATEGIES[exp.parallel]
    if strategy.data_parallel == "replicate":
        found.append(note("sharding_ddp_buckets"))
    if strategy.shards:
        found.append(note("parallel_fsdp_units", count=len(sharding.blocks),
                          first=sharding.blocks[0], reshard=exp.reshard_after_forward)
                     if sharding.blocks else note("parallel_root_only"))
    if sharding.host is not None:
        host, pinned = sharding.host.held_at_optimizer
        found.append(note("parallel_offload", host=host, pinned=pinned))
    if sharding.tp_plan:
        found.append(note(f"parallel_tp_plan_{sharding.tp_plan}", size=tp_ranks(exp)))
    if cuda:
        low, high = communicator_bytes(communicators(exp))
        found.append(note("parallel_nccl", communicators=communicators(exp), low=low,
                          high=high))
    return found


def fsdp_units(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """The modules FSDP2 is applied to besides the root, as training scripts choose them: the
    transformer blocks. A Hugging Face model names their classes (`_no_split_modules`, what
    accelerate wraps); else the blocks of `model.layers`; else the longest ModuleList of
    modules of one class. The outermost such modules, by name; [] when there are none (the
    root alone is then one unit, gathered whole)."""
    classes = set()
    for module in model.modules():
        classes.update(getattr(module, "_no_split_modules", None) or ())
    if classes:
        found = [(name, m) for name, m in model.named_modules()
                 if type(m).__name__ in classes and name]
    else:
        lists = [(name, m) for name, m in model.named_modules()
                 if isinstance(m, nn.ModuleList) and len(m) > 1
                 and len({type(child) for child in m}) == 1]
        if not lists:
            return []
        prefix, longest = max(lists, key=lambda item: len(item[1]))
        found = [(f"{prefix}.{i}" if prefix else str(i), m) for i, m in enumerate(longest)]
    outermost = []
    for name, module in found:
        if not any(name.startswith(outer + ".") for outer, _ in outermost):
            outermost.append((name, module))
    return outermost


def apply_fsdp2(model: nn.Module, mesh: object, *, policy: Any = None,
                reshard_after_forward: bool = True, offload: bool = False) -> list[str]:
    """Full sharding (ZeRO-3), or HSDP on a 2-D mesh: each transformer block (fsdp_units) is
    one FSDP2 unit, the root holds the rest (embeddings, final norm, head), as torchtitan and
    the FSDP2 tutorial do; the root keeps its weights gathered after forward (backward
    starts with them), as fully_shard's own default for the root does. policy: FSDP2's
    MixedPrecisionPolicy (None: its default, the parameters' own dtype). offload: FSDP2's
    CPUOffloadPolicy (unpinned: these are a fake run's CPU tensors). Returns the blocks'
    names."""
    from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, fully_shard

    options: dict[str, Any] = {"mesh": mesh, "mp_policy": policy or MixedPrecisionPolicy()}
    if offload:
        options["offload_policy"] = CPUOffloadPolicy(pin_memory=False)
    units = fsdp_units(model)
    with one_rank_at_a_time():
        for _, block in units:
            fully_shard(block, reshard_after_forward=reshard_after_forward, **options)
        fully_shard(model, **options)
    return [name for name, _ in units]


class _Chunks:
    """torch.chunk(tensor, count, dim) padded with empty tensors to `count`, as FSDP2's
    `_chunk_with_empty` returns it, but each chunk made only when it is read. FSDP2 reads two
    of them (its own rank's and the 0th, the padded size), yet builds all `count`: one view
    per rank and parameter, so that sharding over 16,384 GPUs took minutes before the step
    began. Made on demand, a rank's cost no longer grows with the number of GPUs."""

    def __init__(self, tensor: torch.Tensor, count: int, dim: int) -> None:
        self.tensor, self.count, self.dim = tensor, count, dim
        length = tensor.size(dim)
        self.step = -(-length // count)  # torch.chunk's chunk length: ceil(length / count)

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int) -> torch.Tensor:
        if not 0 <= index < self.count:
            raise IndexError(index)
        length = self.tensor.size(self.dim)
        if length == 0:  # torch.chunk of an empty dimension: `count` empty chunks
            return self.tensor.narrow(self.dim, 0, 0)
        start = index * self.step
        if start >= length:  # past torch.chunk's last chunk: FSDP2's empty padding
            return self[0].new_empty(0)
        return self.tensor.narrow(self.dim, start, min(self.step, length - start))


@contextlib.contextmanager
def one_rank_at_a_time() -> Iterator[None]:
    """While fully_shard runs, FSDP2's two steps whose cost grows with the number of GPUs
    made once or on demand, restored afterwards: a parameter's chunks (_Chunks), and, on
    HSDP's 2-D mesh, the shard dimension's sub-mesh, which FSDP2 slices again for every
    parameter (each slice lays out all N ranks: 40 s for the tiny model over 2²⁰ GPUs),
    sliced once per mesh."""
    from torch.distributed.fsdp._fully_shard import _fsdp_param

    chunk_with_empty = _fsdp_param._chunk_with_empty
    init_shard_mesh = _fsdp_param.FSDPParam._init_shard_mesh
    sliced: dict[int, tuple[Any, Any]] = {}  # id(mesh) → (mesh, its shard sub-mesh)

    def shard_mesh(param: Any) -> Any:
        mesh = param.mesh_info.mesh
        if id(mesh) not in sliced:  # the mesh is kept too, so that its id is not reused
            sliced[id(mesh)] = (mesh, init_shard_mesh(param))
        return sliced[id(mesh)][1]

    _fsdp_param._chunk_with_empty = _Chunks
    _fsdp_param.FSDPParam._init_shard_mesh = shard_mesh
    try:
        yield
    finally:
        _fsdp_param._chunk_with_empty = chunk_with_empty
        _fsdp_param.FSDPParam._init_shard_mesh = init_shard_mesh


@contextlib.contextmanager
def fake_process_group(world_size: int) -> Iterator[None]:
    """Rank 0 of a `world_size`-rank job, alone in this process: PyTorch's fake process group
    (torch.testing._internal.distributed.fake_pg) accepts every collective and moves nothing,
    so each rank's memory is modelled without the other ranks."""
    # Importing the module registers the "fake" backend; it ships with PyTorch for its tests.
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if dist.is_initialized():
        raise ConfigError("this process already has a process group (torch.distributed is "
                          "initialised): an estimate over several GPUs runs on a fake one of "
                          "its own; estimate from a process without one")
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world_size)
    try:
        yield
    finally:
        dist.destroy_process_group()


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
        # on the parameters' device: a simulated run's are on its GPU (simulate/distributed.py)
        self.buffers = [torch.empty(sum(p.numel() for p in group), dtype=group[0].dtype,
                                    device=group[0].device) for group in groups]
        self._groups = groups
        self._where: dict[nn.Parameter, tuple[int, torch.Tensor]] = {}
        for index, (group, buffer) in enumerate(zip(groups, self.buffers)):
            views = buffer.split([p.numel() for p in group])
            self._where.update((p, (index, v)) for p, v in zip(group, views))
        self._pending = [len(group) for group in groups]
        self._handles = [p.register_post_accumulate_grad_hook(self._ready) for p in self._where]
        #: False under DDP's no_sync(): the gradients stay out of the buckets
        self.syncing = True

    def _ready(self, param: nn.Parameter) -> None:
        if not self.syncing:
            return
        index, view = self._where[param]
        view.copy_(param.grad.reshape(-1))
        view.div_(dist.get_world_size())
        self._pending[index] -= 1
        if self._pending[index] == 0:
            dist.all_reduce(self.buffers[index])
            for member in self._groups[index]:
                member.grad.copy_(self._where[member][1].view_as(member.grad))
            self._pending[index] = len(self._groups[index])
