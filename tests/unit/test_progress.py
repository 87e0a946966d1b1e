"""Progress lines while measuring: numbered in the order jobs finish (estimates run in
parallel workers and may finish out of order), one line each off a terminal, and on a
terminal a live line showing every job still running."""

from __future__ import annotations

import io

from generator.experiment import Experiment
from generator.jobs.progress import Progress
from generator.jobs.runner import Outcome

JOB = Experiment(model="tiny", batch_size=2, seq_len=16)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _outcome(peak: int) -> Outcome:
    return Outcome(JOB, "measured", result={"peak_bytes": peak, "error": None}, seconds=1.25)


def test_lines_are_numbered_as_jobs_finish() -> None:
    stream = io.StringIO()
    progress = Progress(total=3, stream=stream)
    first, second = progress.start("first job"), progress.start("second job")
    progress.finish(second, _outcome(2**20))
    progress.finish(first, Outcome(JOB, "failed", "worker killed by signal 9"))
    skipped = progress.start("third job")
    progress.finish(skipped, Outcome(JOB, "skipped", "no CUDA GPU"))
    assert stream.getvalue().splitlines() == [
        "[1/3] measured in 1.2 s: second job: peak 1.00 MiB",
        "[2/3] failed: first job: worker killed by signal 9",
        "[3/3] skipped: third job: no CUDA GPU",
    ]
    assert not progress.running


def test_the_live_line_shows_every_running_job() -> None:
    stream = Terminal()
    progress = Progress(total=4, stream=stream)
    first = progress.start("first job")
    progress.start("second job")
    live = stream.getvalue().rsplit("\r\033[K", 1)[-1]
    assert live.startswith("[1/4] ") and "first job … 0 s" in live and "second job" in live
    progress.finish(first, _outcome(2**20))
    text = stream.getvalue()
    assert "\r\033[K[1/4] measured in 1.2 s: first job: peak 1.00 MiB\n" in text
    live = text.rsplit("\r\033[K", 1)[-1]
    assert live.startswith("[2/4] second job … ") and "first job" not in live


def test_one_long_job_ticks_on_a_terminal_and_leaves_a_clean_line() -> None:
    from generator.jobs.progress import ticking

    terminal, log = Terminal(), io.StringIO()
    with ticking("estimating llama-7b", terminal, every=0.01):
        pass
    with ticking("estimating llama-7b", log):
        pass
    drawn = terminal.getvalue()
    assert drawn.startswith("\r\033[Kestimating llama-7b … ")
    assert drawn.endswith(" s\r\033[K")  # erased: what the command prints next starts clean
    assert log.getvalue() == ""  # a log would keep every redraw
