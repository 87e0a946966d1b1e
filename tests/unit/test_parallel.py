"""A step over several GPUs (measure/training/parallel.py): the options and their refusals,
the mesh of each strategy, and rank 0's figures on the tiny LLaMA modelling the CPU (bytes
exact: each category is what the strategy leaves a rank), modelling CUDA (NCCL's
communicators beside the CUDA context), the fewest GPUs, and the command's refusals.
Estimates of llama-tiny: fake tensors, a few seconds each."""

from __future__ import annotations

import functools
import math

import pytest
import torch.distributed as dist

import generator as g
from generator.cli.estimate import per_gpu
from generator.errors import ConfigError
from generator.experiment import Experiment
from generator.measure.models import resolve_model
from generator.measure.tracking.tracker import CUDA_BLOCK_BYTES, round_up
from generator.measure.training.cpu_offload import pinned_bytes
from generator.measure.training.parallel import mesh_shape
from generator.gpus import communicator_bytes
from generator.plan.search import GPU_COUNTS, fewest_fitting

TINY = {"model": "llama-tiny", "batch_size": 2, "seq_len": 16}
FLOAT = 4


@pytest.mark.parametrize("options, words", [
    ({"gpus": 0, "parallel": "fsdp2"}, "gpus must be a positive integer, got 0"),
    ({"gpus": 8}, "gpus 8 needs a strategy"),
    ({"gpus": 6, "parallel": "hsdp", "shard_size": 4}, "shard_size 4 does not divide gpus 6"),
    ({"gpus": 8, "parallel": "ddp", "tp_size": 2}, "tp_size is the group size of parallel "
                                                   "fsdp2-tp, not of 'ddp'"),
    ({"gpus": 2, "parallel": "ddp", "reshard_after_forward": False},
     "reshard_after_forward is FSDP2's"),
    ({"gpus": 2, "parallel": "fsdp2", "precision": "bf16", "fsdp_mixed_precision": "bf16/fp32"},
     "makes them 16-bit already"),
    ({"gpus": 2, "parallel": "ddp", "fsdp_mixed_precision": "bf16/fp32"},
     "fsdp_mixed_precision is FSDP2's policy"),
    ({"gpus": 2, "parallel": "fsdp2", "backend": "cpu"}, "it needs the estimate backend"),
    ({"gpus": 2, "parallel": "tp", "lora_rank": 4}, "LoRA is not modelled with tensor "
                                                   "parallelism"),
    ({"gpus": 2**21, "parallel": "fsdp2"}, "more than the 1,048,576 GPUs modelled"),
    ({"gpus": 2, "parallel": "ddp", "cpu_offload": True}, "cpu_offload is FSDP2's"),
    ({"gpus": 2, "parallel": "fsdp2", "cpu_offload": True, "device": "cpu"},
     "a step modelled on the CPU holds them there already"),
])
def test_each_wrong_combination_is_refused_in_one_line(options: dict, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        Experiment(**TINY, **options)


def test_each_strategy_has_its_mesh() -> None:
    def shape(**options) -> dict[str, int]:
        return mesh_shape(Experiment(**TINY, **options))

    assert shape(gpus=8, parallel="fsdp2") == {"dp": 8}
    assert shape(gpus=16, parallel="hsdp") == {"replicate": 2, "shard": 8}  # a node each
    assert shape(gpus=16, parallel="hsdp", shard_size=4) == {"replicate": 4, "shard": 4}
    assert shape(gpus=4, parallel="fsdp2-tp") == {"dp": 1, "tp": 4}
    assert shape(gpus=16, parallel="fsdp2-tp", tp_size=2) == {"dp": 8, "tp": 2}
    assert shape(gpus=4, parallel="tp") == {"tp": 4}
    plain = Experiment(**TINY)
    assert Experiment(**TINY, gpus=8, parallel="fsdp2").key == plain.key + "-8gpus-fsdp2"


def parameter_bytes(shard: int = 1) -> int:
    """llama-tiny's fp32 parameters, each split on its first dimension over `shard` ranks
    as FSDP2 splits it: padded to equal chunks."""
    model = resolve_model("llama-tiny").build().model
    return sum(math.ceil(p.shape[0] / shard) * (p.numel() // p.shape[0]) * FLOAT
               for p in model.parameters())


@functools.cache  # several checks read the same step: estimated once
def on_cpu(**options) -> g.Estimate:
    return g.estimate("llama-tiny", batch_size=2, seq_len=16, device="cpu", **options)


def test_fsdp2_leaves_a_rank_its_padded_shards_and_the_gathered_root() -> None:
    one = on_cpu()
    rank = on_cpu(gpus=4, parallel="fsdp2")
    assert rank.category_max["parameters"] == parameter_bytes(4)
    assert rank.category_max["gradients"] == parameter_bytes(4)
    assert rank.category_max["optimizer_state"] < one.category_max["optimizer_state"] / 3
    assert rank.category_max["comm_buffers"] > 0  # blocks' weights gathered for use
    assert rank.peak_bytes < one.peak_bytes
    layout = rank.to_dict()["parallel"]
    assert layout == {"strategy": "fsdp2", "gpus": 4, "mesh": {"dp": 4}, "rank": 0,
                      "fsdp_blocks": 2, "host_bytes": None, "batch_per_rank": 2,
                      "data_parallel_ranks": 4}
    assert not dist.is_initialized()  # the fake process group is gone with the estimate


def test_cpu_offload_leaves_the_gpu_what_it_gathers_and_computes() -> None:
    kept = g.estimate(**TINY, gpus=4, parallel="fsdp2")
    offloaded = g.estimate(**TINY, gpus=4, parallel="fsdp2", cpu_offload=True)
    buffers = sum(b.numel() * b.element_size()
                  for b in resolve_model("llama-tiny").build().model.buffers())
    assert offloaded.category_max["parameters"] == round_up(buffers, CUDA_BLOCK_BYTES)
    assert offloaded.category_max["optimizer_state"] == 0
    assert offloaded.category_max["activations"] == kept.category_max["activations"]
    # the shards copied to the GPU to be gathered come on top of the gathered weights
    assert offloaded.category_max["comm_buffers"] > kept.category_max["comm_buffers"]
    assert offloaded.peak_bytes < kept.peak_bytes
    # the host holds each parameter's and gradient's shard pinned (rounded up to a power of
    # two), AdamW's two moments and its step count
    shards = [math.ceil(p.shape[0] / 4) * (p.numel() // p.shape[0]) * FLOAT
              for p in resolve_model("llama-tiny").build().model.parameters()]
    host = sum(2 * pinned_bytes(shard) + 2 * shard + FLOAT for shard in shards)
    assert offloaded.to_dict()["parallel"]["host_bytes"] == host
    assert per_gpu(offloaded) == {  # the command's JSON
        "gpus": 4, "estimated_rank": 0, "peak_bytes": offloaded.peak_bytes,
        "allocated_bytes": offloaded.allocated_bytes,
        "reserved_bytes": offloaded.reserved_bytes,
        "nvidia_smi_bytes": list(offloaded.nvidia_smi_bytes), "host_bytes": host}
    assert any(n.id == "parallel_offload" for n in offloaded.notes)


def test_ddp_keeps_a_replica_and_buckets_of_its_gradients() -> None:
    rank = on_cpu(gpus=4, parallel="ddp")
    assert rank.category_max["parameters"] == parameter_bytes()
    assert rank.category_max["comm_buffers"] == parameter_bytes()  # the buckets hold every grad
    assert rank.peak_bytes > on_cpu().peak_bytes


def test_tensor_parallelism_splits_the_blocks_and_refuses_what_does_not_divide() -> None:
    rank = on_cpu(gpus=2, parallel="tp")
    assert parameter_bytes(2) < rank.category_max["parameters"] < parameter_bytes()
    assert any(n.id == "parallel_tp_plan_megatron" for n in rank.notes)
    with pytest.raises(ConfigError, match="4 attention heads do not split evenly over 8 "
                                          "ranks"):
        on_cpu(gpus=8, parallel="tp")


def test_a_cuda_rank_counts_nccls_communicators_with_the_context() -> None:
    rank = g.estimate("llama-tiny", batch_size=2, seq_len=16, gpus=16, parallel="hsdp")
    allocator = rank.to_dict()["allocator"]
    assert allocator["communicator_bytes"] == list(communicator_bytes(2))  # replicate, shard
    low, high = rank.nvidia_smi_bytes
    context = g.estimate("llama-tiny", batch_size=2, seq_len=16).to_dict()["allocator"]
    assert high - low == (context["context_bytes"][1] - context["context_bytes"][0]
                          + communicator_bytes(2)[1] - communicator_bytes(2)[0])
    # judged on another GPU: that GPU's context, the same communicators
    verdict = rank.fits("RTX 4090")
    assert verdict.needed_bytes >= rank.reserved_bytes + communicator_bytes(2)[1]


def test_the_fewest_gpus_are_the_edge_of_a_tail() -> None:
    asked: list[int] = []

    def fits(count: int) -> bool:
        asked.append(count)
        return count >= 24

    assert fewest_fitting(fits) == 32
    assert len(asked) <= math.ceil(math.log2(len(GPU_COUNTS))) + 1
    assert fewest_fitting(lambda n: False) == 0
    assert fewest_fitting(lambda n: None) == 0  # the model cannot be split at all
    assert fewest_fitting(lambda n: True) == 1


def test_fewest_gpus_names_a_count_that_fits_beside_half_that_does_not() -> None:
    rank = on_cpu(gpus=4, parallel="fsdp2")
    found = g.fewest_gpus("llama-tiny", batch_size=2, seq_len=16, parallel="fsdp2",
                          memory=rank.peak_bytes, device="cpu")
    assert found.gpus and found.tried[found.gpus].fits
    assert not found.tried[found.gpus // 2].fits
    assert found.estimate.experiment.gpus == found.gpus
    tp = g.fewest_gpus("llama-tiny", batch_size=2, seq_len=16, parallel="tp", memory=1,
                       device="cpu")
    assert tp.gpus == 0 and any(isinstance(v, str) and "heads" in v for v in tp.tried.values())
    with pytest.raises(ConfigError, match="needs a strategy"):
        g.fewest_gpus("llama-tiny", batch_size=2, seq_len=16, parallel="none", memory=1)


@pytest.mark.parametrize("args, words", [
    (["--fewest-gpus", "--gpu", "H100"], "--fewest-gpus needs --parallel"),
    (["--fewest-gpus", "--parallel", "fsdp2"], "--fewest-gpus needs --gpu NAME"),
    (["--fewest-gpus", "--gpu", "H100", "--parallel", "fsdp2", "--gpus", "8"],
     "give no --gpus"),
    (["--fewest-gpus", "--largest-batch", "--gpu", "H100"], "are 2 questions"),
    (["--gpus", "0", "--parallel", "ddp"], "gpus must be a positive integer"),
    (["--gpus", "2", "--parallel", "ddp", "--cpu-offload"], "cpu_offload is FSDP2's"),
])
def test_the_command_refuses_in_one_line(cli, tmp_path, args: list, words: str) -> None:
    run = cli(["estimate", "llama-tiny", "-b", "2", "-s", "16", *args], tmp_path)
    assert run.returncode == 2
    assert words in run.stderr and run.stdout == ""


@pytest.mark.parametrize("shape, count, dim", [
    ((5, 3), 4, 0), ((3, 2), 8, 0), ((10,), 3, 0), ((7, 7), 7, 0), ((0, 4), 4, 0),
    ((4, 6), 3, 1), ((1,), 1, 0), ((2, 5), 2**20, 0)])
def test_chunks_made_on_demand_are_fsdp2s_own(shape: tuple, count: int, dim: int) -> None:
    """FSDP2's chunks of a parameter, each made when read (parallel._Chunks), are the very
    views its `_chunk_with_empty` makes all of: the same sizes, strides and offsets."""
    import torch
    from torch.distributed.fsdp._fully_shard._fsdp_common import _chunk_with_empty

    from generator.measure.training.parallel import _Chunks

    tensor = torch.arange(math.prod(shape), dtype=torch.float32).reshape(shape)
    lazy = _Chunks(tensor, count, dim)
    assert len(lazy) == count
    some = sorted({0, 1 % count, count // 2, count - 1})
    whole = _chunk_with_empty(tensor, count, dim) if count < 64 else None
    for index in (range(count) if whole else some):
        chunk = lazy[index]
        if whole:
            assert (chunk.shape, chunk.stride(), chunk.storage_offset()) == (
                whole[index].shape, whole[index].stride(), whole[index].storage_offset())
    if count > shape[dim]:  # more ranks than rows: the last ranks' shards are empty
        assert lazy[count - 1].numel() == 0
    with pytest.raises(IndexError):
        lazy[count]


def test_sharding_over_a_million_gpus_costs_a_rank_what_eight_do() -> None:
    """fully_shard over 2²⁰ ranks makes as many tensors as over 8 (it made one view per rank
    and parameter: minutes for 16,384 GPUs); on HSDP's 2-D mesh the shard dimension is sliced
    once, not once a parameter (each slice lays out every rank); FSDP2 is as it was after."""
    from torch import nn
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp._fully_shard import _fsdp_param
    from torch.utils._python_dispatch import TorchDispatchMode

    from generator.measure.training.parallel import apply_fsdp2, fake_process_group

    class Count(TorchDispatchMode):
        ops = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Count.ops += 1
            return func(*args, **(kwargs or {}))

    def shard(gpus: int, shape: tuple[int, ...]) -> tuple[int, int]:
        """Tensor ops fully_shard made, and the shard meshes its parameters hold."""
        model = nn.Sequential(nn.ModuleList([nn.Linear(16, 16) for _ in range(3)]))
        Count.ops = 0
        with fake_process_group(gpus):
            mesh = init_device_mesh("cpu", shape, mesh_dim_names=("replicate", "shard")[
                -len(shape):])
            with Count():
                apply_fsdp2(model, mesh)
        params = [p for m in model.modules() if hasattr(m, "_get_fsdp_state")
                  for group in [m._get_fsdp_state()._fsdp_param_group] if group
                  for p in group.fsdp_params]
        return Count.ops, len({id(p._shard_mesh) for p in params})

    before = (_fsdp_param._chunk_with_empty, _fsdp_param.FSDPParam._init_shard_mesh)
    assert shard(2**20, (2**20,)) == shard(8, (8,))
    assert shard(2**20, (2**17, 8))[1] == 1
    assert (_fsdp_param._chunk_with_empty, _fsdp_param.FSDPParam._init_shard_mesh) == before


def test_a_fake_2d_mesh_makes_only_rank_zeros_groups(monkeypatch) -> None:
    """On the fake process group a 2-D mesh (HSDP, FSDP2 × TP) is rank 0's: the same ranks
    and the same groups of rank 0 as init_device_mesh gives, made with two new_group calls
    however many GPUs (init_device_mesh made one per row and column: 40 s over 2²⁰)."""
    from torch.distributed.device_mesh import init_device_mesh

    from generator.measure.training.parallel import _rank_zero_mesh, fake_process_group

    def seen(mesh) -> tuple:
        return (mesh.mesh.tolist(), mesh.mesh_dim_names,
                [dist.get_process_group_ranks(mesh.get_group(d)) for d in range(2)],
                [dist.get_process_group_ranks(mesh[name].get_group()) for name in ("dp", "tp")])

    shape = {"dp": 4, "tp": 2}
    with fake_process_group(8):
        assert seen(_rank_zero_mesh(shape)) == seen(
            init_device_mesh("cpu", (4, 2), mesh_dim_names=("dp", "tp")))
    made = []
    new_group = dist.new_group
    monkeypatch.setattr(dist, "new_group", lambda ranks: made.append(len(ranks))
                        or new_group(ranks))
    with fake_process_group(2**20):
        mesh = _rank_zero_mesh({"replicate": 2**17, "shard": 8})
        assert mesh["shard"].size() == 8 and mesh["replicate"].size() == 2**17
    assert made == [2**17, 8]
