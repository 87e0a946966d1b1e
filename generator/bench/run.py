"""Benchmarks of the whole tool, each a median over several runs.

    python -m generator.bench.run [--runs 3] [--skip-cold] [--cold-runs 1]

1. cold `build` of the built-in suite, in a temporary copy of the project with no results
   (minutes: one run by default, --skip-cold to leave it out);
2. warm `build`: every result reused, pages rendered, `mkdocs build --strict` (target ≤ 20 s);
3. `render` alone;
4. `estimate bert-base --batch-size 32 --seq-len 128` (target ≤ 3 s);
5. the tracker's overhead on a real CPU step: tracked time / untracked time (BERT-base,
   batch 2, sequence 128);
6. the tracker's and the estimate's error against the CPU allocator's peak on three
   configurations (target ≤ 1 %).

Times are wall-clock seconds of the command as a user runs it (a fresh Python, torch import
included). It measures this machine as it is: on a shared machine, run it when it is idle.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]  # the project
#: What a project needs to build the site (results/, docs/ pages and site/ are outputs).
PROJECT_FILES = ("generator", "templates", "mkdocs.yml", "docs/assets")
#: Three real CPU steps the estimate (modelling the CPU) must match.
ACCURACY_CONFIGS = (
    {"model": "bert-base", "batch_size": 2, "seq_len": 128, "precision": "fp32"},
    {"model": "bert-base", "batch_size": 2, "seq_len": 128, "precision": "amp-bf16"},
    {"model": "gpt2-small", "batch_size": 1, "seq_len": 128, "precision": "fp32"},
)


def copy_project(target: Path, with_results: bool) -> Path:
    """A project folder that runs its own copy of the generator (PYTHONPATH=target)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in PROJECT_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=ignore)
        else:
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    if with_results and (ROOT / "docs" / "data").is_dir():
        shutil.copytree(ROOT / "docs" / "data", target / "docs" / "data", dirs_exist_ok=True)
    return target


def cli(project: Path, *args: str) -> tuple[float, str]:
    """Run `python -m generator ARGS` in `project`; its wall time and stderr."""
    env = {**os.environ, "PYTHONPATH": str(project)}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "generator", *args], cwd=project, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):  # 1: some job failed, the build still finished
        sys.exit(f"`generator {' '.join(args)}` failed ({proc.returncode}):\n"
                 f"{proc.stderr[-2000:]}")
    return seconds, proc.stderr


def summary(stderr: str) -> str:
    """The runner's last line: 'N jobs: a measured, b reused, …'."""
    found = re.findall(r"^\d+ jobs: .*?;", stderr, re.M)
    return found[-1].rstrip(";") if found else "no jobs"


def report(name: str, times: list[float], target: float | None = None, extra: str = "") -> None:
    median = statistics.median(times)
    verdict = "" if target is None else (f"  target ≤ {target:g} s: "
                                         f"{'met' if median <= target else 'MISSED'}")
    spread = f" (min {min(times):.1f}, max {max(times):.1f})" if len(times) > 1 else ""
    print(f"{name:<44}{median:8.1f} s  median of {len(times)}{spread}{verdict}"
          + (f"  [{extra}]" if extra else ""), flush=True)


def repeat(runs: int, action: Callable[[], tuple[float, str]]) -> tuple[list[float], str]:
    times, last = [], ""
    for _ in range(runs):
        seconds, last = action()
        times.append(seconds)
    return times, last


