"""One rank of a user's own script for real under torchrun on this CPU (gloo), its CPU
allocator's peak read from the profiler's memory events over the whole script, with the
frees gloo's worker threads make put back (generator/cli/torchrun_step.py's gloo_frees):
the ground truth for `run --device cpu --gpus N SCRIPT`.

    torchrun --standalone --nproc-per-node N tests/slow/torchrun_script.py OUT SCRIPT [ARGS…]

writes OUT/rank-<r>.json with "allocator_peak_bytes"."""

import contextlib
import faulthandler
import gc
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import torch.distributed as dist
from torch.distributed import distributed_c10d
from torch.profiler import ProfilerActivity, profile, record_function

from generator.cli.torchrun_step import gloo_frees, replayed_peak
from generator.measure import quiet_profiler
from generator.measure.tracking.cpu_allocator_blocks import allocator_blocks
from generator.simulate.runner import Script

WINDOW = "generator::script"
#: A rank still running by then prints each thread's Python stack and exits: a hang shows
#: where it hung, well inside the test's own timeout (a run takes seconds).
HANG_S = 240


@contextlib.contextmanager
def groups_outlive_the_script() -> Iterator[None]:
    """Each process group the script destroys stays referenced from here until the block
    ends. PyTorch 2.13's gloo deadlocks now and then (2 runs in 105 of parallel_loop.py's
    DDP here) when DDP's reducer, freed as the script's main() returns, holds the group's
    last reference: the reducer is freed with the GIL held, the group's destructor joins its
    gloo worker threads, and a worker waits for the GIL to free the Python object its last
    allreduce captured (the context autograd stashes for each backward). Freed from here,
    the group goes through its Python binding, which lets the GIL go while it joins them.
    What the script allocates is the same; only the group's own frees come later."""
    kept, destroy = [], dist.destroy_process_group

    def destroying(group=None) -> None:
        kept.append(group if group is not None else dist.group.WORLD)
        destroy(group)

    dist.destroy_process_group = distributed_c10d.destroy_process_group = destroying
    try:
        yield
    finally:
        dist.destroy_process_group = distributed_c10d.destroy_process_group = destroy
        gc.collect()  # a reducer that sits in a reference cycle goes first
        kept.clear()


def main() -> None:
    faulthandler.dump_traceback_later(HANG_S, exit=True)
    out, script, *args = sys.argv[1:]
    with quiet_profiler(), profile(activities=[ProfilerActivity.CPU],
                                   profile_memory=True) as prof:
        with groups_outlive_the_script():
            with record_function(WINDOW):
                status = Script(script, tuple(args)).run()
        gc.collect()
    if status:
        sys.exit(status)
    blocks, window = allocator_blocks(prof, WINDOW)
    gloo_frees(prof, blocks)
    peak, _ = replayed_peak(blocks, window)
    Path(out, f"rank-{os.environ['RANK']}.json").write_text(
        json.dumps({"allocator_peak_bytes": peak}), encoding="utf-8")


if __name__ == "__main__":
    main()
