"""PyTorch's memory snapshot: the simulated run written as `torch.cuda.memory._snapshot()`
gives a real one, and a snapshot from someone else read back safely.

The format (torch/cuda/memory.py `_snapshot`, read by torch/cuda/_memory_viz.py and the
viewer at pytorch.org/memory_viz): a dict with
- "segments": the cudaMalloc segments held when it was taken, each {device, address,
  total_size, allocated_size, active_size, requested_size, stream, segment_type ("small" |
  "large"), segment_pool_id, is_expandable, frames, blocks}, and each block {address, size,
  requested_size, state ("active_allocated" | "inactive"), frames};
- "device_traces": per device, the allocator's events in order (history.py), each {action,
  addr, size, stream, frames}; an "oom" entry has device_free in place of addr;
- "allocator_settings", and here "simulated": what was simulated (a real snapshot lacks it;
  the viewer ignores it).
Frames are {filename, line, name}, innermost first.

A script that takes its own snapshot (`torch.cuda.memory._record_memory_history()`, then
`_snapshot()` or `_dump_snapshot(FILE)`: the script a user runs on a GPU to record one) gets
the simulated GPU's, its trace from its own call on (`ScriptRecording`). `_dump_snapshot`
writes nothing there: the file may be the real snapshot the simulation is compared with;
what the script would have written is kept (`dumped`), and `run --snapshot FILE` writes the
whole run's.

A snapshot pickle from someone else is code until proven otherwise: pickle calls whatever
global it names. What `_snapshot()` holds is dicts, lists, tuples (segment_pool_id), str,
int, float, bool and None, which pickle builds from its own opcodes without naming any global,
so `load` admits no global at all, and refuses the file in one line at the first it names,
before anything is called. The file is read with a size limit first (files.read_limited),
and what it held is checked to be a snapshot's shape.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import reprlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from generator.allocator.blocks import SMALL_BUFFER
from generator.errors import ConfigError
from generator.files import read_limited, write_atomic
from generator.simulate.memory import DeviceMemory

#: The largest snapshot read: PyTorch's grow with the trace's length (a few KB an entry).
READ_LIMIT = 1 << 30
#: The most segments, blocks, trace entries and frames (each time one is referred to) a
#: snapshot may hold: a pickle can refer to one list many times over, so a small file can
#: stand for more than any reading of it could walk. A real one holds tens of millions at most.
ITEM_LIMIT = 100_000_000


def taken(memory: DeviceMemory, *, gpu: str | None = None, since: int = 0,
          until: int | None = None) -> dict[str, Any]:
    """The memory's state now and its history as a snapshot: the history's events from
    `since` to `until` (empty if none was recorded); frames for what was made within them."""
    if memory.allocator is None:
        raise ConfigError("a memory snapshot is of the CUDA caching allocator: a run that "
                          "models the CPU has none")
    history = memory.history

    def frames(made: tuple[int, list] | None) -> list:
        return made[1] if made is not None and made[0] >= since else []

    with memory.lock:
        requested = memory.live()
        blocks = {key: memory.allocator.block(key) for key in requested}
        keys = {id(block): key for key, block in blocks.items() if block is not None}
        made = {} if history is None else history.allocation_frames
        segments = [
            _segment(address, size, held, requested, keys,
                     {key: frames(made.get(key)) for key in keys.values()},
                     frames(None if history is None else history.segment_frames.get(address)))
            for address, size, held in memory.allocator.segment_blocks()]
        traces = [history.events[since:until]] if history is not None else [[]]
    return {
        "segments": segments,
        "device_traces": traces,
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "expandable_segments": False},
        "simulated": {"by": "generator (显存去哪了)", "gpu": gpu,
                      "kind": "estimated: a script run on a simulated GPU"},
    }


def _segment(address: int, size: int, blocks: list, requested: dict, keys: dict,
             frames: dict, segment_frames: list) -> dict[str, Any]:
    listed = []
    for block in blocks:
        key = keys.get(id(block)) if block.allocated else None
        listed.append({"address": block.addr, "size": block.size,
                       "requested_size": requested[key] if key is not None else 0,
                       "state": "active_allocated" if block.allocated else "inactive",
                       "frames": frames[key] if key is not None else []})
    allocated = sum(b["size"] for b in listed if b["state"] == "active_allocated")
    small = blocks[0].pool.small if blocks else size == SMALL_BUFFER
    return {"device": 0, "address": address, "total_size": size,
            "allocated_size": allocated, "active_size": allocated,
            "requested_size": sum(b["requested_size"] for b in listed),
            "stream": 0, "segment_type": "small" if small else "large",
            "segment_pool_id": (0, 0), "is_expandable": False,
            "frames": segment_frames, "blocks": listed}


def dump(snapshot: dict[str, Any], path: Path) -> Path:
    """Write the snapshot as `torch.cuda.memory._dump_snapshot` does (a pickle), whole or
    not at all."""
    return write_atomic(Path(path), pickle.dumps(snapshot, protocol=4),
                        what="the memory snapshot")


class ScriptRecording:
    """torch.cuda.memory's snapshot API as the script calls it, answered from the simulated
    GPU while `answering()` (see the module). `dumped`: (file, snapshot) for each
    `_dump_snapshot` the script called, in order."""

    def __init__(self, memory: DeviceMemory, gpu: str) -> None:
        self.memory, self.gpu = memory, gpu
        self.since: int | None = None  # where the script's recording began, in the history
        self.until: int | None = None  # and where it stopped
        self.dumped: list[tuple[str, dict[str, Any]]] = []

    def record_memory_history(self, enabled: str | None = "all", *_args, **_kwargs) -> None:
        if enabled:
            self.since, self.until = len(self.memory.record_history().events), None
        elif self.since is not None and self.until is None:
            self.until = len(self.memory.history.events)

    def snapshot(self, *_args, **_kwargs) -> dict[str, Any]:
        history = self.memory.history
        if self.since is None:  # not recording: the state alone, as PyTorch gives it
            since = len(history.events) if history is not None else 0
            return taken(self.memory, gpu=self.gpu, since=since, until=since)
        return taken(self.memory, gpu=self.gpu, since=self.since, until=self.until)

    def dump_snapshot(self, filename: str = "dump_snapshot.pickle", *_args, **_kwargs) -> None:
        self.dumped.append((os.fspath(filename), self.snapshot()))

    def memory_snapshot(self, *_args, **_kwargs) -> list[dict[str, Any]]:
        return self.snapshot()["segments"]

    @contextlib.contextmanager
    def answering(self) -> Iterator[None]:
        """These answers in torch.cuda.memory (and torch.cuda.memory_snapshot) for the block."""
        answers = {"_record_memory_history": self.record_memory_history,
                   "_snapshot": self.snapshot, "_dump_snapshot": self.dump_snapshot,
                   "memory_snapshot": self.memory_snapshot}
        owners = [(torch.cuda.memory, name) for name in answers] + [
            (torch.cuda, "memory_snapshot")]
        before = [(owner, name, getattr(owner, name)) for owner, name in owners]
        try:
            for owner, name in owners:
                setattr(owner, name, answers[name])
            yield
        finally:
            for owner, name, value in before:
                setattr(owner, name, value)


class _Refused(Exception):
    """A global the pickle names (private: load turns it into one line)."""


class _SnapshotUnpickler(pickle.Unpickler):
    """Builds only what pickle's own opcodes build; any global or persistent id is refused
    before it is looked up, so nothing the file names is imported or called."""

    def find_class(self, module: str, name: str) -> Any:
        raise _Refused(f"{module}.{name}")

    def persistent_load(self, pid: Any) -> Any:
        raise _Refused(f"a persistent id {_quoted(pid)}")


def load(path: Path) -> dict[str, Any]:
    """A snapshot read from `path` (see the module); a ConfigError in one line if the file
    cannot be read, is not a pickle, names any global, or is not a snapshot's shape."""
    path = Path(path)
    try:
        data = read_limited(path, READ_LIMIT)
    except FileNotFoundError:
        raise ConfigError(f"no memory snapshot at {path}") from None
    except (OSError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise ConfigError(f"cannot read the memory snapshot {path}: {reason}") from None
    try:
        found = _SnapshotUnpickler(io.BytesIO(data)).load()
    except _Refused as refused:
        raise ConfigError(f"{path} is not a memory snapshot: it names {refused}") from None
    except Exception as error:  # noqa: BLE001 - hostile bytes fail in many ways; all say so
        raise ConfigError(f"{path} is not a memory snapshot: not a pickle that can be read "
                          f"({type(error).__name__})") from None
    problem = shape_problem(found)
    if problem:
        raise ConfigError(f"{path} is not a memory snapshot: {problem}")
    return found


def _quoted(value: Any) -> str:
    """A value from the file as a message quotes it: short, and at a bounded depth (a hostile
    file may nest lists deeper than repr can go)."""
    text = reprlib.repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _ints(entry: dict, *names: str) -> bool:
    return all(type(entry.get(n)) is int for n in names)


class _Shape:
    """Walks a snapshot once: each frames list checked once however often it is referred
    to, and every reference counted against ITEM_LIMIT (see shape_problem)."""

    def __init__(self) -> None:
        self.items = 0
        self.frames_checked: set[int] = set()

    def count(self, n: int) -> None:
        self.items += n
        if self.items > ITEM_LIMIT:
            raise _TooLarge

    def frames_problem(self, frames: Any) -> str | None:
        if not isinstance(frames, list):
            return "frames that are not a list"
        self.count(len(frames))
        if id(frames) in self.frames_checked:
            return None
        for frame in frames:
            if not (isinstance(frame, dict) and isinstance(frame.get("filename"), str)
                    and isinstance(frame.get("name"), str) and type(frame.get("line")) is int):
                return f"a frame {_quoted(frame)}"
        self.frames_checked.add(id(frames))
        return None

    def problem(self, found: Any) -> str | None:
        if not isinstance(found, dict) or not isinstance(found.get("segments"), list):
            return "it holds no list of segments"
        if not isinstance(found.get("device_traces"), list) or not all(
                isinstance(trace, list) for trace in found["device_traces"]):
            return "its device_traces are not lists of trace entries"
        for segment in found["segments"]:
            if not (isinstance(segment, dict) and _ints(segment, "address", "total_size")
                    and type(segment.get("device", 0)) is int
                    and isinstance(segment.get("blocks"), list)):
                return f"a segment {_quoted(segment)}"
            self.count(1 + len(segment["blocks"]))
            for block in segment["blocks"]:
                if not (isinstance(block, dict) and _ints(block, "size")
                        and type(block.get("requested_size", 0)) is int
                        and isinstance(block.get("state"), str)):
                    return f"a block {_quoted(block)}"
                problem = self.frames_problem(block.get("frames", []))
                if problem:
                    return problem
        for trace in found["device_traces"]:
            self.count(len(trace))
            for entry in trace:
                if not (isinstance(entry, dict) and isinstance(entry.get("action"), str)
                        and _ints(entry, "size")
                        and (entry["action"] == "oom" or _ints(entry, "addr"))):
                    return f"a trace entry {_quoted(entry)}"
                problem = self.frames_problem(entry.get("frames", []))
                if problem:
                    return problem
        return None


class _TooLarge(Exception):
    """More items than ITEM_LIMIT (private: shape_problem says so)."""


def shape_problem(found: Any) -> str | None:
    """What makes `found` not a snapshot's shape (None: it is one). Only what comparing
    reads is required; other keys may be anything a newer PyTorch adds."""
    try:
        return _Shape().problem(found)
    except _TooLarge:
        return f"it holds more than {ITEM_LIMIT:,} segments, blocks, entries and frames"
