"""A checkpoint the script loads, with its tensors' shapes and dtypes and none of their data.

An 8B fine-tune reads 16 GB of weights before its first step; on the simulated GPU its
tensors are fake, so the checkpoint's header is all it needs, and all it can write
(`weights_not_read()`, entered by session.py for the whole run):

- **safetensors** (`safe_open`, `load_file`, and transformers' loading, which goes through
  `safe_open`): the file's JSON header gives each tensor's dtype and shape
  (`safetensors_header`); `safe_open` is replaced by `HeaderOnly`, whose tensors are fake
  and made on the device asked for, so they count where a real load's would. A data section
  that is missing or cut short still loads: it is never read.
- **torch.load** of a zip checkpoint (`torch.save`'s format since PyTorch 1.6): PyTorch's own
  loader, run under FakeTensorMode, unpickles `data.pkl` with the weights-only unpickler and
  makes meta storages instead of reading the records (torch/serialization.py, `load_tensor`);
  `torch_load` then puts each storage where `map_location` would (a fake CUDA tensor aborts
  autograd on this CPU-only PyTorch, see placement.py: a storage on the GPU is bookkeeping).
- **Saving** (`torch.save`, safetensors' `save_file`, which `save_pretrained` calls): a
  simulated tensor has no data, so a checkpoint the script writes holds its header, and its
  data's place is left empty (a sparse file of the real one's size): the script finds its
  checkpoint where it wrote it, and a load of it reads the header again. Before it saves,
  `save_pretrained` tells tied weights by their storages' addresses, which addresses.py
  gives each simulated storage.

What a real CPU load allocates is what the simulation counts when it models the CPU: the CPU
allocator holds what `torch.load` returns (mmap or not) and safetensors' mapping of the whole
file, of which every tensor read on the host is a view; a tensor read onto the GPU is a copy
of its own. from_pretrained, which reads through both, is answered offline: pretrained.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import _disable_current_modes

from generator.errors import ModelError, UnmodelledError
from generator.measure.emulation.fake_build import under_fake_tensors
from generator.simulate.placement import DeviceStorages, names_cuda

#: safetensors' dtype names (its format's spec, safetensors/src/tensor.rs `Dtype`); those the
#: installed PyTorch lacks are left out.
_DTYPES = {name: getattr(torch, attr) for name, attr in {
    "BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "U16": "uint16",
    "I32": "int32", "U32": "uint32", "I64": "int64", "U64": "uint64", "F16": "float16",
    "BF16": "bfloat16", "F32": "float32", "F64": "float64", "C64": "complex64",
    "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2", "F8_E8M0": "float8_e8m0fnu",
}.items() if hasattr(torch, attr)}
_NAMES = {dtype: name for name, dtype in _DTYPES.items()}
#: The largest header safetensors itself accepts (safetensors/src/tensor.rs MAX_HEADER_SIZE).
_MOST_HEADER_BYTES = 100_000_000


@dataclass(frozen=True)
class Entry:
    """One tensor of a checkpoint: what its header says."""

    dtype: torch.dtype
    shape: tuple[int, ...]
    offsets: tuple[int, int]

    @property
    def nbytes(self) -> int:
        return self.offsets[1] - self.offsets[0]


def safetensors_header(path: str | os.PathLike) -> tuple[dict[str, Entry], dict[str, str] | None]:
    """A safetensors file's tensors, in the order of their data, and its metadata; its data
    is not read. A file that is not one is a one-line ModelError."""
    try:
        with open(path, "rb") as file:
            size = file.read(8)
            length = struct.unpack("<Q", size)[0] if len(size) == 8 else -1
            if not 0 < length <= _MOST_HEADER_BYTES:
                raise ModelError(f"{path} is not a safetensors file (no header)")
            text = file.read(length)
    except OSError as error:
        raise ModelError(f"cannot read {path} ({error.strerror or error})") from None
    try:
        header = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ModelError(f"{path} is not a safetensors file (its header is not JSON)") from None
    if not isinstance(header, dict):
        raise ModelError(f"{path} is not a safetensors file (its header is not an object)")
    metadata = header.pop("__metadata__", None)
    entries = {}
    for name, info in header.items():
        try:
            dtype = _DTYPES[info["dtype"]]
            shape = tuple(int(n) for n in info["shape"])
            begin, end = (int(n) for n in info["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise ModelError(f"{path}: tensor {name!r} has no dtype, shape and data_offsets "
                             "this tool knows") from None
        if min(shape, default=0) < 0 or not 0 <= begin <= end:
            raise ModelError(f"{path}: tensor {name!r} has a negative size")
        entries[name] = Entry(dtype, shape, (begin, end))
    ordered = dict(sorted(entries.items(), key=lambda item: item[1].offsets))
    return ordered, metadata if isinstance(metadata, dict) else None


def write_header_only(path: Path, tensors: dict[str, tuple[tuple[int, ...], torch.dtype]],
                      metadata: dict[str, str] | None = None) -> None:
    """A safetensors file of `tensors` (name → shape, dtype) with its header and no data."""
    header: dict[str, Any] = {"__metadata__": metadata or {"format": "pt"}}
    offset = 0
    for name, (shape, dtype) in tensors.items():
        nbytes = dtype.itemsize * int(torch.Size(shape).numel())
        header[name] = {"dtype": _NAMES[dtype], "shape": list(shape),
                        "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the format aligns the data to 8 bytes
    path.write_bytes(struct.pack("<Q", len(text)) + text)


def _fake(shape: tuple[int, ...], dtype: torch.dtype, device: Any) -> torch.Tensor:
    """A tensor of the checkpoint, made where a real load would put it."""
    if not under_fake_tensors():
        # another thread: the simulation's modes are the main thread's, and a real tensor
        # here would be the weights' size in host memory
        raise UnmodelledError("a checkpoint read on a thread of its own cannot be simulated: "
                              "load it on the script's main thread")
    return torch.empty(shape, dtype=dtype, device=device)


class HeaderOnly:
    """`safetensors.safe_open(filename, framework, device="cpu", backend=...)`, answered from
    the header: its tensors are fake, on `device`. On the host, as safetensors memory-maps
    the file, every tensor read is a view of one storage of the file's data, made when the
    file is opened (the CPU allocator counts such a mapping, and a tensor read in the
    checkpoint's dtype keeps it); on the GPU each tensor is a copy of its own."""

    def __init__(self, filename: str | os.PathLike, framework: str = "pt",
                 device: Any = "cpu", **_options: Any) -> None:
        if framework not in ("pt", "torch", "pytorch"):
            raise UnmodelledError(f"safe_open(framework={framework!r}): only PyTorch's "
                                  "tensors can be simulated")
        self._entries, self._metadata = safetensors_header(filename)
        self._device = device
        self._mapped, self._start = None, 0
        if not names_cuda(device):  # the whole file is mapped: its header, then its data
            with open(filename, "rb") as file:
                self._start = 8 + struct.unpack("<Q", file.read(8))[0]
            data_bytes = max((e.offsets[1] for e in self._entries.values()), default=0)
            self._mapped = _fake((self._start + data_bytes,), torch.uint8, "cpu")

    def __enter__(self) -> "HeaderOnly":
        return self

    def __exit__(self, *_exc: Any) -> None:
        self._mapped = None  # closed: the mapping lives on only in the tensors read from it

    def keys(self) -> list[str]:
        return sorted(self._entries)

    def offset_keys(self) -> list[str]:
        return list(self._entries)

    def metadata(self) -> dict[str, str] | None:
        return self._metadata

    def _entry(self, name: str) -> Entry:
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(f"File does not contain tensor {name}") from None

    def _read(self, entry: Entry, index: Any = None) -> torch.Tensor:
        """The tensor (or its `index`-th part), where a real read puts it."""
        begin = self._start + entry.offsets[0]
        if self._mapped is not None and begin % entry.dtype.itemsize == 0:
            # views, not `set_`: FakeTensorMode's set_ keeps the storage alive for good
            whole = self._mapped[begin:begin + entry.nbytes].view(entry.dtype).view(entry.shape)
            return whole if index is None else whole[index]
        if not names_cuda(self._device) and self._mapped is None:
            raise RuntimeError("the safetensors file is closed")
        shape = entry.shape
        if index is not None:
            with _disable_current_modes():  # the part's shape, on the meta device
                shape = tuple(torch.empty(shape, dtype=entry.dtype, device="meta")[index].shape)
        return _fake(shape, entry.dtype, self._device)

    def get_tensor(self, name: str) -> torch.Tensor:
        return self._read(self._entry(name))

    def get_tensors(self) -> dict[str, torch.Tensor]:
        return {name: self.get_tensor(name) for name in self._entries}

    def get_slice(self, name: str) -> "SliceOfHeader":
        return SliceOfHeader(self, self._entry(name))


class SliceOfHeader:
    """safetensors' `PySafeSlice`: the shape and dtype, and a part of the tensor as a fake
    tensor (on the GPU, of the part's own size: a real slice reads only its part)."""

    def __init__(self, file: HeaderOnly, entry: Entry) -> None:
        self._file, self._entry = file, entry

    def get_shape(self) -> list[int]:
        return list(self._entry.shape)

    def get_dtype(self) -> str:
        return _NAMES[self._entry.dtype]

    def __getitem__(self, index: Any) -> torch.Tensor:
        return self._file._read(self._entry, index)


# -- torch.load ------------------------------------------------------------------------------

def _lands_on_gpu(location: str, map_location: Any) -> bool:
    """Whether a storage saved at `location` ("cpu", "cuda:0") is loaded onto the GPU, as
    torch.load's `map_location` (None, a device, a dict, a callable) places it."""
    if map_location is None:
        return names_cuda(location)
    if isinstance(map_location, dict):
        return names_cuda(map_location.get(location, location))
    if not callable(map_location):
        return names_cuda(map_location)
    # torch.load calls it with the storage on the CPU (default_restore_location's input); a
    # CPU-only PyTorch refuses a move to CUDA, which is what such a callable asks for
    try:
        moved = map_location(torch.UntypedStorage(0), location)
    except (AssertionError, RuntimeError):
        return True
    return names_cuda(location) if moved is None else moved.device.type == "cuda"


def torch_load(original: Callable, storages: DeviceStorages, *, cpu: bool) -> Callable:
    """`torch.load` whose tensors are fake and never read (see the module); cpu: the run
    models the CPU, where every loaded storage is the CPU allocator's."""
    import torch._utils as rebuild

    def load(f, map_location=None, *args, **kwargs):
        fake_mode = torch._C._get_dispatch_mode(torch._C._TorchDispatchModeKey.FAKE)
        if fake_mode is None or map_location in ("meta", torch.device("meta")):
            # meta tensors: no storage to place; no fake mode: another thread, which the
            # simulation does not see (its modes are the main thread's)
            return original(f, map_location, *args, **kwargs)
        landed: list[tuple[torch.Tensor, bool]] = []
        first: dict[int, torch.UntypedStorage] = {}  # a record's offset → its storage

        def restore(tensor: torch.Tensor) -> torch.Tensor:
            # PyTorch's own gives a fake tensor the saved (or mapped) device: here it stays
            # on the fake CPU, and where it lands is the placement's
            storage = tensor.untyped_storage()
            location = storage._fake_device
            tensor.fake_device = torch.device("cpu")
            # Tensors saved on one storage (views, tied weights) share it, as a real load's
            # do: the loader keeps a loaded storage for its next tensors only when it has
            # data, which a meta one has not.
            record = getattr(storage, "_checkpoint_offset", None)
            if record is not None and first.setdefault(record, storage) is not storage:
                with torch.no_grad():
                    tensor.set_(first[record], tensor.storage_offset(), tensor.size(),
                                tensor.stride())
            landed.append((tensor, location is not None and _lands_on_gpu(str(location),
                                                                          map_location)))
            return tensor

        own = rebuild._restore_device_fake_mode
        rebuild._restore_device_fake_mode = restore
        # PyTorch's loader puts each tensor on its storage with `set_`, whose arguments
        # FakeTensorMode's op cache would keep as a key, and with them every storage, for
        # good: the checkpoint would never be freed
        cached = fake_mode.cache_enabled
        fake_mode.cache_enabled = False
        try:
            out = original(f, None, *args, **kwargs)
        finally:
            rebuild._restore_device_fake_mode = own
            fake_mode.cache_enabled = cached
        for tensor, on_gpu in landed:
            if cpu or on_gpu:
                storages.place(tensor)
        return out

    return load


# -- putting it in place ---------------------------------------------------------------------

@contextlib.contextmanager
def _rebound(replacements: dict[Any, Any]) -> Iterator[None]:
    """Each original (a key), wherever a module holds it, under any name (`from safetensors
    import safe_open`, transformers' `save_file as safe_save_file`), is its replacement
    meanwhile. Afterwards each of those bindings holds its original again, and so does each
    binding of a replacement in a module imported meanwhile (`from safetensors import
    safe_open` run in the script); nothing else is touched."""
    def bindings(modules: list[Any], wanted: dict[int, Any]) -> list[tuple[dict, str, Any]]:
        found = []
        for module in modules:
            namespace = getattr(module, "__dict__", None)
            if isinstance(namespace, dict):
                found += [(namespace, key, wanted[id(value)])
                          for key, value in list(namespace.items()) if id(value) in wanted]
        return found

    present = dict(sys.modules)
    originals = {id(new): old for old, new in replacements.items()}
    replaced = bindings(list(present.values()), {id(old): new for old, new in
                                                  replacements.items()})
    for namespace, key, new in replaced:
        namespace[key] = new
    try:
        yield
    finally:
        for namespace, key, new in replaced:
            if namespace.get(key) is new:
                namespace[key] = originals[id(new)]
        imported = [m for name, m in list(sys.modules.items()) if present.get(name) is not m]
        for namespace, key, old in bindings(imported, originals):
            namespace[key] = old


def torch_save(original: Callable) -> Callable:
    """`torch.save`, whose simulated tensors have no data to write: each record keeps its
    place and size, empty (a sparse file), as PyTorch's `skip_data` writes it, so that the
    script's checkpoint is there to be loaded again (from its header: torch_load)."""

    def save(obj, f, *args, **kwargs):
        with torch.serialization.skip_data(materialize_fake_tensors=True):
            return original(obj, f, *args, **kwargs)

    return save


def safetensors_save_file(original: Callable) -> Callable:
    """safetensors' `save_file(tensors, filename, metadata=None)` (save_pretrained's): the
    header of the simulated tensors, and their data's place left empty (a sparse file of the
    real file's size)."""

    def save_file(tensors: dict[str, torch.Tensor], filename, metadata=None) -> None:
        path = Path(filename)
        write_header_only(path, {name: (tuple(t.shape), t.dtype) for name, t in
                                 tensors.items()}, metadata)
        data_bytes = sum(t.numel() * t.element_size() for t in tensors.values())
        os.truncate(path, path.stat().st_size + data_bytes)

    return save_file


@contextlib.contextmanager
def weights_not_read(storages: DeviceStorages, *, cpu: bool) -> Iterator[None]:
    """For the run: `torch.load` and safetensors' `safe_open` read headers only, `torch.save`
    and safetensors' `save_file` write them only (see the module); all put back on exit. cpu: the run models the CPU."""
    replacements: dict[Any, Any] = {
        torch.load: torch_load(torch.load, storages, cpu=cpu),
        torch.save: torch_save(torch.save)}
    try:
        import safetensors
        import safetensors.torch
    except ImportError:
        pass
    else:
        replacements[safetensors.safe_open] = HeaderOnly
        replacements[safetensors.torch.save_file] = safetensors_save_file(
            safetensors.torch.save_file)
    with _rebound(replacements):
        yield
