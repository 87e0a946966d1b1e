"""What autograd's engine did with the gradients it added up, as the profiler saw it: inside
each node it ran (`autograd::engine::evaluate_function: …`), how many `aten::add` (the sum in
a new tensor) and `aten::add_` (into the first gradient) ran. Tests of accumulation.py hold
a tracker's folding against these counts from an untracked step."""

from __future__ import annotations

from collections import Counter

ADDS = ("aten::add", "aten::add_")


def backward_adds(prof) -> Counter:
    """The additions inside autograd's nodes in a torch.profiler profile, by op name (an
    addition's own inner calls not counted again)."""
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
