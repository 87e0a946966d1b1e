"""One rank of a user's own script for real under torchrun on this CPU (gloo), its CPU
allocator's peak read from the profiler's memory events over the whole script, with the
frees gloo's worker threads make put back (generator/cli/torchrun_step.py's gloo_frees):
the ground truth for `run --device cpu --gpus N SCRIPT`.

    torchrun --standalone --nproc-per-node N tests/slow/torchrun_script.py OUT SCRIPT [ARGS…]

writes OUT/rank-<r>.json with "allocator_peak_bytes"."""

import gc
import json
import os
import sys
from pathlib import Path

from torch.profiler import ProfilerActivity, profile, record_function

from generator.cli.torchrun_step import gloo_frees, replayed_peak
from generator.measure import quiet_profiler
from generator.measure.tracking.cpu_allocator_blocks import allocator_blocks
from generator.simulate.runner import Script

WINDOW = "generator::script"


def main() -> None:
    out, script, *args = sys.argv[1:]
    with quiet_profiler(), profile(activities=[ProfilerActivity.CPU],
                                   profile_memory=True) as prof:
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
