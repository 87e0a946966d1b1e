"""Measure the `sharding` study for real: one process per GPU under torchrun.

    torchrun --nproc-per-node 8 scripts/torchrun_sharding.py \\
        --model gpt2-small --batch-size 8 --seq-len 1024 [--precision amp-bf16] \\
        [--strategies fsdp2,ddp,fsdp2-mp] [--world-sizes 1,2,4,8] [--name NAME]
        [--results results] [--device cpu]

For each strategy and each GPU count k (default: 1, 2, 4, … up to the job's size), ranks
0 … k-1 run the training step of generator/measure/training/step.py in a process group of
their own (NCCL, the real `DistributedDataParallel`, the real `fully_shard`, sharded as the
estimate shards: generator/measure/training/parallel.apply_fsdp2); the other ranks wait. Each
row holds the tracker's breakdown on rank 0 and, as ground truth, `torch.cuda.max_memory_allocated` and
`max_memory_reserved`, the largest over the k ranks. DDP's buckets, which its C++ reducer
allocates, are labelled as communication buffers by a communication hook that then runs
DDP's default all-reduce (`allreduce_hook`).

Rank 0 writes results/studies/<gpu-name>/<name>.json in the form the estimate writes (study
kind `sharding`, backend `cuda`), which the scale page sets beside the estimate. A step that
runs out of memory is a row with `error: "out_of_memory"` (every rank of a data-parallel
step holds the same, so all of them run out together).

`--device cpu` runs the same on CPU processes with gloo (backend `cpu`, no allocator ground
truth): a dry run of this script on any machine, which the tests use.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generator.errors import ConfigError, GeneratorError  # noqa: E402


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--batch-size", type=int, required=True)
    parser.add_argument("--seq-len", type=int, required=True)
    parser.add_argument("--precision", default="amp-bf16")
    parser.add_argument("--optimizer", default="adamw")
    parser.add_argument("--attention", default="sdpa")
    parser.add_argument("--strategies", default="fsdp2,ddp,fsdp2-mp",
                        help="fsdp2-mp (FSDP2's bf16 MixedPrecisionPolicy) needs amp-bf16")
    parser.add_argument("--world-sizes", default="", help="default: 1, 2, 4, … up to the job")
    parser.add_argument("--name", default="", help="default: sharding-<model>")
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    return parser.parse_args(argv)


def check_machine(device: str) -> tuple[int, int, int]:
    """(rank, world size, local rank) of this torchrun process, or a one-line ConfigError."""
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        raise ConfigError("scripts/torchrun_sharding.py measures on CUDA GPUs and this machine "
                          "has none (torch.cuda.is_available() is False); estimate instead: "
                          "the `sharding` study of the built-in suite")
    missing = [v for v in ("RANK", "WORLD_SIZE", "LOCAL_RANK") if v not in os.environ]
    if missing:
        ranks = torch.cuda.device_count() if device == "cuda" else 2  # CPU: any number
        raise ConfigError(f"run under torchrun, e.g. `torchrun --nproc-per-node "
                          f"{ranks} scripts/torchrun_sharding.py …` "
                          f"({', '.join(missing)} not set)")
    local = int(os.environ["LOCAL_RANK"])
    if device == "cuda" and local >= torch.cuda.device_count():
        raise ConfigError(f"local rank {local} has no GPU: this node has "
                          f"{torch.cuda.device_count()}; lower --nproc-per-node")
    return int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), local


def params_of(args: argparse.Namespace, world: int) -> dict:
    strategies = [s for s in args.strategies.split(",") if s]
    sizes = [int(n) for n in args.world_sizes.split(",") if n] or \
        [2**i for i in range(world.bit_length()) if 2**i <= world]
    if max(sizes) > world:
        raise ConfigError(f"--world-sizes goes up to {max(sizes)} GPUs but the job has {world}")
    return {"model": args.model, "batch_size": args.batch_size, "seq_len": args.seq_len,
            "precision": args.precision, "optimizer": args.optimizer,
            "attention": args.attention, "world_sizes": {s: sizes for s in strategies},
            "device": args.device}


def measure(spec, p: dict, strategy: str, group, local: int) -> dict:
    """One step on this rank within `group`; on CUDA the ground truth is reduced over the
    group."""
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import DeviceMesh
    from torch.nn.parallel import DistributedDataParallel

    from generator.measure.studies import sharding
    from generator.measure.tracking.sharded_tracker import ShardedMemoryTracker, rank_figures
    from generator.measure.tracking.tracker import CUDA_BLOCK_BYTES
    from generator.measure.training.parallel import apply_fsdp2
    from generator.measure.training.precision import make_optimizer
    from generator.measure.training.step import Trainer, tracked_step
    from generator.measure.training.workload import Workload

    cuda = p["device"] == "cuda"
    device = torch.device("cuda", local) if cuda else torch.device("cpu")
    k = dist.get_world_size(group)
    tracking: list = []  # the tracker while the measured step runs
    try:
        with device:
            workload = spec.build(attention=p["attention"])
        inner = workload.model
        how = sharding.regime(strategy, p["precision"])  # the estimate's regime, shared
        step_precision, cast = how["step_precision"], how["cast_category"]
        if strategy != "ddp":
            apply_fsdp2(inner, DeviceMesh.from_group(group, device.type),
                        bf16_params=how["policy"])
        else:
            ddp = DistributedDataParallel(inner, device_ids=[local] if cuda else None,
                                          process_group=group)
            ddp.register_comm_hook(group, _labelled_allreduce(tracking))
            workload = Workload(model=ddp, make_batch=workload.make_batch,
                                loss_fn=workload.loss_fn)
        optimizer = make_optimizer(p["optimizer"], inner.parameters(), impl="auto",
                                   modelled_device=device.type)
        trainer = Trainer(workload, p["batch_size"], p["seq_len"], step_precision, device,
                          optimizer, None)
        warmups = trainer.warm_up()
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        tracker = ShardedMemoryTracker(inner, optimizer,
                                       round_bytes=CUDA_BLOCK_BYTES if cuda else 1,
                                       device_type=device.type, cast_category=cast)
        tracking.append(tracker)  # the comm hook fires only inside the step
        report = tracked_step(trainer, tracker)
        tracking.clear()
        row = {**rank_figures(report), "warmup_steps": warmups,
               "parameter_count": sum(q.numel() for q in inner.parameters()),
               "ground_truth": _ground_truth(group, device) if cuda else None}
    except torch.OutOfMemoryError:
        row = {"error": "out_of_memory"}
    return {"strategy": strategy, "world_size": k, "regime": how["regime"], **row}


def _labelled_allreduce(tracking: list):
    """A DDP communication hook: DDP's default all-reduce, after labelling the bucket for the
    tracker in `tracking` (if a step is being measured)."""
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

    def labelled_allreduce_hook(group, bucket):
        for tracker in tracking:
            tracker.label(bucket.buffer(), "comm_buffers")
        return allreduce_hook(group, bucket)

    return labelled_allreduce_hook


def _ground_truth(group, device) -> dict:
    """The caching allocator's peaks, the largest over the ranks of `group`."""
    import torch
    import torch.distributed as dist

    torch.cuda.synchronize()
    truth = torch.tensor([torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()],
                         device=device)
    dist.all_reduce(truth, op=dist.ReduceOp.MAX, group=group)
    return {"source": "torch.cuda.max_memory_allocated, largest rank",
            "peak_bytes": int(truth[0]), "max_reserved_bytes": int(truth[1])}


