"""What the CUDA caching allocator would reserve over a run of training steps.

`nvidia-smi` and out-of-memory errors answer to *reserved* memory: the segments the caching
allocator has taken from the driver, which hold the live tensors and the freed blocks it
keeps for reuse. The tracker sees each storage's birth and death, which is the allocator's
input; generator/allocator/caching.py replays that sequence with the allocator's rules. The
run is the one users and published measurements see: the warm-up step (where the optimizer
creates its state), the measured step, then the measured step's sequence replayed so that
the cache settles (five steps in all, as the published H100 runs took).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Sequence

from generator.allocator import trace
from generator.allocator.caching import CachingAllocator, replay
from generator.measure.tracking.timeline import StorageLife
from generator.gpus import GPU, communicator_bytes, workspace_sizes

#: Steps replayed after the measured one: warm-up + measured + 3 = five steps.
REPLAYED_STEPS = 3
SOURCE = "simulated CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp rules)"
#: The phases whose thread first runs a matmul: the step's own thread in forward, autograd's
#: device thread in backward. Each gets a cuBLAS handle with its own workspace, which PyTorch
#: takes from the caching allocator and keeps (aten/src/ATen/cuda/CublasHandlePool.cpp;
#: gpus.py has the sizes and sources).
WORKSPACE_PHASES = ("forward", "backward")
#: How the cuBLAS workspaces' allocations are keyed among the storages' (with their phase).
WORKSPACE = "cublas workspace"


@dataclass(frozen=True)
class TrackedSteps:
    """What a tracker saw over one or more steps: the storages' lives and phase starts."""

    lives: Sequence[StorageLife]
    phases: Sequence[tuple[str, int]] = ()


def predict(steps: Sequence[TrackedSteps], *, workspace_bytes: int = 0, workspaces: int = 2,
            replays: int = REPLAYED_STEPS, capacity: int | None = None,
            expandable_segments: bool = False, keep_trace: bool = False,
            building: TrackedSteps | None = None) -> dict[str, Any]:
    """The allocator's peak allocated and reserved bytes over `steps` (what each tracker
    recorded, in order), the last replayed `replays` more times. workspace_bytes: the size
    of one cuBLAS workspace on the modelled GPU (0: none); workspaces: how many (one per
    thread that runs matmuls, the first of WORKSPACE_PHASES). keep_trace: add the events
    replayed, as allocator/trace.py writes them ("trace"; a building is its first step).
    building: the model built on the device first (build_trace.py); what it frees stays
    cached, and the peaks count from the first step, as after
    `torch.cuda.reset_peak_memory_stats()`."""
    phases = WORKSPACE_PHASES[:workspaces] if workspace_bytes else ()
    starts: list[int] = []
    leading = [building] if building is not None else []
    events = allocation_events([*leading, *steps], replays=replays,
                               workspace_bytes=workspace_bytes, workspace_phases=phases,
                               step_starts=starts)
    first_step = starts[len(leading)] if steps else len(events)
    allocator = CachingAllocator(capacity=capacity, expandable_segments=expandable_segments)
    replay(allocator, events[:first_step])
    allocator.reset_peak_stats()
    if allocator.out_of_memory is None:
        replay(allocator, events[first_step:])
    report = allocator.report()
    workspaces = [i for i, event in enumerate(events) if event[0] == "alloc"
                  and isinstance(event[1], tuple) and event[1][0] == WORKSPACE]
    kept = {"trace": trace.encode(events, starts, workspaces)} if keep_trace else {}
    built = {} if building is None else {"freed_while_building_bytes": sum(
        life.nbytes for life in building.lives if life.died is not None)}
    return {
        "source": SOURCE,
        "steps": len(steps) + replays,
        "peak_allocated_bytes": report.peak_allocated_bytes,
        "peak_reserved_bytes": report.peak_reserved_bytes,
        "workspace_bytes": workspace_bytes * len(phases),
        "segments": report.segments,
        "out_of_memory": report.out_of_memory,
        **built,
        **kept,
    }


