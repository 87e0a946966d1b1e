"""The exit status of a command that judged a step: its one home, read by `estimate` and
`run`. Besides it: 0, 1 (the script `run` ran raised, with its own traceback), 2 (a user's
mistake, one line; main.py), 130 (interrupted) and 141 (the reader went away)."""

from __future__ import annotations

from generator.plan.fit import Verdict

#: The step fits only just, or not at all (Verdict.falls_short): a CI job can gate on it.
DOES_NOT_FIT = 3


def of_verdict(verdict: Verdict | None) -> int:
    """DOES_NOT_FIT when the verdict falls short, else 0 (also with no verdict: nothing
    was judged, as on the CPU without a memory size)."""
    return DOES_NOT_FIT if verdict is not None and verdict.falls_short else 0
