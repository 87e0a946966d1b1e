"""What a step result's figures must hold together, beyond each field's type (store.py
checks those first): a file whose figures do not add up would render pages that contradict
themselves, so `store.load` refuses it, naming the file.

Every committed result holds these (tests/unit/test_result_invariants.py loads them all).
They hold by construction of the figures:
- the categories live at the peak are a partition of what is live then: they sum to the peak;
- each category's own largest value lies between its bytes at the peak and the peak;
- a step holds at least its parameters: its peak is above zero (pages divide by it);
- an allocator hands out whole blocks for the tensors and more: its allocated peak is at least
  the tensors' peak, and what it reserves from the device is at least what it allocated
  (the simulated allocator of an estimate modelling CUDA, each of its other workspace sizes,
  and a real run's own statistics in ground_truth). A simulation that ran out of memory within
  a budget stopped there: its allocated peak may fall short of the tensors'.
Results without figures (a real step that ran out of memory) have nothing to check; studies
are another shape (store.load_study).
"""

from __future__ import annotations

from typing import Any

from generator.results.shapes import CATEGORIES


def problem(data: dict[str, Any]) -> str | None:
    """The first relation `data` (a step result whose fields have their types) breaks, in
    words; None when its figures add up."""
    peak, live, most = data["peak_bytes"], data["live_at_peak_bytes"], data["category_max_bytes"]
    if peak == 0:
        return "peak_bytes is 0; a training step holds at least its parameters"
    total = sum(live.values())
    if total != peak:
        return f"live_at_peak_bytes add up to {total:,} bytes, not to peak_bytes {peak:,}"
    for cat in CATEGORIES:
        if not live[cat] <= most[cat] <= peak:
            return (f"category_max_bytes.{cat} is {most[cat]:,}: it must lie between its bytes "
                    f"live at the peak ({live[cat]:,}) and peak_bytes ({peak:,})")
    allocator = data.get("allocator")
    if allocator:
        for part in [allocator, *allocator.get("other_workspaces", [])]:
            # a simulation that ran out of memory (a budget) stopped there, short of the peak
            ran = part.get("out_of_memory") is None
            found = _allocator_problem("allocator", part["peak_allocated_bytes"],
                                       part["peak_reserved_bytes"], peak if ran else None)
            if found:
                return found
    truth = data.get("ground_truth") or {}
    for allocated, reserved in (("peak_bytes", "max_reserved_bytes"),
                                ("steps_peak_bytes", "steps_max_reserved_bytes")):
        found = _allocator_problem("ground_truth", truth.get(allocated), truth.get(reserved),
                                   peak if allocated == "peak_bytes" else None)
        if found:
            return found
    return None


def _allocator_problem(where: str, allocated: int | None, reserved: int | None,
                       peak: int | None) -> str | None:
    if allocated is not None and peak is not None and allocated < peak:
        return (f"{where}'s allocated peak {allocated:,} is below the tensors' peak_bytes "
                f"{peak:,}; an allocator hands out at least what the tensors hold")
    if allocated is not None and reserved is not None and reserved < allocated:
        return (f"{where}'s reserved peak {reserved:,} is below its allocated peak "
                f"{allocated:,}; reserved memory holds every allocated block")
    return None
