"""One multi-process training step for real on CPU processes (gloo), each rank measured by
the CPU allocator's events: the ground truth for `estimate … --device cpu --gpus N`.

    torchrun --standalone --nproc-per-node N -m generator.cli.torchrun_step MODEL -b B -s S \\
        --parallel {ddp,fsdp2,hsdp,tp,fsdp2-tp} [--fsdp-mixed-precision bf16/fp32] \\
        [--tp-size T] [--precision …] [any other estimate option] --out DIR

Each rank builds the experiment the estimate builds (backend estimate, device cpu, gpus N),
shares the model out with the same code on gloo (parallel.world(fake=False), real
DistributedDataParallel, real fully_shard and tensor-parallel DTensors), warms up as the
estimate does, and runs the measured step inside a record_function window under
torch.profiler(profile_memory=True), which runs from before the model is built. It writes
DIR/rank-<r>.json: the allocator's peak in that window, replayed from the profile as
backends/cpu.allocator_peak_bytes does, with the frees the profiler misses (see gloo_frees),
and the tracker's peak (ShardedMemoryTracker on real tensors; blind to DDP's reducer buckets,
which the real DDP allocates in C++, and to gloo's own copies).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from pathlib import Path

from generator.errors import GeneratorError

WINDOW = "generator::measured_step"


def parse(argv: list[str]) -> argparse.Namespace:
    from generator.cli.main import Parser, add_option
    from generator.experiment import options

    parser = Parser(prog="python -m generator.cli.torchrun_step",
                    description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a model from `python -m generator models`, or "
                                      "package.module:function")
    parser.add_argument("--out", type=Path, required=True, help="where rank-<r>.json go")
    parser.add_argument("--events", action="store_true",
                        help="also write the allocator's blocks of the window, with their ops")
    for name, opt in options().items():
        if opt.cli and name not in ("gpus", "device", "gpu", "gpu_memory"):
            add_option(parser, name, opt)
    return parser.parse_args(argv)


def window_events(prof, blocks, window: tuple[int, int]) -> list[list]:
    """[bytes, allocation time, free time (None: alive at the end), the ops that allocated
    it, innermost first] of each allocator block alive in the window (after gloo_frees),
    times in µs from the window's start: a rank's allocations, to compare with the
    estimate's storages."""
    from torch._C._profiler import _EventType

    ops, stack = {}, list(prof.profiler.kineto_results.experimental_event_tree())
    while stack:
        event = stack.pop()
        stack.extend(event.children)
        if event.tag == _EventType.Allocation:
            names, up = [], event.parent
            while up is not None and len(names) < 3:
                names, up = names + [up.name], up.parent
            ops[event.extra_fields.ptr, event.start_time_ns] = " < ".join(names)
    start, end = window
    return [[b.nbytes, (b.allocated - start) / 1e3,
             None if b.freed is None else (b.freed - start) / 1e3, ops.get((b.ptr, b.allocated))]
            for b in blocks if b.allocated <= end and (b.freed is None or b.freed >= start)]


def gloo_frees(prof, blocks) -> int:
    """Put back the frees the profile misses; returns their count. The profiler records the
    allocations and frees of the threads it profiles only, and gloo runs each collective on
    a worker thread of its own, which may drop the last reference to the work, and with it
    the tensors the work holds (reduce_scatter_tensor's copy of its input, FSDP2's all-gather
    output, a functional all_reduce's output): the profile then shows them alive for good,
    phantoms that made one rank or another of the same job up to 1 MB (10-40 %) larger from
    run to run. The job is torn down inside the profile, so a block it never sees freed was
    freed on such a thread: when the work ended, i.e. when the first gloo collective started
    after the block ends (the recorded frees of the same copies follow that end within a
    millisecond), and at the latest when the allocator hands its address out again."""
    gloo, stack = [], list(prof.profiler.kineto_results.experimental_event_tree())
    while stack:
        event = stack.pop()
        stack.extend(event.children)
        if event.name.startswith("gloo:"):
            gloo.append((event.start_time_ns, event.end_time_ns))
    closed, after = 0, {}
    for block in reversed(blocks):  # blocks are in allocation order
        if block.freed is None:
            ends = [e for s, e in gloo if s >= block.allocated] + \
                ([after[block.ptr]] if block.ptr in after else [])
            if ends:
                block.freed, block.order, closed = min(ends), (block.order[0], None), closed + 1
        after[block.ptr] = block.allocated
    return closed


