"""`python -m generator run [options] SCRIPT [ARGS…]` (or `-m MODULE [ARGS…]`): the user's
own script, unmodified, on a simulated GPU; then what it took, printed.

Everything after the script (or module) is the script's. The script runs as Python runs it
(simulate/runner.py), inside `simulated_gpu` (simulate/session.py); this module only turns
the arguments into that call and prints the report it returns. Exit status: 3 when the
verdict is "only just" or "no" (plan/fit.py), however the script ended (a script that dies
of the simulated GPU's out of memory error is one that does not fit); else the script's own
(1 for an exception, after its own traceback; 0 when it ended normally or was stopped after
its steps). What the simulation cannot run ends as one line, status 2 (unmodelled.py).
"""

from __future__ import annotations

import argparse
import json
import sys

from generator.plan.fit import exit_status
from generator.files import write_atomic
from generator.plan.fit import RESERVED_IS_AN_UPPER_BOUND
from generator.simulate import simulated_gpu
from generator.simulate.report import SimulationReport
from generator.simulate.runner import Script
from generator.results.notes import note, text
from generator.units import mib, size


def run(args: argparse.Namespace) -> int:
    if args.module:
        script = Script(args.module[0], tuple(args.module[1:]), module=True)
    elif args.target:
        script = Script(args.target[0], tuple(args.target[1:]))
    else:
        args.usage_error("give a script to run (SCRIPT [ARGS…]) or -m MODULE [ARGS…]")
    script.check()
    if args.json is not None and not args.json.parent.is_dir():
        args.usage_error(f"--json: no folder {args.json.parent} to write {args.json.name} in")
    simulation = simulated_gpu(args.gpu or None, memory=args.gpu_memory, device=args.device,
                               steps=args.steps)
    status = 0
    with simulation:
        status = script.run()
    sys.stdout.flush()
    report = simulation.report()
    print_report(report, steps_limit=args.steps)
    if args.json is not None:
        write_atomic(args.json, json.dumps(report.to_dict(), indent=2) + "\n",
                     what="the JSON report")
    return exit_status(report.verdict) or status


def print_report(report: SimulationReport, *, steps_limit: int | None) -> None:
    say = print
    if report.device == "cuda":
        assumed = " (assumed: --gpu NAME for yours)" if report.gpu_assumed else ""
        say(f"\n── estimated on a simulated {report.gpu}{assumed}: "
            "nothing was allocated ──")
    else:
        say("\n── estimated on a simulated CPU: nothing was allocated ──")
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
