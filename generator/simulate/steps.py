"""Where one training step ends: each optimizer step, seen by a global post-hook.

The script's loop is its own, so its steps are found where every loop has one: the
optimizer's `step` (`_OPTIMIZER.register_optimizer_step_post_hook`, a hook on
every optimizer, removed when the run ends). Each step closes a window of the memory's
figures (memory.py); after `limit` steps the run stops the script by raising
`StopAfterSteps`, a BaseException so that the script's own `except Exception` lets it
through, and the runner (or `simulated_gpu`'s block) ends there, cleanly.
"""

from __future__ import annotations

import importlib


from generator.simulate.memory import DeviceMemory, Peaks

#: torch.optim.optimizer (the package's name `optimizer` is not the module).
_OPTIMIZER = importlib.import_module("torch.optim.optimizer")


class StopAfterSteps(BaseException):
    """The run has had the steps it was asked for (private: caught where the run ends)."""


class Steps:
    """`with Steps(memory, limit):` the script; then `peaks`, one entry per optimizer step."""

    def __init__(self, memory: DeviceMemory, limit: int | None) -> None:
        self.memory, self.limit = memory, limit
        self.peaks: list[Peaks] = []
        self._handle = None

    @property
    def stopped(self) -> bool:
        """Whether the run ended at its limit (not where the script ended)."""
        return self.limit is not None and len(self.peaks) >= self.limit

    def __enter__(self) -> "Steps":
        self._handle = _OPTIMIZER.register_optimizer_step_post_hook(self._stepped)
        return self

    def __exit__(self, *exc) -> None:
        self._handle.remove()

    def _stepped(self, _optimizer, _args, _kwargs) -> None:
        self.peaks.append(self.memory.end_window())
        if self.stopped:
            raise StopAfterSteps(len(self.peaks))
