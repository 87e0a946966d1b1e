"""Which simulated tensors are on the GPU, and their memory as they come and go.

A CPU-only PyTorch cannot run autograd on fake CUDA tensors (its autograd asks CUDA for a
device guard and aborts the process), so, as the estimate does, every tensor of the script
is a fake CPU tensor (FakeTensorMode, entered by session.py), and being on the GPU is
bookkeeping kept here:

- `Placement`, a TorchFunctionMode, sees the script's calls as it makes them. A device
  argument that names CUDA (`device="cuda"`, `.to("cuda")`, `.cuda()`, `Module.to(...)`,
  which calls `.to` on each tensor) is replaced by the CPU, and the storages the call makes
  are put on the GPU; a move between the host and the GPU is made a copy, as on a real
  device (`.to` of a fake CPU tensor to the CPU would return the tensor itself). It answers
  `is_cuda` and `get_device()` from that bookkeeping (a tensor's values: values.py).
- `DeviceStorages`, a TorchDispatchMode above FakeTensorMode, sees every op. A storage an
  op makes is on the GPU when the call placed it there or when any of the op's inputs is on
  the GPU (as CUDA kernels write CUDA outputs); it is allocated at once in the device's
  memory (memory.py), which raises out of memory where the GPU could not hold it, and freed
  when its last tensor goes (a weak reference to the storage). The first matrix product of
  each thread takes a cuBLAS workspace from the allocator, as PyTorch's handle pool does
  (aten/src/ATen/cuda/CublasHandlePool.cpp; sizes in plan/gpus.py).

Modelling the CPU instead (`every_storage`), every storage the script makes is the device's,
and the buffers the CPU's kernels hold while they run (measure/emulation/cpu_kernels.py)
are allocated around the op, as the estimate's tracker counts them.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import torch
from torch import nn
from torch._ops import HigherOrderOperator
from torch._subclasses.fake_tensor import (DataDependentOutputException,
                                          DynamicOutputShapeException, FakeTensor,
                                          unset_fake_temporarily)
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode, is_traceable_wrapper_subclass
from torch.utils._pytree import tree_flatten, tree_map

from generator.measure.emulation.cpu_kernels import kernel_buffers
from generator.measure.tracking.sharded_tracker import local_storages
from generator.measure.tracking.tracker import own_storage
from generator.simulate import unmodelled
from generator.simulate.host_data import UNIQUE, device_type, stays_real, values_kept
from generator.simulate.memory import DeviceMemory
from generator.simulate.values import Placeholders

aten = torch.ops.aten
#: The simulated GPU as tensors name it.
GPU = torch.device("cuda", 0)
_SCALAR = (aten._local_scalar_dense.default, aten.item.default)
#: The ops that run a cuBLAS matrix product on CUDA.
_MATMULS = {aten.mm.default, aten.addmm.default, aten.bmm.default, aten.baddbmm.default,
            aten.addbmm.default, aten._addmm_activation.default}
_IS_CUDA = torch.Tensor.is_cuda.__get__


def names_cuda(device: Any) -> bool:
    """Whether a device argument (a str, int index or torch.device) names the CUDA GPU."""
    if device is None:
        return False
    if isinstance(device, int):  # a bare index means a CUDA device
        return True
    try:
        return torch.device(device).type == "cuda"
    except (RuntimeError, TypeError):
        return False


def _named(device: Any) -> Any:
    """A bare device index as the CUDA device it names (bools are .to's flags)."""
    if isinstance(device, int) and not isinstance(device, bool):
        return torch.device("cuda", device)
    return device


def _storages(tensor: object) -> list[torch.UntypedStorage]:
    """The fake storages a tensor holds: its own, or a wrapper's (a DTensor's local shard)."""
    if is_traceable_wrapper_subclass(tensor):
        return local_storages(tensor)
    # a meta tensor (a model built under `torch.device("meta")`, as from_pretrained builds
    # it) holds no memory on any device; a real one is the script's data (host_data.py)
    if not isinstance(tensor, torch.Tensor) or device_type(tensor) == "meta":
        return []
    storage = own_storage(tensor)
    return [] if storage is None else [storage]


class DeviceStorages(TorchDispatchMode):
    """The storages on the simulated device, each allocated in `memory` while it lives."""

    #: Higher-order ops come here whole (see _higher_order).
    supports_higher_order_operators = True

    def __init__(self, memory: DeviceMemory, values: Placeholders, *, every_storage: bool,
                 workspace_bytes: int = 0, workspaces: int = 0) -> None:
        super().__init__()
        self.memory, self.values = memory, values
        self.every_storage = every_storage
        self.workspace_bytes, self.workspaces = workspace_bytes, workspaces
        self._threads_with_workspace: set[int | str] = set()
        self._refs: dict[int, weakref.ref] = {}  # id(storage) → a weak reference to it
        #: id(fake tensor) → (a weak reference to it, its values): data on the GPU
        self._values_of: dict[int, tuple[weakref.ref, torch.Tensor]] = {}
        self._local = threading.local()  # per thread: placing, depth

    # -- the bookkeeping -----------------------------------------------------------------------
    def holds(self, tensor: object) -> bool:
        """Whether `tensor`'s storage is on the device (a wrapper's, such as a DTensor's:
        its local shard's)."""
        return any(id(storage) in self._refs for storage in _storages(tensor))

    def in_op(self) -> bool:
        """Whether this thread is inside an op (FakeTensorMode's own code runs there)."""
        return getattr(self._local, "depth", 0) > 0

    @contextlib.contextmanager
    def placing(self, where: str | None) -> Iterator[None]:
        """Storages made meanwhile go to "device" or stay on the "host" whatever their
        inputs (a move); None: by their inputs."""
        before = getattr(self._local, "placing", None)
        self._local.placing = where
        try:
            yield
        finally:
            self._local.placing = before

    def place(self, tensor: torch.Tensor) -> None:
        """`tensor`'s storage is on the device from now: one made outside any op the device
        saw (a checkpoint's, which torch.load makes without an op, weights.py; a generator's
        state, rng_states.py)."""
        for storage in _storages(tensor):
            self._add(storage)

    def forget(self) -> None:
        """Stop watching: frees after the run are not the run's."""
        self._refs.clear()
        self._values_of.clear()

    def _add(self, storage: torch.UntypedStorage) -> None:
        key = id(storage)
        if key in self._refs or storage.nbytes() == 0:
            return
        self.memory.allocate(key, storage.nbytes())  # out of memory raises here
        self._refs[key] = weakref.ref(storage, functools.partial(self._died, key))

    @contextlib.contextmanager
    def resizes_followed(self) -> Iterator[None]:
        """FSDP2 frees a gathered weight with `storage.resize_(0)` and grows it again with
        `resize_(n)` before its next use: the storage object lives on, so its weak reference
        never sees the free. While the block lasts, shrinking a storage on the device frees
        its memory and growing it again allocates it (as the estimate's sharded_tracker
        does)."""
        original = torch.UntypedStorage.resize_
        shrunk: dict[int, weakref.ref] = {}  # on the device, resized to nothing

        def resize_(storage: torch.UntypedStorage, size: int) -> Any:
            key = id(storage)
            on_device = key in self._refs or key in shrunk
            if self._refs.pop(key, None) is not None:  # its weak reference goes, unfired
                self.memory.free(key)
            out = original(storage, size)
            if on_device and size > 0:
                shrunk.pop(key, None)
                self._add(storage)
            elif on_device:
                shrunk[key] = weakref.ref(storage, lambda _ref: shrunk.pop(key, None))
            return out

        torch.UntypedStorage.resize_ = resize_
        try:
            yield
        finally:
            torch.UntypedStorage.resize_ = original

    # -- the script's data on the GPU, with its values --------------------------------------
    def knows_values(self, tensor: FakeTensor) -> bool:
        """Whether a fake tensor's values are kept beside it (see _with_values)."""
        return id(tensor) in self._values_of

    def _known(self, tensor: torch.Tensor) -> bool:
        """Whether a tensor's values are known: a real one (the script's data on the host),
        or a fake one made from such data alone (its values kept beside it)."""
        if isinstance(tensor, FakeTensor):
            return id(tensor) in self._values_of
        return not is_traceable_wrapper_subclass(tensor) and device_type(tensor) != "meta"

    def _with_values(self, func: Any, args: tuple, kwargs: dict, known: bool) -> Any:
        """The op on fake tensors; where its inputs' values are all known (data moved to the
        GPU, and what is computed from it alone: masks, counts of tokens, shifted labels),
        also on those values, kept beside the fake outputs, so that a script reads them as
        they are (`.item()`, `.tolist()`, `range(n_tokens)`) and an op whose output's shape
        depends on them (`nonzero`, `unique`, a boolean mask) gets that shape. Values are
        kept for outputs of integers and truth values (ids, masks, counts) up to VALUES_LIMIT
        elements per op, of other numbers up to FEW_NUMBERS, never for a parameter (its weights are fake, and a parameter is
        swapped in place, which a weak reference forbids); beyond that, and where any input
        is unknown, a value an op writes into is forgotten."""
        try:
            out = func(*args, **kwargs)
        except (DataDependentOutputException, DynamicOutputShapeException):
            if not known and func.overloadpacket not in UNIQUE:
                raise
            if not known:  # unique of unknown values: of their placeholders (host_data.UNIQUE)
                self.values.read("unique")
            values = self._run_on_values(func, args, kwargs)
            mode = torch._C._get_dispatch_mode(torch._C._TorchDispatchModeKey.FAKE)
            out = tree_map(lambda v: mode.from_tensor(v) if isinstance(v, torch.Tensor)
                           else v, values)
            if known:
                self._keep(out, values)
            return out
        outputs = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]
        if known and outputs and values_kept(outputs) and not any(
                isinstance(t, nn.Parameter) for t in tree_flatten((args, kwargs))[0]):
            self._keep(out, self._run_on_values(func, args, kwargs))
        elif func._schema.is_mutable:  # written without its values: they are unknown now
            for tensor in tree_flatten((args, kwargs))[0]:
                if isinstance(tensor, FakeTensor):
                    self._values_of.pop(id(tensor), None)
        return out

    def _run_on_values(self, func: Any, args: tuple, kwargs: dict) -> Any:
        """The op on its inputs' values: those kept, else their placeholders (zeros)."""
        def value(item: Any) -> Any:
            if isinstance(item, FakeTensor):
                kept = self._values_of.get(id(item))
                return torch.zeros(item.shape, dtype=item.dtype) if kept is None else kept[1]
            return item
        with unset_fake_temporarily():
            return func(*tree_map(value, args), **tree_map(value, kwargs))

    def _keep(self, out: Any, values: Any) -> None:
        for fake, real in zip(tree_flatten(out)[0], tree_flatten(values)[0]):
            if isinstance(fake, FakeTensor) and isinstance(real, torch.Tensor):
                key = id(fake)
                self._values_of[key] = (weakref.ref(
                    fake, lambda _ref, key=key: self._values_of.pop(key, None)), real)

    def _died(self, key: int, _ref: weakref.ref) -> None:
        if self._refs.pop(key, None) is not None:
            self.memory.free(key)

    def _workspace(self) -> None:
        """A cuBLAS workspace for this thread's handle, at its first matrix product. On
        CUDA, backward runs on autograd's device thread (its own handle); fake CPU tensors
        run it on the caller's, so backward counts as a thread of its own."""
        in_backward = torch._C._current_autograd_node() is not None
        thread = "backward" if in_backward else threading.get_ident()
        if (thread not in self._threads_with_workspace
                and len(self._threads_with_workspace) < self.workspaces):
            self._threads_with_workspace.add(thread)
            self.memory.allocate(("cublas workspace", thread), self.workspace_bytes,
                                 tensor=False)

    # -- every op ------------------------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if isinstance(func, HigherOrderOperator):
            return self._higher_order(func, args, kwargs)
        if func in _SCALAR:
            return self._scalar(func, args, kwargs)
        placing = getattr(self._local, "placing", None)
        if names_cuda(kwargs.get("device")):
            # an op called with CUDA's device below Placement (torch.ops.aten.empty(…,
            # device=x.device) of a tensor on the GPU): a fake CUDA tensor would abort autograd
            kwargs, placing = {**kwargs, "device": torch.device("cpu")}, "device"
        inputs = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
        # A DTensor's op runs its local ops below this mode, unseen: its inputs and outputs
        # are counted by their local shards' storages.
        on_device = placing == "device" or (placing is None and (
            self.every_storage or any(self.holds(t) for t in inputs)))
        if on_device and self.workspace_bytes and func in _MATMULS:
            self._workspace()
        real = placing != "device" and stays_real(func, args, kwargs, inputs)
        held = []
        if self.every_storage:  # the CPU kernel's own buffers, alive while it runs
            for index, nbytes in enumerate(kernel_buffers(func, args, kwargs)):
                key = ("kernel buffer", id(args), index)
                self.memory.allocate(key, nbytes, tensor=False)
                held.append(key)
        known = not real and bool(inputs) and all(self._known(t) for t in inputs)
        try:
            out = self._run(func, args, kwargs, real=real, known=known)
            if on_device:
                # An output on an input's storage (in place, a view, out=) stays where that
                # input is: `host.copy_(gpu)` writes host memory.
                given = {id(storage) for t in inputs for storage in _storages(t)}
                for tensor in tree_flatten(out)[0]:
                    for storage in _storages(tensor):
                        if id(storage) not in given:
                            self._add(storage)
        finally:
            # The kernel's buffers die after its outputs are born: they are measured beside
            # the outputs (onednn_conv_probes.peak_beyond_outputs), as a oneDNN matmul holds
            # its packed operands once its output is allocated.
            for key in held:
                self.memory.free(key)
        return out

    def _run(self, func, args: tuple, kwargs: dict, *, real: bool, known: bool) -> Any:
        """The op itself: on real tensors (the script's data) or on fake ones."""
        self._local.depth = getattr(self._local, "depth", 0) + 1
        try:
            if real:
                with unset_fake_temporarily():
                    return func(*args, **kwargs)
            return self._with_values(func, args, kwargs, known)
        except unmodelled.OPS_REFUSED as error:  # one line naming the op (unmodelled.py)
            raise unmodelled.refused(func, error) from None
        finally:
            self._local.depth -= 1

    def _higher_order(self, func: HigherOrderOperator, args: tuple, kwargs: dict) -> Any:
        """A higher-order op (flex_attention and its backward, which a GPU runs as one fused
        kernel) run whole below this mode: FakeTensorMode's rule for it makes its outputs
        alone, as the fused kernel does, not the intermediates of its reference
        implementation in PyTorch ops (flex attention's full score matrix). Its new storages
        are on the device where an input is, as an op's are."""
        inputs = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
        self._local.depth = getattr(self._local, "depth", 0) + 1  # in an op: the CPU device
        try:
            out = func(*args, **kwargs)
        finally:
            self._local.depth -= 1
        if self.every_storage or any(self.holds(t) for t in inputs):
            given = {id(storage) for t in inputs for storage in _storages(t)}
            for tensor in tree_flatten(out)[0]:
                for storage in _storages(tensor):
                    if id(storage) not in given:
                        self._add(storage)
        return out

    def _scalar(self, func, args, kwargs):
        """A value: the real one of a real tensor (the script's data) or where fake tensors
        know it (a constant), else a placeholder. A tensor subclass over fake tensors (a
        DTensor: `bool(mask.any())` in nn.init.trunc_normal_ of a sharded parameter) is no
        real tensor: its read goes down to its local fake tensor."""
        first = args[0]
        if isinstance(first, FakeTensor):
            value = self._values_of.get(id(first), (None, None))[1]
        else:
            value = None if is_traceable_wrapper_subclass(first) else first
        if value is not None:
            with unset_fake_temporarily():
                return func(value, *args[1:], **kwargs)
        try:
            return func(*args, **kwargs)
        except DataDependentOutputException:
            return self.values.item(args[0].dtype)


