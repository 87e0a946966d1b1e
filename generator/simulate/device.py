"""The simulated GPU as the script's `torch.cuda` sees it, for as long as the run lasts.

`answered(...)` replaces, and on exit puts back, what PyTorch would otherwise answer from
the driver: the queries of `torch.cuda` (availability, the device's name, properties and
capability from the catalogue, gpus.py; the memory statistics from the simulation,
memory.py), a simulated tensor's `device` (FakeTensor's property; placement.py knows which
are on the GPU), autocast and the optimizers' choice of kernels, which both go by the device:

- `torch.autocast("cuda", …)` (and `torch.cuda.amp.autocast`) becomes CPU autocast with
  CUDA's op policy, which the estimate's CudaKernelPolicy (measure/emulation) gives CPU
  autocast; CUDA autocast's default dtype is float16.
- torch.optim picks its foreach kernels for CUDA tensors of the plain tensor types
  (`_default_to_fused_or_foreach`); a simulated tensor's type is FakeTensor, so it is one of
  those types meanwhile.
- `torch.profiler.profile(activities=[..., ProfilerActivity.CUDA], with_stack=True)`
  profiles without the CUDA activity and without Python stacks: the simulated GPU launches
  no kernel for it to trace, and a build without CUDA fails to record a CUDA event at every
  op (a C++ stack trace each, minutes for one step); the Python tracer would record every
  call of the simulation's own fake-tensor dispatch (a 600 MB trace for two steps of a
  two-layer BERT). The CPU activity, shapes and memory events stay as the script asked.

What the simulation cannot run is refused by name (UnmodelledError): a custom CUDA extension
compiled with torch.utils.cpp_extension, and a Triton kernel launched (where Triton is
installed).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Callable

import torch
import torch.profiler.profiler
import torch.utils.cpp_extension
from torch._subclasses.fake_tensor import FakeTensor

from generator.errors import UnmodelledError
from generator.gpus import GPU as CatalogueGpu
from generator.simulate.memory import DeviceMemory
from generator.simulate.placement import GPU, DeviceStorages
from generator.simulate.values import Placeholders

#: torch.optim.optimizer (the package's name `optimizer` is not the module).
_OPTIMIZER = importlib.import_module("torch.optim.optimizer")


@dataclass(frozen=True)
class DeviceProperties:
    """What `torch.cuda.get_device_properties()` tells of the simulated GPU."""

    name: str
    total_memory: int
    major: int
    minor: int
    is_integrated: bool = False

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // 2**20}MB) (simulated)")


def _queries(gpu: CatalogueGpu, memory_bytes: int, memory: DeviceMemory,
             context_bytes: int, values: Placeholders, devices: int) -> dict[str, Callable]:
    """torch.cuda's functions, answered by the simulated GPU."""
    major, minor = gpu.overheads.compute_capability
    properties = DeviceProperties(gpu.name, memory_bytes, major, minor)

    def mem_get_info(device: Any = None) -> tuple[int, int]:
        free = memory_bytes - context_bytes - memory.reserved_bytes
        return max(0, free), memory_bytes

    def nothing(*_args: Any, **_kwargs: Any) -> None:
        return None

    return {
        "is_available": lambda: True,
        "is_initialized": lambda: True,
        "_lazy_init": nothing,
        "init": nothing,
        "device_count": lambda: devices,
        "current_device": lambda: 0,
        "set_device": nothing,
        "synchronize": nothing,
        "get_device_name": lambda device=None: gpu.name,
        "get_device_properties": lambda device=None: properties,
        "get_device_capability": lambda device=None: (major, minor),
        "is_bf16_supported": lambda including_emulation=True: major >= 8,
        "mem_get_info": mem_get_info,
        "memory_allocated": lambda device=None: memory.allocated_bytes,
        "max_memory_allocated": lambda device=None: memory.peak_allocated_bytes,
        "memory_reserved": lambda device=None: memory.reserved_bytes,
        "max_memory_reserved": lambda device=None: memory.peak_reserved_bytes,
        "reset_peak_memory_stats": lambda device=None: memory.reset_peak_stats(),
        "reset_max_memory_allocated": lambda device=None: memory.reset_peak_stats(),
        "empty_cache": memory.empty_cache,
        "memory_stats": _memory_stats(memory),
        "Stream": Stream,
        "Event": _event_class(values),
        "current_stream": lambda device=None: _STREAM,
        "default_stream": lambda device=None: _STREAM,
        "stream": lambda stream=None: contextlib.nullcontext(stream),
    }


class Stream:
    """A CUDA stream of the simulated GPU: one stream, on which everything is in order."""

    device = GPU

    def __init__(self, device: Any = None, priority: int = 0, **_kwargs: Any) -> None:
        self.priority = priority

    def synchronize(self) -> None:
        pass

    def wait_stream(self, stream: "Stream") -> None:
        pass

    def wait_event(self, event: "Event") -> None:
        pass

    def record_event(self, event: "Event | None" = None) -> "Event":
        event = event or Event()
        event.record(self)
        return event

    def query(self) -> bool:
        return True

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


