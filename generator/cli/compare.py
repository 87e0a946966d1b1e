"""`python -m generator compare SNAPSHOT [options] -- SCRIPT [ARGS…]` (or `-m MODULE`): a
memory snapshot recorded on a real GPU beside the simulated run of the same script.

The snapshot is loaded first (simulate/snapshot.py: a ConfigError in one line, exit 2, for
a file that is not one, before the script runs), then the script runs on the simulated GPU
with its history recorded, and both are read the same way (simulate/compare.py) and printed
side by side. Where the script takes its own snapshot (as one recorded on a GPU does), its
last is compared: the same stretch of the run as the real one. Exit status 0, or the script's own where it did not end normally.
"""

from __future__ import annotations

import argparse
import sys

from generator.cli.run import script_of
from generator.simulate import compare, simulated_gpu
from generator.simulate import snapshot as snapshots
from generator.units import format_bytes


def run(args: argparse.Namespace) -> int:
    recorded = snapshots.load(args.snapshot)
    device = compare.device_of(recorded, args.snapshot_device)
    script = script_of(args)
    simulation = simulated_gpu(args.gpu or None, memory=args.gpu_memory, steps=args.steps,
                               gpus=args.gpus, history=True)
    with simulation:
        status = script.run()
    sys.stdout.flush()
    theirs = compare.figures(recorded, device)
    dumped = simulation.recording.dumped
    if dumped:  # the script recorded its own: the simulated one over the same stretch
        name, ours_taken = dumped[-1]
        print(f"\nthe script took its own snapshot (torch.cuda.memory._dump_snapshot({name!r})): "
              "compared with the simulated GPU's at that call, over what the script recorded")
    else:
        ours_taken = simulation.snapshot()
    ours = compare.figures(ours_taken)
    kind = recorded.get("simulated")
    print_comparison(theirs, ours, top=args.top,
                     snapshot_kind="estimated, simulated" if kind else "measured on a GPU",
                     gpu=simulation.target.gpu.name)
    return status


def print_comparison(theirs: compare.Figures, ours: compare.Figures, *, top: int,
                     snapshot_kind: str, gpu: str) -> None:
    say = print
    say(f"\n── the snapshot ({snapshot_kind}) beside the script run on a simulated {gpu} "
        "(estimated) ──")
    say(f"{'':<34}{'snapshot':>24}{'simulated':>24}   simulated − snapshot")

    def row(label: str, a: tuple[int, ...], b: tuple[int, ...], kinds: str) -> None:
        """kinds: per figure, "b" for bytes, "n" for a count."""
        cells = [" · ".join(format_bytes(v) if k == "b" else f"{v:,}" for v, k in zip(x, kinds))
                 for x in (a, b)]
        differences = [compare.difference(x, y, nbytes=k == "b") for x, y, k in zip(a, b, kinds)]
        shown = ("the same" if all(d == "the same" for d in differences)
                 else " · ".join(differences))
        say(f"{label:<34}{cells[0]:>24}{cells[1]:>24}   {shown}")

    row("peak allocated (bytes asked for)", (theirs.peak_allocated,), (ours.peak_allocated,), "b")
    row("peak reserved", (theirs.peak_reserved,), (ours.peak_reserved,), "b")
    row("segments at the end", (theirs.segments,), (ours.segments,), "n")
    row("segments at most", (theirs.most_segments,), (ours.most_segments,), "n")
    row("allocations in the trace", (theirs.traced,), (ours.traced,), "n")
    row("out-of-memory errors", (theirs.out_of_memory,), (ours.out_of_memory,), "n")
    say("allocations by size class (how many · bytes):")
    for name in compare.SIZE_CLASSES:
        row(f"  {name}", theirs.size_classes[name], ours.size_classes[name], "nb")
    say("allocations by phase (how many · bytes), read from the stack frames:")
    for name in compare.PHASES:
        row(f"  {name}", theirs.phases[name], ours.phases[name], "nb")
    say("live at the allocated peak, by phase:")
    for name, nbytes in theirs.phases_at_peak.items():
        row(f"  {name}", (nbytes,), (ours.phases_at_peak[name],), "b")
    for title, have, other in (("the snapshot has and the simulation lacks", theirs, ours),
                               ("the simulation has and the snapshot lacks", ours, theirs)):
        found = compare.lacking(have, other)
        say(f"allocations {title} (by size and stack frame):")
        for item in found[:top]:
            say(f"  {item.times:>5} × {format_bytes(item.size):>11}  {item.site}")
        if len(found) > top:
            rest = found[top:]
            say(f"  … and {len(rest):,} more ({format_bytes(sum(x.nbytes for x in rest))})")
        if not found:
            say("  none")
    if not theirs.traced:
        say("the snapshot has no trace, only the state when it was taken: record one with "
            "torch.cuda.memory._record_memory_history() before the script's allocations")
    say(compare.summary(theirs, ours))
    say("A snapshot holds no categories (parameters, gradients, activations): the phase of "
        "each allocation is read from its stack frames; on a GPU, backward runs on "
        "autograd's thread, which has Python frames only where it calls Python code.")