def predict_on(gpu: GPU, steps: Sequence[TrackedSteps], *, capacity: int | None = None,
               expandable_segments: bool = False, keep_trace: bool = False,
               building: TrackedSteps | None = None,
               communicators: int = 0) -> dict[str, Any]:
    """`predict` with `gpu`'s cuBLAS workspaces, naming the GPU and its CUDA context (with
    the NCCL memory of `communicators`, a multi-GPU rank's process groups); and
    the same steps' peaks with the workspaces of the catalogue's other GPUs
    ("other_workspaces"), so that the step can be judged on any of them as an estimate for it
    would be (results/api_types.py)."""
    own = gpu.overheads
    allocator = predict(steps, workspace_bytes=own.cublas_workspace_bytes,
                        workspaces=own.cublas_workspaces, capacity=capacity,
                        expandable_segments=expandable_segments, keep_trace=keep_trace,
                        building=building)
    allocator["gpu"] = gpu.name
    allocator["context_bytes"] = list(gpu.context_bytes)
    if communicators:  # kept apart, so that the step can be judged on another GPU
        nccl = communicator_bytes(communicators)
        allocator["communicator_bytes"] = list(nccl)
        allocator["context_bytes"] = [gpu.context_bytes[0] + nccl[0],
                                      gpu.context_bytes[1] + nccl[1]]
    allocator["other_workspaces"] = [
        {name: other[name] for name in ("workspace_bytes", "peak_allocated_bytes",
                                        "peak_reserved_bytes", "segments")}
        for other in (predict(steps, workspace_bytes=size, workspaces=own.cublas_workspaces,
                              expandable_segments=expandable_segments, building=building)
                      for size in workspace_sizes() if size != own.cublas_workspace_bytes)]
    return allocator


def allocation_events(steps: Sequence[TrackedSteps], *, replays: int = 0,
                      workspace_bytes: int = 0,
                      workspace_phases: Sequence[str] = WORKSPACE_PHASES,
                      step_starts: list[int] | None = None) -> list[tuple]:
    """("alloc", id, nbytes) and ("free", id) in the order they happen. Storages alive when
    a step begins (born at tick 0) are the ones the step before left alive, matched by the
    storage's key; before the first step they are allocated first (the model's parameters).
    The cuBLAS workspaces are taken as the first step that marks phases enters forward and
    backward (a leading step without phases, e.g. building the model, runs no matmul). Sizes
    are the storages' own (the allocator rounds them); step_starts, if given, gets the index
    of each step's first event."""
    serial = itertools.count()
    events: list[tuple] = []
    alive: dict[int, tuple[int, int]] = {}  # storage key → (event id, size), across a step
    survivors: list[tuple[int, int]] = []  # (nbytes, event id) born in the last step, alive
    placed = False  # the cuBLAS workspaces, taken once
    for step in list(steps) + [steps[-1]] * replays if steps else []:
        lives = step.lives
        if step_starts is not None:
            step_starts.append(len(events))
        ids: dict[int, int] = {}
        found = [index for index, life in enumerate(lives) if life.born == 0]
        # Matched by key (and size: a storage alive across steps keeps it) first, so that
        # none of those is also taken by size below: a new gradient may get the key of an old
        # one freed before it (zero_grad before backward).
        other_size = {}
        for index in found:
            ident, nbytes = alive.pop(lives[index].key, (None, 0))
            if ident is not None and nbytes == lives[index].nbytes:
                ids[index] = ident
            elif ident is not None:
                other_size[index] = ident
        matched = set(ids.values())
        survivors = [(size, ident) for size, ident in survivors if ident not in matched]
        for index in found:
            if index in ids:
                continue
            ident = _take(survivors, lives[index].nbytes)
            if ident is None and any(other == other_size.get(index) for _, other in survivors):
                # no storage of its size is left: its key's own, though its size changed
                # (GPT-2's untied head, built on the device, then tied)
                ident = other_size[index]
                survivors = [(size, other) for size, other in survivors if other != ident]
            if ident is None:
                ident = next(serial)
                events.append(("alloc", ident, _requested(lives[index])))
            ids[index] = ident
        timed = []
        if workspace_bytes and step.phases and not placed:
            placed = True
            starts = {name: tick for name, tick in reversed(step.phases)}  # the first of each
            timed += [(starts[name], 1, ("alloc", (WORKSPACE, name), workspace_bytes))
                      for name in workspace_phases if name in starts]
        for index, life in enumerate(lives):
            if life.born != 0:
                ids[index] = next(serial)
                timed.append((life.born, 1, ("alloc", ids[index], _requested(life))))
            if life.died is not None:
                timed.append((life.died, 0, ("free", ids[index])))
        events += [event for *_, event in sorted(timed, key=lambda t: t[:2])]
        alive = {life.key: (ids[i], life.nbytes) for i, life in enumerate(lives)
                 if life.died is None}
        survivors = [(life.nbytes, ids[i]) for i, life in enumerate(lives)
                     if life.died is None and life.born != 0]
    return events


def _requested(life: StorageLife) -> int:
    return life.requested or life.nbytes


def _take(survivors: list[tuple[int, int]], nbytes: int) -> int | None:
    """In a replayed step, a storage that the original step found alive but freed (a kept
    gradient, replaced each step) is the one the previous step left of the same size."""
    for position, (size, ident) in enumerate(survivors):
        if size == nbytes:
            del survivors[position]
            return ident
    return None
