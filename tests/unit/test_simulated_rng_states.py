"""What a real run's CPU allocator holds that no op makes, and what its profiler cannot see
(the two causes of TRL's SFTTrainer's gap, tests/slow/test_run_trl.py):

- the CPU generator's state, which `torch.get_rng_state()` copies into a tensor of its own
  and a checkpointed block keeps until its backward: the simulation of the CPU counts it
  (simulate/rng_states.py), as the allocator does, and a simulated GPU does not (host
  memory);
- an allocation on a thread the profiler does not profile (transformers' pool of loading
  threads): missing from a real run's peak, which is why a real run held against the
  simulation loads a checkpoint on the script's thread (pretrained.ON_THE_SCRIPTS_THREAD)."""

from __future__ import annotations

import os
import threading

import torch
from torch.profiler import ProfilerActivity, profile, record_function
from torch.utils.checkpoint import checkpoint

import generator as g
from generator.measure import quiet_profiler
from generator.measure.backends.cpu import allocator_peak_bytes
from generator.simulate.pretrained import ON_THE_SCRIPTS_THREAD, pretrained_offline

STATE_BYTES = torch.get_rng_state().nbytes  # 5,056 on this PyTorch
WINDOW = "test::window"


def _checkpointed_step() -> None:
    """Two checkpointed blocks, forward and backward: float32 throughout, sizes that no
    kernel's own buffer depends on."""
    x = torch.ones(32, 32, requires_grad=True)
    y = checkpoint(torch.sin, x, use_reentrant=False)
    z = checkpoint(torch.cos, y, use_reentrant=False)
    z.sum().backward()


def _real_peak(step) -> int:
    with quiet_profiler(), profile(activities=[ProfilerActivity.CPU],
                                   profile_memory=True) as prof:
        with record_function(WINDOW):
            step()
    return allocator_peak_bytes(prof, WINDOW)


def test_a_state_kept_is_the_cpus_while_it_lives_and_not_a_gpus() -> None:
    with g.simulated_gpu(device="cpu") as cpu:
        state = torch.get_rng_state()
        held = cpu.memory.allocated_bytes
        del state
        assert (held, cpu.memory.allocated_bytes) == (STATE_BYTES, 0)
    with g.simulated_gpu("4090") as gpu:
        torch.random.get_rng_state()
        assert gpu.memory.allocated_bytes == 0
    assert torch.get_rng_state is torch.random.get_rng_state  # put back as it was
    assert torch.get_rng_state.__module__ == "torch.random"


def test_checkpointed_blocks_against_the_cpu_allocator() -> None:
    real = _real_peak(_checkpointed_step)
    with g.simulated_gpu(device="cpu") as cpu:
        _checkpointed_step()
    assert cpu.report().allocated_bytes == real  # each block's state counted, as the allocator does


def test_the_profiler_misses_a_threads_allocation_so_loading_stays_on_the_scripts() -> None:
    kept = []

    def on_a_thread() -> None:
        worker = threading.Thread(
            target=lambda: kept.append(torch.empty(10**6, dtype=torch.uint8)))
        worker.start()
        worker.join()
        kept.append(torch.empty(1000, dtype=torch.uint8))

    assert _real_peak(on_a_thread) == 1000  # the thread's million bytes are not in it
    before = {name: os.environ.get(name) for name in ON_THE_SCRIPTS_THREAD}
    with pretrained_offline():  # the simulation loads a checkpoint on the script's thread
        assert all(os.environ.get(k) == v for k, v in ON_THE_SCRIPTS_THREAD.items())
    assert {name: os.environ.get(name) for name in ON_THE_SCRIPTS_THREAD} == before
