"""What the simulated allocator did, with the script's stack at each call: what
`torch.cuda.memory._record_memory_history()` records on a GPU, for `run --snapshot`.

Each event is a dict in the shape of the snapshot's trace entries (snapshot.py): `action`
("alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "oom"),
`addr`, `size` (the bytes asked for, as PyTorch records them), `stream` and `frames`.

Frames are the script's Python frames at the call, innermost first, as PyTorch's own trace
lists its Python frames: file, line and function. This tool's frames are left out, and so are
the frames of the machinery it runs the script on (fake tensors, the dispatch modes that
place tensors, runpy), which a real run does not have, and torch's dynamo-disabling wrappers
where the modes' calls pass through them last: what is left is what the same script
shows on a GPU. One more difference is made alike: on a GPU, backward runs on autograd's
device thread, which has no Python frames below the engine (PyTorch records its C++ frames
there, `torch::autograd::Engine::…`), while fake tensors run it on the caller's thread. So a
stack that passes through the engine (`_engine_run_backward`) ends there, with one frame
named for the engine's thread in place of the caller's frames.

Taking them is a walk up `sys._getframe` with a cache per code object; a frame seen before
is the same dict, and a stack seen before the same list, so a pickle of the trace stores
each once.
"""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Hashable
from types import CodeType
from typing import Any

import torch

Frame = dict[str, Any]

#: This tool's package: the folder above this module's.
_TOOL = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
#: The example scripts ship with the tool but are the user's kind of code: kept.
_EXAMPLES = os.path.join(_TOOL, "examples") + os.sep
_TORCH = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
#: What runs the script on fake tensors, inside torch: no frame of these exists on a GPU.
_MACHINERY = tuple(_TORCH + part for part in (
    "_subclasses" + os.sep, "utils" + os.sep + "_python_dispatch.py", "overrides.py",
    "_ops.py", "_decomp" + os.sep, "_refs" + os.sep, "_prims" + os.sep,
    "_prims_common" + os.sep, "_meta_registrations.py", "_library" + os.sep,
    "utils" + os.sep + "_stats.py", "fx" + os.sep + "experimental" + os.sep))
_RUNPY = ("<frozen runpy>", os.path.abspath(runpy.__file__))
#: Wrappers (`torch._disable_dynamo`) that the modes' calls pass through: dropped while
#: innermost, where a GPU run has the script's call into a kernel instead.
_WRAPPERS = (_TORCH + "_compile.py", _TORCH + "_dynamo" + os.sep)
_ENGINE = ("_engine_run_backward", _TORCH + os.path.join("autograd", "graph.py"))
#: Where a stack through the engine ends (see the module): its thread on a GPU.
ENGINE_FRAME: Frame = {"filename": "<autograd device thread>", "line": 0,
                       "name": "torch::autograd::Engine::thread_main"}


_KEEP, _DROP, _WRAPPER, _END = range(4)


def _kind(code: CodeType) -> int:
    """Whether a frame of this code is one a run on a GPU would record (_KEEP), not
    (_DROP), only once the stack has one (_WRAPPER), or the autograd engine's (_END)."""
    name = code.co_filename
    if (code.co_name, name) == _ENGINE:
        return _END
    if name.startswith(_TOOL):
        return _KEEP if name.startswith(_EXAMPLES) else _DROP
    if name.startswith(_MACHINERY) or name in _RUNPY:
        return _DROP
    return _WRAPPER if name.startswith(_WRAPPERS) else _KEEP


class History:
    """The allocator's events as they happen (`record`), and what the snapshot's state needs:
    the frames of each live allocation and of each segment held, with the index of the
    event that made it (a snapshot whose trace begins later shows none, as PyTorch's)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.allocation_frames: dict[Hashable, tuple[int, list[Frame]]] = {}  # live key →
        self.segment_frames: dict[int, tuple[int, list[Frame]]] = {}  # segment address →
        self._kinds: dict[CodeType, int] = {}
        self._frames: dict[tuple[CodeType, int], Frame] = {}
        self._stacks: dict[tuple, list[Frame]] = {}

    def stack(self) -> list[Frame]:
        """The script's frames here, innermost first (see the module)."""
        found: list[tuple[CodeType, int] | None] = []
        frame = sys._getframe(1)
        while frame is not None:
            code = frame.f_code
            kind = self._kinds.get(code)
            if kind is None:
                kind = self._kinds[code] = _kind(code)
            if kind == _END:  # the engine: its thread has no Python frames further out
                found.append(None)
                break
            if kind == _KEEP or (kind == _WRAPPER and found):
                found.append((code, frame.f_lineno))
            frame = frame.f_back
        key = tuple(found)
        frames = self._stacks.get(key)
        if frames is None:
            frames = self._stacks[key] = [ENGINE_FRAME if at is None else self._frame(*at)
                                          for at in key]
        return frames

    def _frame(self, code: CodeType, line: int) -> Frame:
        frame = self._frames.get((code, line))
        if frame is None:
            frame = self._frames[(code, line)] = {
                "filename": code.co_filename, "line": line, "name": code.co_name}
        return frame

    def record(self, action: str, addr: int, size: int, frames: list[Frame]) -> None:
        self.events.append({"action": action, "addr": addr, "size": size, "stream": 0,
                            "frames": frames})

    def allocated(self, key: Hashable, addr: int, nbytes: int) -> None:
        frames = self.stack()
        self.allocation_frames[key] = (len(self.events), frames)
        self.record("alloc", addr, nbytes, frames)

    def freed(self, key: Hashable, addr: int, nbytes: int) -> None:
        """A free: requested and completed at once (one stream, no events to wait for)."""
        self.allocation_frames.pop(key, None)
        frames = self.stack()
        self.record("free_requested", addr, nbytes, frames)
        self.record("free_completed", addr, nbytes, frames)

    def segment(self, action: str, addr: int, size: int) -> None:
        frames = self.stack()
        if action == "segment_alloc":
            self.segment_frames[addr] = (len(self.events), frames)
        else:
            self.segment_frames.pop(addr, None)
        self.record(action, addr, size, frames)

    def out_of_memory(self, nbytes: int, device_free: int) -> None:
        self.events.append({"action": "oom", "device_free": device_free, "size": nbytes,
                            "stream": 0, "frames": self.stack()})