class Placement(TorchFunctionMode):
    """Device arguments that name CUDA, answered on the simulated GPU (see the module)."""

    def __init__(self, storages: DeviceStorages, *, gpu: bool) -> None:
        super().__init__()
        self.storages, self.gpu = storages, gpu

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not self.gpu:
            return func(*args, **kwargs)
        if func == _IS_CUDA:
            return self.storages.holds(args[0])
        if func is torch.device and len(args) == 1 and isinstance(args[0], int) and not kwargs:
            # torch.device(0): the current accelerator's device 0, which a CPU build refuses
            # (transformers' device_map="auto" names devices so)
            return torch.device("cuda", args[0])
        if func is torch.Tensor.get_device:
            return 0 if self.storages.holds(args[0]) else -1
        if func is torch.Tensor.to:
            return self._to(args, kwargs)
        if func is torch._C._nn._parse_to:
            # what `.to(...)` names, parsed: no tensor made, so the device stays as named
            # (bitsandbytes' Params4bit.to quantizes where it reads "cuda")
            return func(*args, **kwargs)
        if func is torch.Tensor.cuda:
            return self._move(args[0], "device", non_blocking=kwargs.get("non_blocking", False))
        if func is torch.Tensor.cpu:
            return self._move(args[0], "host")
        if names_cuda(kwargs.get("device")):
            kwargs = {**kwargs, "device": "cpu"}
            with self.storages.placing("device"):
                return func(*args, **kwargs)
        return func(*args, **kwargs)

    def _to(self, args: tuple, kwargs: dict) -> torch.Tensor:
        """Tensor.to(device?, dtype?, non_blocking?, copy?, memory_format=?) or .to(other, …):
        a move between the host and the GPU is a copy on the fake CPU device."""
        tensor, rest = args[0], args[1:]
        # a bare index (.to(0), device=0) names a CUDA device, which a CPU build cannot parse
        rest = tuple(_named(a) for a in rest)
        if "device" in kwargs:
            kwargs = {**kwargs, "device": _named(kwargs["device"])}
        flags = [i for i, a in enumerate(rest) if isinstance(a, bool)]  # non_blocking, copy
        copy = kwargs.get("copy", len(flags) > 1 and rest[flags[1]])
        if isinstance(rest[0] if rest else None, torch.Tensor):
            where = "device" if self.storages.holds(rest[0]) else "host"
            options = {"dtype": rest[0].dtype,
                       "non_blocking": kwargs.get("non_blocking",
                                                  bool(flags) and rest[flags[0]]),
                       "memory_format": kwargs.get("memory_format")}
        else:
            # _parse_to takes what .to takes but copy
            parsed = torch._C._nn._parse_to(
                *[a for i, a in enumerate(rest) if not (len(flags) > 1 and i == flags[1])],
                **{k: v for k, v in kwargs.items() if k != "copy"})
            device, dtype, non_blocking, memory_format = parsed
            where = None if device is None else "device" if names_cuda(device) else "host"
            options = {"dtype": dtype, "non_blocking": non_blocking,
                       "memory_format": memory_format}
        # Tensor.to itself, not the tensor's `to`: a subclass's own (bitsandbytes'
        # Params4bit.to, which quantizes) has run already, and called this one
        if where is None:
            return torch.Tensor.to(tensor, *rest, **kwargs)  # a cast at most, on its device
        options = {k: v for k, v in options.items() if v is not None}
        if (where == "device") == self.storages.holds(tensor):
            return torch.Tensor.to(tensor, copy=copy, **options)  # already there
        with self.storages.placing(where):
            return torch.Tensor.to(tensor, copy=True, **options)

    def _move(self, tensor: torch.Tensor, where: str, non_blocking: bool = False) -> torch.Tensor:
        if (where == "device") == self.storages.holds(tensor):
            return tensor
        with self.storages.placing(where):
            return tensor.to("cpu", copy=True, non_blocking=non_blocking)
