"""`python -m generator run [options] SCRIPT [ARGS…]` (or `-m MODULE [ARGS…]`): the user's
own script, unmodified, on a simulated GPU; then what it took, printed.

Everything after the script (or module) is the script's. The script runs as Python runs it
(simulate/runner.py), inside `simulated_gpu` (simulate/session.py); this module only turns
the arguments into that call and prints the report it returns. Exit status: 3 when the
verdict is "only just" or "no" (plan/fit.py), however the script ended (a script that dies
of the simulated GPU's out of memory error is one that does not fit); else the script's own
(1 for an exception, after its own traceback; 0 when it ended normally or was stopped after
its steps). What the simulation cannot run ends as one line, status 2 (unmodelled.py).
`--snapshot FILE` also writes the run in the format of `torch.cuda.memory._snapshot()`
(simulate/snapshot.py), whatever the status.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from generator import gpus
from generator.plan.fit import exit_status
from generator.files import write_atomic
from generator.plan.fit import RESERVED_IS_AN_UPPER_BOUND
from generator.simulate import simulated_gpu
from generator.simulate.report import SimulationReport
from generator.simulate.runner import Script
from generator.results.notes import note, text
from generator.units import mib, size


def script_of(args: argparse.Namespace) -> Script:
    """The script (or module) the arguments name, checked to be there."""
    target = args.target[1:] if args.target[:1] == ["--"] else args.target
    if target[:1] and target[0].startswith("-"):
        args.usage_error(f"{target[0]} is not a script: options go before the script "
                         "(for compare: before SNAPSHOT, or the script after --)")
    if args.module:
        script = Script(args.module[0], tuple(args.module[1:]), module=True)
    elif target:
        script = Script(target[0], tuple(target[1:]))
    else:
        args.usage_error("give a script to run (SCRIPT [ARGS…]) or -m MODULE [ARGS…]")
    script.check()
    return script


def check_output(args: argparse.Namespace, flag: str, path: Path | None) -> None:
    """A usage error before the run where an output file has no folder to go in."""
    if path is not None and not path.parent.is_dir():
        args.usage_error(f"{flag}: no folder {path.parent} to write {path.name} in")


def run(args: argparse.Namespace) -> int:
    script = script_of(args)
    check_output(args, "--json", args.json)
    check_output(args, "--snapshot", args.snapshot)
    simulation = simulated_gpu(args.gpu or None, memory=args.gpu_memory, device=args.device,
                               steps=args.steps, gpus=args.gpus,
                               history=args.snapshot is not None)
    status = 0
    with simulation:
        status = script.run()
    sys.stdout.flush()
    report = simulation.report()
    print_report(report, steps_limit=args.steps)
    if args.json is not None:
        write_atomic(args.json, json.dumps(report.to_dict(), indent=2) + "\n",
                     what="the JSON report")
    for name, _taken in simulation.recording.dumped if simulation.recording else ():
        print(f"the script's torch.cuda.memory._dump_snapshot({name!r}) wrote nothing: the "
              "simulated run's snapshot is written by --snapshot FILE")
    if args.snapshot is not None:
        simulation.dump_snapshot(args.snapshot)
        print(f"memory snapshot written to {args.snapshot}: open it at "
              "https://pytorch.org/memory_viz, or `python -m torch.cuda._memory_viz "
              f"trace_plot {args.snapshot} -o trace.html`")
    return exit_status(report.verdict) or status


def _rank(report: SimulationReport) -> str:
    return f", rank 0 of {report.gpus}, each figure one GPU's" if report.gpus > 1 else ""


def print_report(report: SimulationReport, *, steps_limit: int | None) -> None:
    say = print
    if report.device == "cuda":
        assumed = " (assumed: --gpu NAME for yours)" if report.gpu_assumed else ""
        say(f"\n── estimated on a simulated {report.gpu}{assumed}{_rank(report)}: "
            "nothing was allocated ──")
    else:
        say(f"\n── estimated on a simulated CPU{_rank(report)}: nothing was allocated ──")
    if report.steps:
        say(f"{'optimizer step':>14}{'allocated peak':>18}{'reserved peak':>18}")
        for number, peaks in enumerate(report.steps, 1):
            reserved = peaks.reserved_bytes if report.device == "cuda" else None
            say(f"{number:>14}{mib(peaks.allocated_bytes):>14} MiB"
                f"{mib(reserved):>14}{' MiB' if reserved is not None else ''}")
    else:
        say("no optimizer step was taken: the figures are the whole run's")
    say(f"peak of the tensors: {size(report.peak_bytes)}")
    if report.device == "cuda":
        say(f"  allocated peak  {mib(report.allocated_bytes):>12} MiB   "
            "torch.cuda.max_memory_allocated(), cuBLAS workspaces included")
        say(f"  reserved peak   {mib(report.reserved_bytes):>12} MiB   "
            "torch.cuda.max_memory_reserved()")
        low, high = report.context_bytes
        shown_low, shown_high = report.nvidia_smi_bytes
        say(f"  nvidia-smi      {mib(shown_low)} – {mib(shown_high)} MiB   reserved + a CUDA "
            f"context of {mib(low)} – {mib(high)} MiB")
        say(f"{'':18}the context: "
            f"{gpus.CONTEXT_ENDS.en.format(low=f'{mib(low)} MiB', high=f'{mib(high)} MiB')}")
        if report.out_of_memory:
            say(f"out of memory: {report.out_of_memory}")
        verdict = report.verdict
        say(f"fits in {report.gpu} ({size(report.memory_bytes)} for a process): "
            f"{verdict.word}, {verdict.reason}")
        say(RESERVED_IS_AN_UPPER_BOUND.en)
    else:
        say(f"  CPU allocator peak {mib(report.allocated_bytes):>12} MiB")
    if report.placeholders:
        say("values a simulated tensor cannot give, read as stated placeholders; the script "
            "went on with them:")
        for read in report.placeholders:
            say(f"  {read}")
        for kind in dict.fromkeys(read.what for read in report.placeholders):
            say(f"    {kind}: {_plain(text(note(f'placeholder_{kind}')))}")
    if report.compiled:
        say(_plain(text(note("compiled_eagerly"))) + ":")
        for file, line, count in report.compiled:
            say(f"  {file}:{line}: torch.compile" + (f" ({count} times)" if count > 1 else ""))
    if report.stopped_after_steps:
        say(f"stopped after {steps_limit} optimizer steps (--steps N, or --steps all to run "
            "the script to its end)")


def _plain(words: str) -> str:
    """Words the page sets as Markdown, as a terminal shows them: no code spans' backticks."""
    return words.replace("`", "")
