"""One training step on the CPU under the profiler, and what the profile says about it.

`profiled_step` runs a model's step after its warm-up inside a named profiler range, tracked
or not, so that a test can set a tracked step beside the untracked one a user runs (the CPU
allocator's blocks: cpu_allocator_blocks.allocator_blocks; autograd's additions:
`backward_adds`). Tests of the observer effect and of in_place_sums.py share it."""

from __future__ import annotations

from collections import Counter
from typing import Callable

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from generator.experiment import Experiment
from generator.measure.backends.common import build_workload
from generator.measure.models import resolve_model
from generator.measure.tracking.tracker import MemoryTracker
from generator.measure.training import step
from generator.measure.training.step import Trainer

#: The profiler range around the step.
WINDOW = "profiled_steps::step"
ADDS = ("aten::add", "aten::add_")


def profiled_step(exp: Experiment, make_tracker: Callable[[Trainer], MemoryTracker] | None,
                  *, profile_memory: bool = False):
    """The profile of building `exp`'s model, its warm-up and one step in WINDOW, under the
    tracker `make_tracker` makes for the trainer (None: untracked, the collector paused as
    a tracked step pauses it); and that tracker."""
    tracker = None
    with profile(activities=[ProfilerActivity.CPU], profile_memory=profile_memory) as prof:
        trainer = Trainer.create(build_workload(resolve_model(exp.model), exp), exp,
                                 device=torch.device("cpu"))
        trainer.warm_up()
        with record_function(WINDOW):
            if make_tracker is not None:
                tracker = make_tracker(trainer)
                step.tracked_step(trainer, tracker)
            else:
                with step.gc_paused():
                    trainer.step()
    return prof, tracker


def backward_adds(prof) -> Counter:
    """What autograd's engine did with the gradients it added up: inside each node it ran
    (`autograd::engine::evaluate_function: …`), how many `aten::add` (the sum in a new
    tensor) and `aten::add_` (into the first gradient) ran, an addition's own inner calls not
    counted again."""
    found: Counter = Counter()
    stack = list(prof.profiler.kineto_results.experimental_event_tree())
    while stack:
        event = stack.pop()
        if event.name.startswith("autograd::engine::evaluate_function"):
            found.update(event.name for event in _within(event) if event.name in ADDS)
        else:
            stack.extend(event.children)
    return found


def _within(event):
    for child in event.children:
        yield child
        if child.name not in ADDS:
            yield from _within(child)
