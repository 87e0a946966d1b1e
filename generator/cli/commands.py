"""What each sub-command does, top to bottom: suite → measure → render → site."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import sys
from pathlib import Path

from generator.errors import ConfigError, SiteBuildError

MKDOCS_CONFIG = Path("mkdocs.yml")


def _require_torch() -> None:
    """Measuring needs PyTorch; rendering and the site do not, so it is not a dependency.
    Where it is there, it is imported now (measure.preload)."""
    if importlib.util.find_spec("torch") is None:
        raise ConfigError("measuring needs PyTorch, which is not installed: pip install torch "
                          "(the CPU or CUDA build you want), or pip install '.[measure]'")
    from generator.measure import preload

    preload()


def _measure_suite(args: argparse.Namespace) -> int:
    _require_torch()
    from generator.jobs.load import load_suite
    from generator.jobs.runner import run_all

    jobs = load_suite(args.config)
    if args.backend is not None:
        jobs = [job for job in jobs if job.backend == args.backend]
        if not jobs:
            where = args.config or "the built-in suite"
            raise ConfigError(f"{where} has no jobs on backend {args.backend!r}")
    with _executor(args) as executor:
        outcomes = run_all(jobs, args.results, force=args.force, executor=executor)
    counts = {}
    for outcome in outcomes:
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in counts.items())
    print(f"{len(outcomes)} jobs: {summary}; results in {args.results}/", file=sys.stderr)
    return 1 if counts.get("failed") else 0


def _executor(args: argparse.Namespace):
    """--executor dask: connected before anything is measured, let go after; the local
    executor (None: the runner's own) needs neither."""
    if args.executor == "dask":
        from generator.jobs.dask_executor import DaskExecutor

        return DaskExecutor(args.scheduler)
    return contextlib.nullcontext()


def measure(args: argparse.Namespace) -> int:
    return _measure_suite(args)


def render(args: argparse.Namespace) -> int:
    from generator.site import freshness
    from generator.site.render import render as render_pages

    written = render_pages(args.results, args.docs)
    freshness.record(args.results, args.docs)
    print(f"rendered {len(written)} files (pages, figures, data) into {args.docs}/", file=sys.stderr)
    return 0


def validate(args: argparse.Namespace) -> int:
    _require_torch()
    from generator import validate as checks

    for path in checks.validate(args.results, args.only or checks.DEFAULT_CHECKS):
        print(f"validation stored in {path}", file=sys.stderr)
    return 0


def migrate(args: argparse.Namespace) -> int:
    from generator.results.store import rewrite_older

    done = rewrite_older(args.results)
    print(f"{len(done)} results of an older schema written again in {args.results}/",
          file=sys.stderr)
    return 0


def site(args: argparse.Namespace) -> int:
    from generator.results import ensure_writable
    from generator.site.mkdocs import build_site

    ensure_writable(args.site, "the site")
    build_site(MKDOCS_CONFIG, args.site)
    print(f"site built in {args.site}/ (open {args.site}/index.html, or run `mkdocs serve`)",
          file=sys.stderr)
    return 0


def build(args: argparse.Namespace) -> int:
    from generator.results import ensure_writable
    from generator.site import freshness, owned

    # Everything that would stop the build after measuring is checked before it: minutes of
    # measuring must not end in "cannot write".
    if not MKDOCS_CONFIG.exists():
        raise SiteBuildError(f"no mkdocs config at {MKDOCS_CONFIG}; run from the project folder")
    for folder, what in ((args.results, "results"), (args.docs, "pages"), (args.site, "the site")):
        ensure_writable(folder, what)
    owned.check_folder(args.docs, owned.PAGES)
    owned.check_folder(args.site, owned.SITE)
    status = _measure_suite(args)
    if freshness.is_fresh(args.results, args.docs):
        print(f"pages in {args.docs}/ are up to date (results, templates and code unchanged); "
              "not rendered again", file=sys.stderr)
    else:
        render(args)
    site(args)
    return status


def models(args: argparse.Namespace) -> int:
    _require_torch()
    from generator.measure.models import MODELS

    width = max(len(name) for name in MODELS)
    for spec in MODELS.values():
        limit = f" (≤ {spec.max_seq_len} tokens)" if spec.max_seq_len else ""
        print(f"{spec.name:<{width}}  {spec.description}{limit}")
    _print_hf_models()
    print("\nor your own: --model package.module:function returning (model, make_batch, loss_fn)")
    return 0


def _print_hf_models() -> None:
    """The Hugging Face configs shipped with the package, when transformers is installed."""
    from generator.measure.models.hf import shipped_summary
    from generator.measure.models.hf_config import INSTALL, transformers_installed

    print("\nHugging Face models, as hf:<hub id | config.json | folder>; these configs ship "
          "with the package (no download):")
    if not transformers_installed():
        print(f"  (install transformers to use them: {INSTALL})")
        return

    rows = shipped_summary()
    width = max(len(row["id"]) for row in rows) + 3
    for row in rows:
        print(f"{'hf:' + row['id']:<{width}}  {row['task']:<11} {row['parameters']:>14,} "
              f"parameters, {row['stacks']}")


def gpus(args: argparse.Namespace) -> int:
    """The catalogue that --gpu, the API's gpu= and the pages' verdicts judge against."""
    from generator import gpus
    from generator.units import gib, mib

    print("GPUs for --gpu (matched loosely: 4090, 'a100 80gb', h100);\n"
          "a step is judged against the memory a process gets of one")
    rows = [("GPU", "for a process", "nvidia-smi total", "cuBLAS workspaces", "CUDA context")]
    for gpu in gpus.CATALOGUE:
        overheads = gpu.overheads
        low, high = gpu.context_bytes
        rows.append((gpu.short_name, f"{gib(gpu.memory_bytes)} GiB",
                     f"{gpu.smi_total_mib:,} MiB",
                     f"{overheads.cublas_workspaces} × {mib(overheads.cublas_workspace_bytes)} MiB",
                     f"{low // 2**20:,}–{high // 2**20:,} MiB"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(f"{cell:<{w}}" if i == 0 else f"{cell:>{w}}"
                        for i, (cell, w) in enumerate(zip(row, widths))).rstrip())
    print(f"\nAn estimate of CUDA with no GPU named models the {gpus.assumed().short_name}. "
          "Sources: generator/gpus.py.")
    return 0


def estimate(args: argparse.Namespace) -> int:
    _require_torch()
    from generator.cli import estimate

    return estimate.run(args)


def run(args: argparse.Namespace) -> int:
    _require_torch()
    from generator.cli import run as run_command

    return run_command.run(args)


def compare(args: argparse.Namespace) -> int:
    _require_torch()
    from generator.cli import compare as compare_command

    return compare_command.run(args)
