"""The command line: build, measure, render, site, estimate, models."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from .config import (ATTENTIONS, DEVICES, OPTIMIZER_IMPLS, OPTIMIZERS, PRECISIONS, ZERO_GRADS,
                     parse_size)
from .errors import GeneratorError


class _Parser(argparse.ArgumentParser):
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


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except GeneratorError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m generator", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def paths(sub: argparse.ArgumentParser, *, docs: bool = False, site: bool = False) -> None:
        sub.add_argument("--results", type=Path, default=Path("results"),
                         help="results folder (default: results)")
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

    build = commands.add_parser("build", help="measure the suite, render pages, build the site")
    suite(build)
    paths(build, docs=True, site=True)
    measure = commands.add_parser("measure", help="measure the suite into the results folder")
    suite(measure)
    paths(measure)
    paths(commands.add_parser("render", help="render pages from stored results"), docs=True)
    commands.add_parser("site", help="mkdocs build --strict").add_argument(
        "--site", type=Path, default=Path("site"))

    est = commands.add_parser("estimate", help="estimate one training step, nothing allocated")
    est.add_argument("model", nargs="?", help="a model from `models`, or package.module:function")
    est.add_argument("--model", dest="model_option", metavar="MODEL", help="the same, as an option")
    est.add_argument("--batch-size", type=_positive_int, required=True)
    est.add_argument("--seq-len", type=_positive_int, required=True)
    est.add_argument("--precision", choices=PRECISIONS, default="fp32")
    est.add_argument("--optimizer", choices=OPTIMIZERS, default="adamw")
    est.add_argument("--device", choices=DEVICES, default="cuda",
                     help="the device to model (default: cuda)")
    est.add_argument("--gpu-memory", type=_size, default=None, metavar="SIZE",
                     help="say whether the step fits in SIZE, e.g. 24GiB or 80GB")
    est.add_argument("--attention", choices=ATTENTIONS, default="eager",
                     help="built-in transformers: eager or sdpa attention (default: eager)")
    est.add_argument("--checkpointing", action="store_true",
                     help="recompute each block of model.layers in backward")
    est.add_argument("--zero-grad", choices=ZERO_GRADS, default="none",
                     help="none: zero_grad(set_to_none=True) (default); zeros: set_to_none=False")
    est.add_argument("--optimizer-impl", choices=OPTIMIZER_IMPLS, default="auto",
                     help="auto (PyTorch's pick), for-loop, foreach or fused")
    commands.add_parser("models", help="list the model zoo")
    return parser


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM (a CI job cancelled, `kill`): clean up as for Ctrl-C


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from . import commands

    signal.signal(signal.SIGTERM, _interrupt)
    try:
        return getattr(commands, args.command)(args)
    except GeneratorError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: results measured so far are kept; run again to finish", file=sys.stderr)
        return 130

