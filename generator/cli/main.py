"""The command line: build, measure, render, migrate, site, estimate, run, compare, models,
gpus."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from dataclasses import fields
from pathlib import Path

from generator.plan.fit import DOES_NOT_FIT
from generator.errors import GeneratorError
from generator.files import RESULTS_DIR
from generator.experiment import BACKENDS, Experiment, options
from generator.experiment.option import Option, choice_problem


class Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line, like every other user error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def _checks(text: str) -> tuple[str, ...]:
    from generator.validate import CHECKS

    chosen = tuple(dict.fromkeys(part.strip() for part in text.split(",")))
    unknown = [c for c in chosen if c not in CHECKS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"unknown check(s) {', '.join(unknown) or repr(text)}; "
                                         f"choose from {', '.join(CHECKS)}")
    return chosen


def _steps(text: str) -> int | None:
    """run --steps: a positive number of optimizer steps, or "all" (None)."""
    if text == "all":
        return None
    try:
        return _positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"must be a positive integer or 'all', got {text!r}") \
            from None


def _parsed(parse):
    """An argparse type from an option's parser: its one-line error becomes a usage error."""
    def read(text: str):
        if text == "":  # an option's empty default (--gpu: none named) reads as itself
            return text
        try:
            return parse(text)
        except GeneratorError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    read.__name__ = parse.__name__
    return read


def _choice(name: str, choices: tuple):
    def read(text: str) -> str:
        if text not in choices:
            raise argparse.ArgumentTypeError(choice_problem(name, text, choices))
        return text
    read.__name__ = name
    return read