def bench_builds(runs: int, cold_runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-") as scratch:
        project = copy_project(Path(scratch), with_results=not cold_runs)
        if cold_runs:
            times = []
            for _ in range(cold_runs):
                for output in ("results", "docs/zh", "docs/en", "site"):
                    shutil.rmtree(project / output, ignore_errors=True)
                seconds, stderr = cli(project, "build")
                times.append(seconds)
            report("cold build (built-in suite)", times, extra=summary(stderr))
        else:  # start from the repository's results; measure what they lack, untimed
            seconds, stderr = cli(project, "build")
            print(f"{'(prepare: build from results/)':<44}{seconds:8.1f} s  [{summary(stderr)}]")
        times, stderr = repeat(runs, lambda: cli(project, "build"))
        report("warm build (all reused, mkdocs included)", times, 20, summary(stderr))
        times, _ = repeat(runs, lambda: cli(project, "render"))
        report("render", times)
        times, _ = repeat(runs, lambda: cli(project, "site"))
        report("site (mkdocs build --strict)", times)
        times, _ = repeat(runs, lambda: cli(project, "estimate", "bert-base", "--batch-size",
                                            "32", "--seq-len", "128"))
        report("estimate bert-base --batch-size 32 --seq-len 128", times, 3)


def bench_tracker(runs: int) -> None:
    """Step time with and without the tracker, in this process, after warm-up. The two
    alternate, so that a machine that speeds up or slows down meanwhile affects both."""
    import torch

    from generator.experiment import Experiment
    from generator.measure.backends.common import tracked_step
    from generator.measure.models import MODELS
    from generator.measure.training.step import Trainer

    exp = Experiment(model="bert-base", batch_size=2, seq_len=128, backend="cpu")
    trainer = Trainer.create(MODELS["bert-base"].build(), exp, device=torch.device("cpu"))
    trainer.warm_up()
    plain, tracked = [], []
    for _ in range(runs):
        start = time.perf_counter()
        trainer.step()
        plain.append(time.perf_counter() - start)
        start = time.perf_counter()
        tracked_step(trainer, round_bytes=1, device_type="cpu")
        tracked.append(time.perf_counter() - start)
    ratio = statistics.median(t / p for t, p in zip(tracked, plain))
    print(f"{'tracker overhead, bert-base b2 s128 fp32 cpu':<44}{ratio:8.2f} ×  tracked "
          f"{statistics.median(tracked):.2f} s / untracked {statistics.median(plain):.2f} s, "
          f"median of {runs} alternating pairs on {torch.get_num_threads()} threads", flush=True)


def bench_accuracy() -> None:
    """Fresh real CPU runs and CPU-modelling estimates of ACCURACY_CONFIGS."""
    from generator.experiment import Experiment
    from generator.jobs.runner import run_all

    jobs = [Experiment(**config, backend=backend, device="cpu")
            for config in ACCURACY_CONFIGS for backend in ("cpu", "estimate")]
    with tempfile.TemporaryDirectory(prefix="bench-accuracy-") as scratch:
        outcomes = run_all(jobs, Path(scratch), force=True)
    for real, estimate in zip(outcomes[::2], outcomes[1::2]):
        if real.result is None or estimate.result is None:
            sys.exit(f"accuracy run failed: {real.message or estimate.message}")
        truth = real.result["ground_truth"]["peak_bytes"]
        exp = real.experiment
        name = f"{exp.model} b{exp.batch_size} s{exp.seq_len} {exp.precision}"
        guess, tracked = estimate.result["peak_bytes"], real.result["peak_bytes"]
        print(f"{'estimate error, ' + name:<44}{(guess / truth - 1) * 100:+8.4f} %  "
              f"({guess - truth:+,} B of an allocator peak of {truth:,} B; tracker "
              f"{tracked - truth:+,} B)  target ≤ 1 %", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per benchmark (default 3)")
    parser.add_argument("--cold-runs", type=int, default=1,
                        help="cold builds, minutes each (default 1)")
    parser.add_argument("--skip-cold", action="store_true", help="no cold build")
    parser.add_argument("--only", choices=("builds", "tracker", "accuracy"), default=None,
                        help="run one group of benchmarks")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; python {sys.version.split()[0]}", flush=True)
    if args.only in (None, "builds"):
        bench_builds(args.runs, 0 if args.skip_cold else args.cold_runs)
    if args.only in (None, "tracker"):
        bench_tracker(args.runs)
    if args.only in (None, "accuracy"):
        bench_accuracy()


if __name__ == "__main__":
    main()