def replayed_peak(blocks, window: tuple[int, int]) -> tuple[int, int]:
    """cpu_allocator_blocks.peak_bytes by the events' times (gloo_frees' frees have none of
    the profile's event order), and when it is reached."""
    start, end = window
    total, peak, at = 0, 0, start
    for when, change in sorted([(b.allocated, b.nbytes) for b in blocks] +
                               [(b.freed, -b.nbytes) for b in blocks if b.freed is not None]):
        if when > end:
            break
        if when >= start and total > peak:  # what was live as the window opened
            peak, at = total, start
        total += change
        if when >= start and total > peak:
            peak, at = total, when
    return peak, at


def main(argv: list[str]) -> int:
    args = parse(argv)
    missing = [v for v in ("RANK", "WORLD_SIZE") if v not in os.environ]
    if missing:
        print(f"error: run under torchrun, e.g. `torchrun --standalone --nproc-per-node 2 "
              f"-m generator.cli.torchrun_step …` ({', '.join(missing)} not set)", file=sys.stderr)
        return 2
    import torch
    import torch.distributed as dist
    from torch.profiler import ProfilerActivity, profile, record_function

    from generator import api
    from generator.experiment import options
    from generator.measure import quiet_profiler
    from generator.measure.backends.common import build_workload, new_tracker
    from generator.measure.tracking.cpu_allocator_blocks import allocator_blocks, peak_bytes
    from generator.measure.models import check_model, resolve_model
    from generator.measure.training import parallel, step
    from generator.measure.training.step import Trainer

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    chosen = {name: getattr(args, name) for name in vars(args)
              if name in options() and name != "model"}
    dist.init_process_group("gloo")
    try:
        with api._experiment(args.model, **{**chosen, "backend": "estimate", "device": "cpu",
                                            "gpus": world}) as exp:
            check_model(exp)
            spec = resolve_model(exp.model)
    except GeneratorError as error:
        if rank == 0:
            print(f"error: {error}", file=sys.stderr)
        dist.destroy_process_group()
        return 2
    cpu = torch.device("cpu")
    torch.manual_seed(0)  # the same weights on every rank, as a real job loads them
    with quiet_profiler(), profile(activities=[ProfilerActivity.CPU],
                                   profile_memory=True) as prof:
        with parallel.world(exp, fake=False) as mesh:
            sharding = parallel.Sharding(exp, mesh, fake=False)
            trainer = Trainer.create(build_workload(spec, exp), exp, device=cpu,
                                     parallelize=sharding)
            warmups = trainer.warm_up()
            tracker = new_tracker(trainer, round_bytes=1, device_type="cpu", sharding=sharding)
            with record_function(WINDOW):
                report = step.tracked_step(trainer, tracker)
            del trainer, tracker, sharding
            dist.barrier()
        # Torn down inside the profile: what it never sees freed now was freed on a thread
        # it does not watch (gloo's), at a moment it cannot tell. The group's last reference
        # is this name's, not a reducer's: a reducer freed with the GIL held that ends the
        # group joins gloo's threads while one of them waits for the GIL (a deadlock seen
        # in PyTorch 2.13); the group's Python binding lets the GIL go while it joins them.
        world_group = dist.group.WORLD
        dist.destroy_process_group()
        gc.collect()
        del world_group
    blocks, window = allocator_blocks(prof, WINDOW)
    recorded = peak_bytes(blocks, window)
    closed = gloo_frees(prof, blocks)
    peak, at = replayed_peak(blocks, window)
    row = {"rank": rank, "world_size": world, "experiment": exp.to_dict(),
           "warmup_steps": warmups, "allocator_peak_bytes": peak,
           "allocator_peak_bytes_as_recorded": recorded, "gloo_frees_added": closed,
           "unfreed_at_peak_bytes": sum(b.nbytes for b in blocks
                                        if b.freed is None and b.allocated <= at),
           "tracker_peak_bytes": report.peak_bytes,
           "tracker_live_at_peak_bytes": report.live_at_peak_bytes,
           "tracker_category_max_bytes": report.category_max_bytes,
           "tracker_phase_max_bytes": report.phase_max_bytes}
    if args.events:
        row["events"] = window_events(prof, blocks, window)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"rank-{rank}.json").write_text(json.dumps(row, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