def add_option(parser: argparse.ArgumentParser, name: str, opt: Option,
                required: bool = True) -> None:
    flag = "--" + name.replace("_", "-")
    flags = (opt.short, flag) if opt.short else (flag,)
    default = {f.name: f.default for f in fields(Experiment)}[name]
    if isinstance(default, bool):  # a switch on by default is turned off with --no-NAME
        parser.add_argument(*flags, default=default, help=opt.help,
                            action=argparse.BooleanOptionalAction if default else "store_true")
    elif opt.choices is not None:  # refused in the words the API uses (choice_problem)
        parser.add_argument(*flags, type=_choice(name, opt.choices),
                            default=default or opt.choices[0],
                            metavar="{" + ",".join(opt.choices) + "}", help=opt.help)
    elif opt.parse is not None:
        parser.add_argument(*flags, type=_parsed(opt.parse), default=default,
                            metavar=opt.metavar, help=opt.help)
    else:  # a count with no default: batch size and sequence length
        parser.add_argument(*flags, type=_positive_int, required=required, help=opt.help)


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m generator", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    def paths(sub: argparse.ArgumentParser, *, docs: bool = False, site: bool = False) -> None:
        sub.add_argument("--results", type=Path, default=RESULTS_DIR,
                         help=f"results folder (default: {RESULTS_DIR.as_posix()})")
        if docs:
            sub.add_argument("--docs", type=Path, default=Path("docs"),
                             help="where pages are written (default: docs)")
        if site:
            sub.add_argument("--site", type=Path, default=Path("site"),
                             help="where the site is built (default: site)")

    def suite(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--config", type=Path, default=None,
                         help="an experiments.toml (default: the built-in suite)")
        sub.add_argument("--force", action="store_true", help="measure again even if stored")
        sub.add_argument("--backend", choices=BACKENDS, default=None,
                         help="measure only the suite's jobs on this backend (default: all); "
                              "e.g. cuda on a GPU machine, leaving stored estimates as they are")
        sub.add_argument("--executor", choices=("local", "dask"), default="local",
                         help="where the estimates run: worker processes on this machine "
                              "(default) or a Dask cluster; real runs stay on this machine, "
                              "one at a time")
        sub.add_argument("--scheduler", metavar="ADDRESS", default=None,
                         help="with --executor dask: the Dask scheduler's address, e.g. "
                              "tcp://HOST:8786 (default: a LocalCluster of this machine's cores)")

    build = commands.add_parser("build", help="measure the suite, render pages, build the site")
    suite(build)
    paths(build, docs=True, site=True)
    measure = commands.add_parser("measure", help="measure the suite into the results folder")
    suite(measure)
    paths(measure)
    paths(commands.add_parser("render", help="render pages from stored results"), docs=True)
    paths(commands.add_parser("migrate", help="write the results of an older schema again as "
                                              "the current one (their figures unchanged)"))
    commands.add_parser("site", help="mkdocs build --strict").add_argument(
        "--site", type=Path, default=Path("site"))

    est = commands.add_parser(
        "estimate", help="estimate one training step, nothing allocated",
        description="Estimates one training step on fake tensors (nothing is allocated) and "
                    "whether it fits the GPU. Exit status "
                    f"{DOES_NOT_FIT} when the step (after --largest-batch or --fewest-gpus: "
                    "the answer) fits only just or not at all.")
    est.add_argument("model", nargs="?", help="a model from `models`, or package.module:function")
    est.add_argument("--model", dest="model_option", metavar="MODEL", help="the same, as an option")
    for name, opt in options().items():  # every flag from the option's declaration
        if opt.cli:  # the batch is searched for with --largest-batch
            add_option(est, name, opt, required=name != "batch_size")
    est.add_argument("--largest-batch", action="store_true",
                     help="with --gpu or --gpu-memory: estimate batch after batch to find the largest "
                          "that fits (from --batch-size if given, else 1)")
    est.add_argument("--fewest-gpus", action="store_true",
                     help="with --parallel and --gpu or --gpu-memory: the fewest GPUs (1, 2, "
                          "4, … 1024) over which the strategy fits each GPU")
    est.add_argument("--levers", action="store_true",
                     help="then estimate each lever this step does not use yet "
                          "(checkpointing, SDPA, AMP, fused or 8-bit AdamW, gradient "
                          "accumulation, …), one at a time, and print what each saves")
    est.add_argument("--json", action="store_true",
                     help="print one JSON object instead: the estimate as the results store "
                          "keeps it, the budget's verdict, the search or the levers")
    est.set_defaults(usage_error=est.error)
    check = commands.add_parser(
        "validate", help="hold the estimate against its truths over whole grids (the "
                         "calculator's held-out sizes, torchrun on this CPU, the published "
                         "runs) and store the dated result the accuracy page shows")
    paths(check)
    check.add_argument("--only", type=_checks, default=None, metavar="CHECK[,CHECK]",
                       help="run only these checks: calculator, torchrun, published, "
                            "as-written, torchtitan (default: all but as-written and "
                            "torchtitan, which run the held-out sources' scripts and "
                            "torchtitan's trainer once each and record them)")
    run = commands.add_parser(
        "run", help="run your own training script, unmodified, on a simulated GPU; "
                    "nothing is allocated",
        usage="python -m generator run [options] SCRIPT [ARGS ...] | -m MODULE [ARGS ...]",
        description="Runs the script as Python would (its own sys.argv, __main__ and "
                    "sys.path[0]; everything after SCRIPT is its own) with a simulated GPU "
                    "in place of a real one, then prints each optimizer step's allocated and "
                    "reserved peaks, the run's peak and whether it fits. Exit status "
                    f"{DOES_NOT_FIT} when it fits only just or not at all (however the script "
                    "ended), else the script's own (1 when it raised); 2 and one line for what "
                    "the simulation cannot run (a custom CUDA extension, an op with no fake "
                    "kernel).")

    def simulated(sub: argparse.ArgumentParser, steps: int | None) -> None:
        for name in ("gpu", "gpu_memory"):  # as estimate reads them
            add_option(sub, name, options()[name])
        sub.add_argument("--gpus", type=_positive_int, default=1, metavar="N",
                         help="run the script as rank 0 of N GPUs, as torchrun would start it "
                              "(its process group a fake one of N ranks); each figure is one "
                              "GPU's")
        sub.add_argument("--steps", type=_steps, default=steps, metavar="N|all",
                         help="stop the script after N optimizer steps "
                              f"(default {steps or 'all'}), or run it to its end (all)")

    def script(sub: argparse.ArgumentParser, *, after_dashes: bool = False) -> None:
        sub.add_argument("-m", dest="module", nargs=argparse.REMAINDER, metavar="MODULE",
                         help="run a module as `python -m MODULE` would (the rest is its own)")
        # compare's script comes after `--` (main() cuts it off): its own positional would
        # take the options that follow SNAPSHOT
        sub.add_argument("target", nargs="*" if after_dashes else argparse.REMAINDER,
                         metavar="SCRIPT [ARGS ...]", help="the script, then its own arguments")
        sub.set_defaults(usage_error=sub.error)

    simulated(run, 20)
    run.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                     help="cuda: a simulated GPU (default); cpu: the simulation modelling "
                          "this CPU (to check it against a real run of the script)")
    run.add_argument("--json", type=Path, default=None, metavar="FILE",
                     help="also write the report to FILE as JSON")
    run.add_argument("--snapshot", type=Path, default=None, metavar="FILE",
                     help="also write the run as torch.cuda.memory._snapshot() does (a "
                          "pickle), for PyTorch's memory visualizer")
    script(run)
    compare = commands.add_parser(
        "compare", help="a memory snapshot recorded on a real GPU beside the simulated run "
                        "of the same script: where they differ",
        usage="python -m generator compare SNAPSHOT [options] -- SCRIPT [ARGS ...] | "
              "-m MODULE [ARGS ...]",
        description="Loads SNAPSHOT (a pickle from torch.cuda.memory._dump_snapshot after "
                    "_record_memory_history, read with an unpickler that admits no code), "
                    "runs the same script on the simulated GPU, and prints both side by "
                    "side: peaks, segments, allocations by size class and by phase, and "
                    "which allocations one has and the other lacks.")
    compare.add_argument("snapshot", type=Path, metavar="SNAPSHOT",
                         help="the snapshot recorded on a GPU (.pickle)")
    simulated(compare, None)
    compare.add_argument("--snapshot-device", type=int, default=None, metavar="N",
                         help="the device of the snapshot to compare, where it holds several")
    compare.add_argument("--top", type=_positive_int, default=10, metavar="N",
                         help="list at most N allocations each side lacks (default 10)")
    script(compare, after_dashes=True)
    commands.add_parser("models", help="list the model zoo")
    commands.add_parser("gpus", help="list the GPUs --gpu knows, with the memory a process "
                                     "gets of each")
    return parser


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM (a CI job cancelled, `kill`): clean up as for Ctrl-C


