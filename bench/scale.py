"""Benchmark the sharding study: the cost of the 7B estimate, and the tracker's accuracy.

    python bench/scale.py [--runs 3]

Prints, as medians over fresh processes, the time and peak resident memory of one rank of
LLaMA-7B under FSDP2 on 8 GPUs (batch 1, sequence 2048, amp-bf16, estimated): targets
< 2 minutes and < 4 GiB on a 2-core machine. Then, on llama-tiny with real tensors on this
CPU, the tracker's per-rank peak against the CPU allocator's for FSDP2 and DDP.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ESTIMATE = """
import json, resource, time
start = time.perf_counter()
from generator.measure.models import resolve_model
from generator.measure.studies import sharding
imported = time.perf_counter()
p = sharding.settings({"model": "llama-7b", "batch_size": 1, "seq_len": 2048})
row = sharding.measure_rank(resolve_model("llama-7b"), p, "fsdp2", 8)
print(json.dumps({"estimate_s": time.perf_counter() - imported,
                  "process_s": time.perf_counter() - start,
                  "rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "peak_bytes": row["peak_bytes"]}))
"""
CHECK = """
import json
from generator.measure.studies.sharding import allocator_check
print(json.dumps(allocator_check({params!r}, {strategy!r}, {world_size})))
"""
TINY = {"model": "llama-tiny", "batch_size": 2, "seq_len": 32, "precision": "amp-bf16"}


def _python(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    runs = []
    for _ in range(args.runs):
        started = time.perf_counter()
        runs.append({**_python(ESTIMATE), "wall_s": time.perf_counter() - started})
    median = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    print(f"llama-7b FSDP2, 8 GPUs, batch 1, seq 2048, amp-bf16 (one rank, estimated): "
          f"estimate {median['estimate_s']:.1f} s, whole process {median['wall_s']:.1f} s, "
          f"peak RSS {median['rss_bytes'] / 2**30:.2f} GiB (medians of {len(runs)} runs; "
          f"targets < 120 s and < 4 GiB); estimated peak per GPU "
          f"{median['peak_bytes'] / 2**30:.2f} GiB")
    for strategy, world_size in (("fsdp2", 4), ("ddp", 2)):
        found = _python(CHECK.format(params=TINY, strategy=strategy, world_size=world_size))
        error = found["tracker"] / found["allocator"] - 1
        print(f"llama-tiny {strategy} on {world_size} ranks, real tensors on the CPU: tracker "
              f"{found['tracker']:,} B, allocator {found['allocator']:,} B, error {error:+.4%}")


if __name__ == "__main__":
    main()
