"""`run --gpus N` (generator/simulate/distributed.py): a script as rank 0 of an N-GPU job,
as torchrun starts it, on PyTorch's fake process group; DistributedDataParallel, device
meshes and FSDP2's resized buffers as they behave on fake tensors; everything put back.
Tiny tensors, fake: nothing is allocated."""

from __future__ import annotations

import os

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import generator as g
from generator import gpus
from generator.errors import ConfigError
from generator.simulate.distributed import NODE_GPUS, environment, local_gpus

MIB = 2**20


def _job_state() -> dict:
    import torch.distributed.device_mesh as device_mesh

    return {"env": {name: os.environ.get(name) for name in environment(16)},
            "init": (dist.init_process_group, dist.distributed_c10d.init_process_group),
            "ddp": (nn.parallel.DistributedDataParallel,
                    nn.parallel.distributed.DistributedDataParallel),
            "mesh": (device_mesh.init_device_mesh, dict(vars(device_mesh.DeviceMesh))),
            "resize": torch.UntypedStorage.resize_, "initialized": dist.is_initialized()}


def test_torchrun_s_environment_for_rank_zero() -> None:
    env = environment(16)
    assert (env["RANK"], env["LOCAL_RANK"], env["WORLD_SIZE"]) == ("0", "0", "16")
    assert env["LOCAL_WORLD_SIZE"] == str(NODE_GPUS) == str(local_gpus(16))
    assert environment(2)["LOCAL_WORLD_SIZE"] == "2" and local_gpus(2) == 2


def test_the_script_s_process_group_is_a_fake_one_of_n_ranks() -> None:
    before = _job_state()
    with g.simulated_gpu("H100", gpus=16):
        assert os.environ["WORLD_SIZE"] == "16" and torch.cuda.device_count() == NODE_GPUS
        dist.init_process_group("nccl")  # whatever it asks for
        assert (dist.get_rank(), dist.get_world_size()) == (0, 16)
        x = torch.ones(4, device="cuda")
        dist.all_reduce(x)  # accepted, nothing moves
    assert _job_state() == before  # destroyed, though the script left it


def test_a_script_that_asks_to_be_another_rank_is_refused() -> None:
    with pytest.raises(ConfigError, match="rank 3 of 8; it runs as rank 0 of --gpus 4"):
        with g.simulated_gpu("H100", gpus=4):
            dist.init_process_group("gloo", rank=3, world_size=8)
    assert not dist.is_initialized()


def test_ddp_is_still_ddp_and_keeps_its_buckets_on_the_gpu() -> None:
    with g.simulated_gpu("H100", gpus=2) as gpu:
        dist.init_process_group("nccl")
        model = nn.Linear(1024, 1024, bias=False).cuda()  # 4 MiB of weights
        ddp = DistributedDataParallel(model, device_ids=[0])
        assert isinstance(ddp, DistributedDataParallel) and ddp.module is model
        # the weights and a bucket as large as them, allocated with the model
        assert torch.cuda.memory_allocated() == 2 * 4 * MIB
        with ddp.no_sync():
            ddp(torch.ones(8, 1024, device="cuda")).sum().backward()
        dist.destroy_process_group()
    assert gpu.report().gpus == 2


def test_a_device_mesh_knows_its_ranks_and_fsdp2_s_freed_buffers_are_freed() -> None:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    with g.simulated_gpu("H100", gpus=4):
        dist.init_process_group("nccl")
        mesh = init_device_mesh("cuda", (2, 2), mesh_dim_names=("dp", "tp"))
        assert list(mesh.get_coordinate()) == [0, 0] and mesh["tp"].size() == 2
        model = fully_shard(nn.Linear(1024, 1024, bias=False).cuda(), mesh=mesh["dp"])
        x = torch.ones(8, 1024, device="cuda")
        before = torch.cuda.memory_allocated()
        model(x).sum().backward()
        # the gathered 4 MiB weight was resized away after backward: what is left is its
        # gradient's 2 MiB shard, and the cuBLAS workspaces of forward's and backward's
        # threads, which the first matrix products take
        workspaces = 2 * gpus.find("H100").overheads.cublas_workspace_bytes
        assert torch.cuda.memory_allocated() - before == workspaces + 2 * MIB


@pytest.mark.parametrize("gpus", [0, -1, 1.5, True])
def test_gpus_must_be_a_positive_count(gpus: object) -> None:
    with pytest.raises(ConfigError, match="gpus must be a positive number"):
        g.simulated_gpu("H100", gpus=gpus)


def test_a_dtensor_s_local_shards_are_on_the_gpu() -> None:
    """A DTensor's op runs its local ops below the simulation's dispatch mode: its outputs
    are placed by their local shards (tensor parallelism's activations and gradients)."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import ColwiseParallel, parallelize_module

    with g.simulated_gpu("H100", gpus=2):
        dist.init_process_group("nccl")
        mesh = init_device_mesh("cuda", (2,))
        model = parallelize_module(nn.Linear(1024, 1024, bias=False).cuda(), mesh,
                                   ColwiseParallel())
        out = model(torch.ones(8, 1024, device="cuda"))
        assert out.is_cuda and out.shape == (8, 512)
        out.sum().backward()
        assert model.weight.grad.to_local().is_cuda


@pytest.mark.parametrize("init", [nn.init.normal_, nn.init.trunc_normal_])
@pytest.mark.parametrize("seeded", [False, True])
def test_fsdp2_s_meta_device_recipe_initializes_its_sharded_parameters(seeded: bool,
                                                                      init) -> None:
    """FSDP2's recipe (fully_shard on the meta device, to_empty on the GPU, then init) draws
    random numbers into DTensor shards: DTensor's random tracker, made lazily or by
    torch.distributed.tensor's manual_seed (torchtitan's), runs on the simulated GPU; and
    trunc_normal_'s `mask.any()` of a DTensor is read as a placeholder (nothing out of
    bounds), as a fake tensor's is."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor import DTensor, _random

    before = (_random._rng_tracker, dict(vars(_random.OffsetBasedRNGTracker)))
    with g.simulated_gpu("H100", gpus=2):
        dist.init_process_group("nccl")
        mesh = init_device_mesh("cuda", (2,))
        if seeded:
            _random.manual_seed(0, mesh)
        with torch.device("meta"):
            model = nn.Linear(1024, 1024, bias=False)
        fully_shard(model, mesh=mesh)
        model.to_empty(device="cuda")
        init(model.weight, std=0.02)
        assert isinstance(model.weight, DTensor) and model.weight.to_local().is_cuda
        assert torch.cuda.memory_allocated() == 2 * MIB  # the 4 MiB weight's shard
    assert (_random._rng_tracker, dict(vars(_random.OffsetBasedRNGTracker))) == before