def _after_dashes(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """compare's own arguments, and the script's after its first `--` (None: no `--`).
    argparse cannot tell them apart itself: a positional left open to the end (the script)
    right after another (the snapshot) takes the options between them too."""
    if argv[:1] != ["compare"] or "--" not in argv:
        return argv, None
    cut = argv.index("--")
    return argv[:cut], argv[cut + 1:]


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    argv, script = _after_dashes(sys.argv[1:] if argv is None else list(argv))
    args = parser.parse_args(argv)
    if script is not None:
        if args.target or args.module:
            args.usage_error("give the script once: after --, or -m MODULE before it")
        args.target = script
    if getattr(args, "scheduler", None) is not None and args.executor != "dask":
        parser.error("--scheduler needs --executor dask")
    from generator.cli import commands

    signal.signal(signal.SIGTERM, _interrupt)
    try:
        status = getattr(commands, args.command)(args)
        sys.stdout.flush()  # here, so that a reader gone away is caught below, not at exit
        return status
    except BrokenPipeError:
        # The reader closed the pipe (`| head`): nothing more to say, and Python's own flush
        # at exit must not try again and print a traceback.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # as a shell reports a command ended by SIGPIPE
    except GeneratorError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Only measure and build store results as they go; an estimate keeps nothing.
        kept = ": results measured so far are kept; run again to finish" \
            if args.command in ("build", "measure") else ""
        print(f"interrupted{kept}", file=sys.stderr)
        return 130

