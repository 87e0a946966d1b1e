"""One multi-process training step for real on CPU processes (gloo), each rank measured by
the CPU allocator's events: the ground truth for `estimate … --device cpu --gpus N`.

    torchrun --standalone --nproc-per-node N scripts/torchrun_step.py MODEL -b B -s S \\
        --parallel {ddp,fsdp2,hsdp,tp,fsdp2-tp} [--fsdp-mixed-precision bf16/fp32] \\
        [--tp-size T] [--precision …] [any other estimate option] --out DIR

Each rank builds the experiment the estimate builds (backend estimate, device cpu, gpus N),
shares the model out with the same code on gloo (parallel.world(fake=False), real
DistributedDataParallel, real fully_shard and tensor-parallel DTensors), warms up as the
estimate does, and runs the measured step inside a record_function window under
torch.profiler(profile_memory=True), which runs from before the model is built. It writes
DIR/rank-<r>.json: the allocator's peak in that window (backends/cpu.allocator_peak_bytes)
and the tracker's peak (ShardedMemoryTracker on real tensors; blind to DDP's reducer
buckets, which the real DDP allocates in C++).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generator.errors import GeneratorError  # noqa: E402

WINDOW = "generator::measured_step"


def parse(argv: list[str]) -> argparse.Namespace:
    from generator.cli.main import _add_option, _Parser
    from generator.experiment import options

    parser = _Parser(prog="torchrun_step.py", description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a model from `python -m generator models`, or "
                                      "package.module:function")
    parser.add_argument("--out", type=Path, required=True, help="where rank-<r>.json go")
    parser.add_argument("--events", action="store_true",
                        help="also write the allocator's blocks of the window, with their ops")
    for name, opt in options().items():
        if opt.cli and name not in ("gpus", "device", "gpu", "gpu_memory"):
            _add_option(parser, name, opt)
    return parser.parse_args(argv)


def window_events(prof) -> list[list]:
    """[bytes, allocation time, free time (None: alive at the end), the op that allocated
    it] of each allocator block alive in the window, times in µs from the window's start;
    for comparing a rank's allocations with the estimate's storages."""
    from torch._C._profiler import _EventType

    found, window, stack = [], None, list(prof.profiler.kineto_results.experimental_event_tree())
    while stack:
        event = stack.pop()
        if event.tag == _EventType.Allocation and event.extra_fields.device.type == "cpu":
            found.append((event.start_time_ns, event.extra_fields.ptr,
                          event.extra_fields.alloc_size, event.parent.name if event.parent
                          else ""))
        if event.name == WINDOW:
            window = (event.start_time_ns, event.end_time_ns)
        stack.extend(event.children)
    blocks, open_blocks = [], {}
    for when, ptr, size, op in sorted(found, key=lambda e: e[0]):
        if size > 0:
            open_blocks[ptr] = [size, (when - window[0]) / 1e3, None, op]
            blocks.append(open_blocks[ptr])
        elif ptr in open_blocks:
            open_blocks.pop(ptr)[2] = (when - window[0]) / 1e3
    return [b for b in blocks if b[1] * 1e3 <= window[1] - window[0]
            and (b[2] is None or b[2] >= 0)]


def main(argv: list[str]) -> int:
    args = parse(argv)
    missing = [v for v in ("RANK", "WORLD_SIZE") if v not in os.environ]
    if missing:
        print(f"error: run under torchrun, e.g. `torchrun --standalone --nproc-per-node 2 "
              f"scripts/torchrun_step.py …` ({', '.join(missing)} not set)", file=sys.stderr)
        return 2
    import torch
    import torch.distributed as dist
    from torch.profiler import ProfilerActivity, profile, record_function

    from generator import api
    from generator.experiment import options
    from generator.measure import quiet_profiler
    from generator.measure.backends.common import build_workload, new_tracker
    from generator.measure.backends.cpu import allocator_peak_bytes
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
            dist.barrier()
    row = {"rank": rank, "world_size": world, "experiment": exp.to_dict(),
           "warmup_steps": warmups, "allocator_peak_bytes": allocator_peak_bytes(prof, WINDOW),
           "tracker_peak_bytes": report.peak_bytes,
           "tracker_live_at_peak_bytes": report.live_at_peak_bytes}
    if args.events:
        row["events"] = window_events(prof)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"rank-{rank}.json").write_text(json.dumps(row, indent=1), encoding="utf-8")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
