"""The CPU generator's state as a tensor: memory of the CPU's that no op makes.

`torch.get_rng_state()` copies the default CPU generator's state into a new ByteTensor of
5,056 bytes (at::CPUGeneratorImpl::get_state): the CPU allocator hands out its storage, but
no dispatched op makes it, so neither fake tensors nor the simulation's modes see it. A
checkpointed block keeps one for each call until its backward (torch.utils.checkpoint's
`preserve_rng_state`, on by default), and `torch.random.fork_rng` keeps one while its block
runs. On a real run of TRL's SFTTrainer on a tiny two-layer Llama those were 15,168 of the
CPU allocator's 3,047,600 bytes at its peak (three checkpointed calls: two layers and the
chunked loss).

Modelling the CPU (`counted`, entered by session.py), each state the script takes is
placed on the device as the storage it is, and freed when its last tensor goes. On a GPU
the state is host memory, as is `torch.cuda.get_rng_state()`'s (a CPU ByteTensor too): the
simulated GPU's memory holds neither.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

from generator.simulate.placement import DeviceStorages


@contextlib.contextmanager
def counted(storages: DeviceStorages) -> Iterator[None]:
    """`torch.get_rng_state` (and `torch.random.get_rng_state`, the same function, which
    torch.utils.checkpoint calls as `torch.get_rng_state`) whose state is in `storages`
    while it lives; both put back on exit."""
    original = torch.random.get_rng_state
    before = torch.get_rng_state

    def get_rng_state() -> torch.Tensor:
        state = original()
        storages.place(state)
        return state

    torch.get_rng_state = torch.random.get_rng_state = get_rng_state
    try:
        yield
    finally:
        torch.random.get_rng_state, torch.get_rng_state = original, before
