"""The simulated GPU as the script's `torch.cuda` sees it, for as long as the run lasts.

`answered(...)` replaces, and on exit puts back, what PyTorch would otherwise answer from
the driver: the queries of `torch.cuda` (availability, the device's name, properties and
capability from the catalogue, gpus.py; the memory statistics from the simulation,
memory.py, and the per-process memory fraction, which caps its allocator), a simulated tensor's `device` (FakeTensor's property; placement.py knows which
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

Frameworks (transformers' Trainer, accelerate, Lightning Fabric, PEFT, bitsandbytes) ask
more than a script does, some of it below torch.cuda's public functions; each answer names
the framework that needs it: `torch.accelerator` (accelerate picks its device there), CUDA's
random generator (every `set_seed`), the current device as `torch.cuda.device(i)` exchanges
it, autocast's state asked as "cuda" (PEFT, checkpoint's recomputation), pinned host memory
(DataLoader's `pin_memory`, on once an accelerator is there), and functions of `torch._C` a
CPU build lacks.

What the simulation cannot run is refused by name (UnmodelledError): a custom CUDA extension
compiled with torch.utils.cpp_extension, and a Triton kernel launched (where Triton is
installed).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Callable

import torch
import torch.profiler.profiler
import torch.utils.cpp_extension
from torch._subclasses.fake_tensor import FakeTensor, unset_fake_temporarily

from generator.errors import UnmodelledError
from generator.gpus import GPU as CatalogueGpu
from generator.simulate.memory import DeviceMemory
from generator.simulate.placement import GPU, DeviceStorages
from generator.simulate.values import Placeholders
from generator.units import format_bytes

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
        "memory_summary": _memory_summary(memory, gpu.name),
        "Stream": Stream,
        "Event": _event_class(values),
        "current_stream": lambda device=None: _STREAM,
        "default_stream": lambda device=None: _STREAM,
        "stream": lambda stream=None: contextlib.nullcontext(stream),
        # `torch.cuda.device(i)` and `device_of(t)` (bitsandbytes' `_cuda_device_of`) swap
        # the current device through these: one device, so the previous one is 0
        "_exchange_device": lambda device: 0,
        "_maybe_exchange_device": lambda device: 0,
        # torch.optim's CUDA-graph check and accelerate ask it; nothing is captured
        "is_current_stream_capturing": lambda: False,
    }


#: torch.cuda's memory functions, also answered in torch.cuda.memory, their home, where a
#: script's `torch.cuda.memory.max_memory_allocated` looks.
_MEMORY = ("mem_get_info", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "reset_peak_memory_stats", "reset_max_memory_allocated",
           "empty_cache", "memory_stats", "memory_summary")


class Generator:
    """The simulated GPU's random generator, as torch.cuda.random sees it: a seed, and the
    state a checkpoint saves (CUDA's Philox state: the seed and an offset, 8 bytes each).
    The simulation draws no random numbers on the GPU (its tensors are fake), so nothing
    moves the offset. Every `set_seed` seeds it (transformers', accelerate's, Lightning's
    `seed_everything`); Trainer's and accelerate's checkpoints save and load its state. A
    CPU build has no CUDA generator to answer them."""

    #: CUDA's default seed (c10/core/GeneratorImpl.h default_rng_seed_val)
    DEFAULT_SEED = 67280421310721

    def __init__(self) -> None:
        self.seed = self.DEFAULT_SEED
        self.state: torch.Tensor | None = None  # as last set, else made from the seed

    def manual_seed(self, seed: int) -> None:
        self.seed, self.state = int(seed) & (2**64 - 1), None

    def new_seed(self) -> None:
        self.manual_seed(random.getrandbits(63))  # as torch.seed() draws a fresh one

    def get_state(self, device: Any = "cuda") -> torch.Tensor:
        """A new host tensor, as a GPU's state is (a real one: its values are known)."""
        data = list(self.seed.to_bytes(8, "little")) + [0] * 8  # the offset: nothing drawn
        with unset_fake_temporarily():
            if self.state is not None:
                return self.state.clone()
            return torch.tensor(data, dtype=torch.uint8)

    def set_state(self, state: torch.Tensor, device: Any = "cuda") -> None:
        self.state = state  # get_state copies it

    def functions(self) -> dict[str, Callable]:
        """torch.cuda.random's functions (also torch.cuda's), answered by this generator."""
        return {
            "manual_seed": self.manual_seed,
            "manual_seed_all": self.manual_seed,
            "seed": self.new_seed,
            "seed_all": self.new_seed,
            "initial_seed": lambda: self.seed,
            "get_rng_state": self.get_state,
            "get_rng_state_all": lambda: [self.get_state()],
            "set_rng_state": self.set_state,
            "set_rng_state_all": lambda states: self.set_state(list(states)[0]),
        }


def _accelerator(queries: dict[str, Callable]) -> dict[str, Callable]:
    """torch.accelerator's functions, answered by the simulated GPU: a CPU build has no
    accelerator, and accelerate (`get_torch_accelerator_backend`: Accelerator's device,
    its AMP and checkpointing), Trainer (through accelerate) and DataLoader's pin_memory
    ask here before they ask torch.cuda."""
    memory = {name: queries[name] for name in _MEMORY if name != "mem_get_info"}
    return {
        **memory,
        "current_accelerator": lambda check_available=False: torch.device("cuda"),
        "is_available": lambda: True,
        "device_count": queries["device_count"],
        "current_device_index": lambda: 0,
        "current_device_idx": lambda: 0,
        "set_device_index": lambda device: None,
        "set_device_idx": lambda device: None,
        "device_index": lambda device: contextlib.nullcontext(),
        "synchronize": lambda device=None: None,
        "current_stream": lambda device=None: _STREAM,
        "set_stream": lambda stream: None,
        "get_device_capability": lambda device=None: queries["get_device_capability"](),
        "get_memory_info": queries["mem_get_info"],
        "reset_accumulated_memory_stats": lambda device=None: None,
    }


class Stream:
    """A CUDA stream of the simulated GPU: one stream, on which everything is in order."""

    device, device_type, device_index = GPU, GPU.type, 0
    #: The stream's handle (cudaStream_t) as frameworks pass it to their kernels: none
    cuda_stream = stream_id = 0

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

    def is_capturing(self) -> bool:
        """No CUDA graph is captured (torch.optim asks, once torch.accelerator answers)."""
        return False

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


def _memory_fraction(memory: DeviceMemory, memory_bytes: int) -> dict[str, Callable]:
    """torch._C's entry points of torch.cuda.set_per_process_memory_fraction and
    get_per_process_memory_fraction (PyTorch's own functions check the fraction first): the
    allocator may reserve `fraction` of the GPU's total memory, as CUDACachingAllocator's
    setMemoryFraction allows it; 1.0 until the script sets one."""
    fraction = [1.0]

    def set_fraction(value: float, device: Any = None) -> None:
        fraction[0] = value
        memory.limit(int(value * memory_bytes))

    return {"_cuda_setMemoryFraction": set_fraction,
            "_cuda_getMemoryFraction": lambda device=None: fraction[0]}


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


def _memory_summary(memory: DeviceMemory, gpu_name: str) -> Callable:
    """torch.cuda.memory_summary(): the figures the simulation keeps, in a table of
    PyTorch's look. PyTorch's own builds its table from memory_stats' per-pool counts of
    blocks and segments, which the simulation does not keep; this one names what it has."""

    def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
        rule = "|" + "=" * 75 + "|"
        rows = [("Allocated memory", memory.allocated_bytes, memory.peak_allocated_bytes),
                ("Reserved memory", memory.reserved_bytes, memory.peak_reserved_bytes)]
        lines = [rule, f"| {'PyTorch CUDA memory summary, device ID 0 (simulated)':<73} |",
                 f"| {gpu_name:<73} |", rule,
                 f"| {'Metric':<33} | {'Cur Usage':>17} | {'Peak Usage':>17} |", rule]
        lines += [f"| {name:<33} | {format_bytes(now):>17} | {format_bytes(peak):>17} |"
                  for name, now, peak in rows]
        lines += [rule, f"| {'Out-of-memory errors: ' + str(memory.ooms):<73} |", rule]
        return "\n".join(lines) + "\n"

    return memory_summary


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


#: torch._C's CUDA functions that a CPU build lacks, which frameworks call directly.
_C_ENTRY_POINTS: dict[str, Callable] = {
    # bitsandbytes (imported by PEFT, so by transformers' Trainer) reads it as it imports its
    # CUDA backend (backends/cuda/ops.py) where torch.cuda.is_available(): the stream's handle
    "_cuda_getCurrentRawStream": lambda device=None: 0,
    # torch.cuda.random's functions and torch.cuda.device ask the current device here, by
    # names they imported before any run (so torch.cuda's answers do not reach them)
    "_cuda_getDevice": lambda: 0,
}


def _autocast_queries() -> dict[str, Callable]:
    """torch.is_autocast_enabled and torch.get_autocast_dtype, "cuda" answered by the CPU
    autocast that CUDA's becomes (see the module). PEFT's LoRA layers over bitsandbytes
    ask `torch.is_autocast_enabled()` to decide whether to cast their input;
    torch.utils.checkpoint reads both to recompute a block in the forward pass's autocast."""
    enabled, dtype = torch.is_autocast_enabled, torch.get_autocast_dtype

    def is_autocast_enabled(device_type: str = "cuda") -> bool:
        return enabled("cpu" if device_type == "cuda" else device_type)

    def get_autocast_dtype(device_type: str) -> torch.dtype:
        if device_type == "cuda":  # CUDA autocast's default is float16 (see the module)
            return dtype("cpu") if enabled("cpu") else torch.float16
        return dtype(device_type)

    return {"is_autocast_enabled": is_autocast_enabled, "get_autocast_dtype": get_autocast_dtype}


def _pin_memory(tensor: torch.Tensor, device: Any = None) -> torch.Tensor:
    """Tensor.pin_memory: the tensor, in host memory, which the simulation does not count
    (fake tensors have no pinned memory to make). DataLoader pins each batch once an
    accelerator is there (Trainer's `dataloader_pin_memory`, on by default)."""
    return tensor


@contextlib.contextmanager
def answered(gpu: CatalogueGpu, memory_bytes: int, memory: DeviceMemory,
             storages: DeviceStorages, context_bytes: int, *, devices: int = 1
             ) -> Iterator[None]:
    """The simulated GPU in torch.cuda's answers (see the module), until the block ends.
    devices: how many GPUs the machine has (device_count()); the script's is the first."""
    autocast = torch.amp.autocast_mode.autocast
    foreach_types = _OPTIMIZER._foreach_supported_types
    queries = _queries(gpu, memory_bytes, memory, context_bytes, storages.values, devices)
    generator = Generator().functions()
    with contextlib.ExitStack() as undo:
        undo.enter_context(_replaced(torch.cuda, {**queries, **generator}))
        undo.enter_context(_replaced(torch.cuda.memory,
                                     {name: queries[name] for name in _MEMORY}))
        undo.enter_context(_replaced(torch.cuda.random, generator))
        accelerator = _accelerator(queries)
        undo.enter_context(_replaced(torch.accelerator, accelerator))
        undo.enter_context(_replaced(torch.accelerator.memory, {
            name: accelerator[name] for name in dir(torch.accelerator.memory)
            if name in accelerator}))
        undo.enter_context(_replaced(torch._C, {**_C_ENTRY_POINTS,
                                                **_memory_fraction(memory, memory_bytes)}))
        undo.enter_context(_replaced(torch, _autocast_queries()))
        undo.enter_context(_replaced(torch.Tensor, {"pin_memory": _pin_memory}))
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
