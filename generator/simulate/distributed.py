"""`run --gpus N`: the script as rank 0 of an N-GPU job that torchrun started.

The script gets the environment torchrun gives rank 0 (RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT; nodes of up to 8 GPUs, as a
`--nproc-per-node 8` job has), and whatever process group it asks for
(`init_process_group("nccl")`, "gloo", "cuda:nccl,cpu:gloo", a store or an init_method) is
PyTorch's fake process group of N ranks, the one `estimate --gpus` runs on: every collective
is accepted and nothing moves, so each figure is rank 0's, one GPU's.

Two pieces of PyTorch cannot run on fake tensors as they are, and are replaced while the
script runs:
- classic `DistributedDataParallel`: its C++ reducer reads the parameters' data to check
  them across ranks. Its `__init__`, `forward` and `no_sync` are replaced on the class
  itself (so isinstance holds, as accelerate and Trainer check, however the name was
  imported): it keeps the module and the reducer's flat gradient buckets
  (measure/training/parallel.py's DDPBuckets, the estimate's own); `no_sync()` leaves the
  gradients out of the buckets, as DDP's does.
- A device mesh holds ranks, never data, but computes with a tensor of them (the rank's
  coordinates, its sub-meshes), which inside a FakeTensorMode would be fake and its values
  placeholders: DeviceMesh's methods and `init_device_mesh` run with the fake mode set
  aside (as the estimate's tensor_parallel.meshes_outside_fake_mode does for one of them).
- FSDP2's per-parameter chunking and HSDP's sub-mesh, whose cost grows with N, are made on
  demand (parallel.py's `one_rank_at_a_time`, the estimate's own).
- DTensor's random tracker (a random op on a DTensor: FSDP2's meta-device recipe initializing
  its shards, torchtitan's `init_weights`) moves the GPU generator's Philox offset around the
  op so that each shard draws its own numbers, through a state tensor it copies to the GPU
  below every mode that places tensors there. The simulated GPU draws no numbers (its tensors
  are fake): the op runs with no region around it, and the tracker syncs no state at its
  start. The tracker the script made is dropped on exit, with the process group.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed.device_mesh as device_mesh
import torch.distributed.tensor._random as dtensor_random
from torch._subclasses.fake_tensor import FakeTensor, unset_fake_temporarily
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from generator.errors import ConfigError
from generator.measure.training.parallel import DDPBuckets, one_rank_at_a_time

#: GPUs per node: torchrun's --nproc-per-node of a job on 8-GPU machines.
NODE_GPUS = 8


def environment(world_size: int) -> dict[str, str]:
    """What torchrun puts in rank 0's environment for a job of `world_size` processes."""
    local = min(world_size, NODE_GPUS)
    return {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": str(world_size),
            "LOCAL_WORLD_SIZE": str(local), "GROUP_RANK": "0", "ROLE_RANK": "0",
            "ROLE_WORLD_SIZE": str(world_size), "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": "29500", "TORCHELASTIC_RUN_ID": "simulated"}


def local_gpus(world_size: int) -> int:
    """The GPUs rank 0's machine has (torch.cuda.device_count()): its node's."""
    return min(world_size, NODE_GPUS)


def _ddp_init(self: Any, module: nn.Module, device_ids: Any = None, *_args: Any,
              process_group: Any = None, **_kwargs: Any) -> None:
    nn.Module.__init__(self)  # not DDP's own: its reducer reads parameter data
    self.module = module
    self.device_ids = device_ids
    self.process_group = process_group or dist.group.WORLD
    self._simulated_buckets = DDPBuckets(module)


def _ddp_forward(self: Any, *args: Any, **kwargs: Any) -> Any:
    return self.module(*args, **kwargs)


@contextlib.contextmanager
def _ddp_no_sync(self: Any) -> Iterator[None]:
    self._simulated_buckets.syncing = False
    try:
        yield
    finally:
        self._simulated_buckets.syncing = True


#: DistributedDataParallel's own methods while a job is simulated (see the module): the
#: class itself keeps its name and identity, however the script imported it.
_DDP_METHODS = {"__init__": _ddp_init, "forward": _ddp_forward, "no_sync": _ddp_no_sync}


def _fake_init_process_group(ranks: int, original: Any) -> Any:
    """init_process_group, whatever the script asks for, as the fake group of `ranks`."""
    # Importing the module registers the "fake" backend; it ships with PyTorch for its tests.
    from torch.testing._internal.distributed.fake_pg import FakeStore

    def init_process_group(backend: Any = None, init_method: Any = None, timeout: Any = None,
                           world_size: int = -1, rank: int = -1, store: Any = None,
                           **_others: Any) -> None:
        if world_size not in (-1, ranks) or rank not in (-1, 0):
            raise ConfigError(f"the script asks to be rank {rank} of {world_size}; it runs "
                              f"as rank 0 of --gpus {ranks}")
        options = {"timeout": timeout} if timeout is not None else {}
        original("fake", store=FakeStore(), rank=0, world_size=ranks, **options)

    return init_process_group


