"""A training loop over several GPUs as torchrun runs it: each process is one rank, picks
its GPU by LOCAL_RANK, and shares the model out with DDP, FSDP2 or tensor parallelism.
Nothing in it knows about this tool.

    torchrun --nproc-per-node 2 generator/examples/parallel_loop.py --strategy fsdp2
    python -m generator run --gpus 8 generator/examples/parallel_loop.py --strategy fsdp2
"""

import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                               parallelize_module)
from torch.nn.parallel import DistributedDataParallel

from generator.examples.plain_loop import TinyLM


def shared_out(model: nn.Module, strategy: str, device: torch.device) -> nn.Module:
    if strategy == "ddp":
        return DistributedDataParallel(model, device_ids=[device] if device.type == "cuda"
                                       else None)
    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    if strategy == "fsdp2":
        for block in model.blocks:
            fully_shard(block, mesh=mesh)
        return fully_shard(model, mesh=mesh)
    for block in model.blocks:  # tensor parallelism: the MLP split by columns, then rows
        parallelize_module(block.mlp, mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strategy", choices=("ddp", "fsdp2", "tp"), default="ddp")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()

    cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if cuda else "gloo")
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    torch.manual_seed(0)
    vocab = 1000
    model = TinyLM(vocab, width=128, layers=2, heads=4, seq_len=args.seq_len).to(device)
    model = shared_out(model, args.strategy, device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    for step in range(args.steps):
        tokens = torch.randint(0, vocab, (args.batch_size, args.seq_len + 1), device=device)
        logits = model(tokens[:, :-1])
        loss = loss_fn(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if dist.get_rank() == 0:
            print(f"step {step}: loss {loss.item():.4f}")
    if cuda and dist.get_rank() == 0:
        print(f"max memory allocated: {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
