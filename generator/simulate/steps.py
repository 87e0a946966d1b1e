"""Where one training step ends: each optimizer step, seen by a global post-hook.

The script's loop is its own, so its steps are found where every loop has one: the
optimizer's `step` (`_OPTIMIZER.register_optimizer_step_post_hook`, a hook on
every optimizer, removed when the run ends). Each step closes a window of the memory's
figures (memory.py); after `limit` steps the run stops the script by raising
`StopAfterSteps`, a BaseException so that the script's own `except Exception` lets it
through, and the runner (or `simulated_gpu`'s block) ends there, cleanly.

An optimizer whose step runs other optimizers' steps (torchtitan's OptimizersContainer, one
AdamW per model part) makes one training step: only the outermost step counts (a pre-hook
keeps the depth, per thread).
"""

from __future__ import annotations

import importlib
import threading

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
        self._handles: list = []
        self._local = threading.local()  # per thread: how deep in optimizer steps

    @property
    def stopped(self) -> bool:
        """Whether the run ended at its limit (not where the script ended)."""
        return self.limit is not None and len(self.peaks) >= self.limit

    def __enter__(self) -> "Steps":
        self._handles = [_OPTIMIZER.register_optimizer_step_pre_hook(self._stepping),
                         _OPTIMIZER.register_optimizer_step_post_hook(self._stepped)]
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()

    def _stepping(self, _optimizer, _args, _kwargs) -> None:
        self._local.depth = getattr(self._local, "depth", 0) + 1

    def _stepped(self, _optimizer, _args, _kwargs) -> None:
        # a step whose pre-hook ran before the run began counts as outermost
        self._local.depth = max(getattr(self._local, "depth", 1) - 1, 0)
        if self._local.depth:
            return  # a step inside another optimizer's: the outer one ends the window
        self.peaks.append(self.memory.end_window())
        if self.stopped:
            raise StopAfterSteps(len(self.peaks))