def _outside_fake_mode(function: Callable) -> Callable:
    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        with unset_fake_temporarily():
            return function(*args, **kwargs)
    return call


def _real_ranks(ranks: Any) -> Any:
    """A tensor of ranks made in the fake mode (init_device_mesh's, when the script imported
    it before the run: `torch.arange(n)`), as the real tensor it stands for: its value where
    the fake mode kept it (a constant, `torch.tensor([[0, 1], [2, 3]])`), else the ranks in
    order, as init_device_mesh lays them out."""
    if not isinstance(ranks, FakeTensor):
        return ranks
    if ranks.constant is not None:
        return ranks.constant.clone()
    with unset_fake_temporarily():
        return torch.arange(ranks.numel(), dtype=ranks.dtype).view(tuple(ranks.shape))


def _mesh_init(original: Callable) -> Callable:
    @functools.wraps(original)
    def __init__(self: Any, device_type: str, mesh: Any = None, *args: Any, **kwargs: Any) -> None:
        if "_rank_map" in kwargs:
            kwargs["_rank_map"] = _real_ranks(kwargs["_rank_map"])
        original(self, device_type, _real_ranks(mesh), *args, **kwargs)
    return __init__


@contextlib.contextmanager
def _no_random_region(self: Any, spec: Any, generator: Any = None) -> Iterator[None]:
    yield  # nothing is drawn on the simulated GPU: no offset to move (see the module)


def _tracker_init(original: Callable) -> Callable:
    @functools.wraps(original)
    def __init__(self: Any, device_mesh: Any, run_state_sync: bool = True) -> None:
        original(self, device_mesh, run_state_sync=False)  # no state to sync (see the module)
    return __init__


def _random_without_state() -> list[tuple[Any, str, Any]]:
    """(owner, name, what to set) for DTensor's random tracker (see the module)."""
    tracker = dtensor_random.OffsetBasedRNGTracker
    return [(tracker, "__init__", _tracker_init(tracker.__init__)),
            (tracker, "_distribute_region", _no_random_region)]


def _meshes_of_real_ranks() -> list[tuple[Any, str, Any]]:
    """(owner, name, what to set) for DeviceMesh's methods and init_device_mesh, each run
    with the fake mode set aside, its ranks real (see the module)."""
    mesh_class = device_mesh.DeviceMesh
    changes = [(device_mesh, "init_device_mesh", _outside_fake_mode(device_mesh.init_device_mesh)),
               (dist, "init_device_mesh", _outside_fake_mode(device_mesh.init_device_mesh))]
    for name, member in vars(mesh_class).items():
        if name == "__init__":
            changes.append((mesh_class, name, _outside_fake_mode(_mesh_init(member))))
        elif isinstance(member, staticmethod):
            changes.append((mesh_class, name, staticmethod(_outside_fake_mode(member.__func__))))
        elif callable(member) and name not in ("__hash__", "__eq__", "__repr__"):
            changes.append((mesh_class, name, _outside_fake_mode(member)))
    return changes


@contextlib.contextmanager
def rank_zero_of(world_size: int) -> Iterator[None]:
    """The block runs as rank 0 of `world_size` (see the module); everything put back on
    exit, the process group destroyed if the script left it, and DTensor's random tracker
    the one before."""
    if dist.is_initialized():
        raise ConfigError("this process already has a process group: a simulated job over "
                          "several GPUs runs on a fake one of its own")
    saved_env = {name: os.environ.get(name) for name in environment(world_size)}
    init = _fake_init_process_group(world_size, dist.init_process_group)
    changes = [(dist, "init_process_group", init),
               (dist.distributed_c10d, "init_process_group", init),
               *((DistributedDataParallel, name, method) for name, method in _DDP_METHODS.items()),
               *_meshes_of_real_ranks(), *_random_without_state()]
    before = [(owner, name, owner.__dict__[name]) for owner, name, _ in changes]
    tracker = dtensor_random._rng_tracker
    try:
        os.environ.update(environment(world_size))
        for owner, name, value in changes:
            setattr(owner, name, value)
        with one_rank_at_a_time():
            yield
    finally:
        for owner, name, value in before:
            setattr(owner, name, value)
        dtensor_random._rng_tracker = tracker  # the job's, like its process group
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if dist.is_initialized():
            dist.destroy_process_group()