def main(argv: list[str]) -> int:
    args = parse(argv)
    try:
        rank, world, local = check_machine(args.device)
        from generator.measure.studies import Study, sharding

        params = params_of(args, world)
        study = Study(kind="sharding", name=args.name or f"sharding-{args.model}",
                      backend=args.device, params=params)
    except GeneratorError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    import torch
    import torch.distributed as dist

    from generator import results
    from generator.measure.environment import machine_id
    from generator.measure.models import resolve_model
    from generator.measure.run import study_result
    from generator.results.notes import note

    cuda = args.device == "cuda"
    if cuda:
        torch.cuda.set_device(local)
    dist.init_process_group("nccl" if cuda else "gloo")
    p, spec = sharding.settings(params), resolve_model(args.model)
    rows = []
    for strategy, k in sharding.plan(p):
        group = dist.new_group(list(range(k)))  # every rank takes part in creating it
        if rank < k:
            rows.append(measure(spec, p, strategy, group, local))
        gc.collect()
        if cuda:
            torch.cuda.empty_cache()
        dist.barrier()
    if rank == 0:
        count = next((r["parameter_count"] for r in rows if "parameter_count" in r), None)
        ran = (note("sharding_torchrun_cuda", processes=world, gpu=torch.cuda.get_device_name())
               if cuda else note("sharding_torchrun_cpu", processes=world))
        data = {"model": args.model, "parameter_count": count, "settings": p,
                "architecture": spec.architecture, "rows": rows, "notes": [ran]}
        result = study_result(study, data)
        path = results.study_path(args.results, machine_id(args.device), study.name)
        results.save(path, result)
        print(f"wrote {path}")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