class Event:
    """A CUDA event of the simulated GPU: nothing runs, so every event has completed and
    no time passes between two (in a run, a timing read is a placeholder, values.py)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False, **_kwargs: Any) -> None:
        self.enable_timing = enable_timing

    def record(self, stream: Stream | None = None) -> None:
        pass

    def wait(self, stream: Stream | None = None) -> None:
        pass

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end_event: "Event") -> float:
        return 0.0


#: The simulated GPU's one stream.
_STREAM = Stream()


def _event_class(values: Placeholders) -> type[Event]:
    """Event, its timing read noted as a placeholder among the run's `values`."""

    class SimulatedEvent(Event):
        def elapsed_time(self, end_event: Event) -> float:
            values.read("elapsed_time")
            return 0.0

    return SimulatedEvent


def _memory_stats(memory: DeviceMemory) -> Callable:
    """torch.cuda.memory_stats(): the keys of the figures the simulation keeps."""

    def memory_stats(device: Any = None) -> dict[str, int]:
        return {"allocated_bytes.all.current": memory.allocated_bytes,
                "allocated_bytes.all.peak": memory.peak_allocated_bytes,
                "reserved_bytes.all.current": memory.reserved_bytes,
                "reserved_bytes.all.peak": memory.peak_reserved_bytes,
                "active_bytes.all.current": memory.allocated_bytes,
                "active_bytes.all.peak": memory.peak_allocated_bytes,
                "num_ooms": memory.ooms}

    return memory_stats


def _refused(name: str) -> Callable:
    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise UnmodelledError(f"the script calls {name} (a custom CUDA extension), which "
                              "the simulated GPU cannot model")
    return refuse


def _triton_kernels() -> type | None:
    """Triton's JITFunction, where Triton is installed: its kernels launch through `run`."""
    try:
        if importlib.util.find_spec("triton") is None:
            return None
        return importlib.import_module("triton.runtime.jit").JITFunction
    except (ImportError, ValueError, AttributeError):
        return None


def _refused_kernel(self: Any, *_args: Any, **_kwargs: Any) -> None:
    name = getattr(getattr(self, "fn", None), "__name__", "?")
    raise UnmodelledError(f"the script launches a Triton kernel ({name}), which the simulated "
                          "GPU cannot model")


@contextlib.contextmanager
def _replaced(owner: Any, values: dict[str, Any]) -> Iterator[None]:
    """Set attributes of `owner` for the block, then put the old ones back (or remove the
    ones it did not have)."""
    missing = object()
    before = {name: owner.__dict__.get(name, missing) for name in values}
    try:
        for name, value in values.items():
            setattr(owner, name, value)
        yield
    finally:
        for name, value in before.items():
            if value is missing:
                delattr(owner, name)
            else:
                setattr(owner, name, value)


def _device_property(storages: DeviceStorages, original: property) -> property:
    """FakeTensor.device: the simulated GPU for a tensor on it, seen from the script; inside
    an op (FakeTensorMode's own code) the fake CPU device it runs on."""

    def device(self: FakeTensor) -> torch.device:
        if not storages.in_op() and storages.holds(self):
            return GPU
        return original.fget(self)

    return property(device)


def _autocast_init(original: Callable) -> Callable:
    """torch.autocast.__init__, CUDA's autocast made CPU autocast (see the module)."""

    def __init__(self, device_type: str, dtype: torch.dtype | None = None, *args: Any,
                 **kwargs: Any) -> None:
        if device_type == "cuda":
            device_type, dtype = "cpu", dtype or torch.float16
        original(self, device_type, dtype, *args, **kwargs)

    return __init__


def _profiler_init(original: Callable) -> Callable:
    """torch.profiler's __init__ without the CUDA activity and Python stacks (see the
    module)."""
    cuda = torch.profiler.ProfilerActivity.CUDA

    def __init__(self, *args: Any, activities: Any = None, with_stack: bool = False,
                 **kwargs: Any) -> None:
        if activities is not None:
            activities = [({k: v for k, v in a.items() if k != cuda} if isinstance(a, dict)
                           else a) for a in activities if a != cuda]
        original(self, *args, activities=activities, with_stack=False, **kwargs)

    return __init__


@contextlib.contextmanager
def answered(gpu: CatalogueGpu, memory_bytes: int, memory: DeviceMemory,
             storages: DeviceStorages, context_bytes: int, *, devices: int = 1
             ) -> Iterator[None]:
    """The simulated GPU in torch.cuda's answers (see the module), until the block ends.
    devices: how many GPUs the machine has (device_count()); the script's is the first."""
    autocast = torch.amp.autocast_mode.autocast
    foreach_types = _OPTIMIZER._foreach_supported_types
    with contextlib.ExitStack() as undo:
        undo.enter_context(_replaced(torch.cuda, _queries(gpu, memory_bytes, memory,
                                                          context_bytes, storages.values,
                                                          devices)))
        undo.enter_context(_replaced(FakeTensor, {
            "device": _device_property(storages, FakeTensor.__dict__["device"])}))
        undo.enter_context(_replaced(autocast, {"__init__": _autocast_init(autocast.__init__)}))
        profiler = torch.profiler.profiler._KinetoProfile
        undo.enter_context(_replaced(profiler, {"__init__": _profiler_init(profiler.__init__)}))
        undo.enter_context(_replaced(torch.utils.cpp_extension, {
            name: _refused(f"torch.utils.cpp_extension.{name}")
            for name in ("load", "load_inline")}))
        triton = _triton_kernels()
        if triton is not None:
            undo.enter_context(_replaced(triton, {"run": _refused_kernel}))
        foreach_types.append(FakeTensor)
        undo.callback(foreach_types.remove, FakeTensor)
        yield
