"""A simulated storage's address, as frameworks read it to tell storages apart.

Frameworks find the tensors that share memory by their storage's address,
`tensor.untyped_storage().data_ptr()`: transformers' `save_pretrained` (and so the
Trainer's every checkpoint) refuses to save tensors that share a storage unless they are
declared tied weights, accelerate and PEFT keep the same check (`id_tensor_storage`), and
safetensors' `save_model` drops the duplicates it finds so. A simulated tensor's storage holds
no data, so its address is 0, the same for all: every two weights of one size look shared
("The weights trying to be saved contained shared tensors").

`distinct()` answers, for as long as the run lasts, the address of a storage that holds bytes
and no data (the simulation's fake storages, and a meta tensor's) with a number of its own:
the address of PyTorch's record of that storage (`_cdata`), unique while the storage lives and
the same for every tensor on it, as a real address is. A storage of no bytes keeps 0, as a
real empty or freed one has (FSDP tells a storage resized to nothing by it). Only the
storage's address changes: a simulated tensor's own `data_ptr()` stays 0, so that nothing
reads or writes through it (safetensors copies a tensor's bytes from there, and skips a 0),
and says so without FakeTensor's warning that reading it "is almost definitely a bug"
(transformers reads it to order the tensors of one storage).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from torch._subclasses.fake_tensor import FakeTensor


def _data_ptr(original):
    def data_ptr(storage: torch.UntypedStorage) -> int:
        if storage.device.type == "meta" and storage.nbytes() > 0:
            return storage._cdata
        return original(storage)

    return data_ptr


def _tensor_data_ptr(original):
    def data_ptr(tensor: torch.Tensor) -> int:
        return 0 if isinstance(tensor, FakeTensor) else original(tensor)

    return data_ptr


@contextlib.contextmanager
def distinct() -> Iterator[None]:
    """Each storage of bytes without data has an address of its own, and a simulated tensor
    none (see the module), until the block ends."""
    with contextlib.ExitStack() as undo:
        for owner, answer in ((torch.UntypedStorage, _data_ptr), (torch.Tensor,
                                                                   _tensor_data_ptr)):
            original = owner.__dict__.get("data_ptr")  # neither class defines its own
            owner.data_ptr = answer(owner.data_ptr)
            if original is None:
                undo.callback(delattr, owner, "data_ptr")
            else:
                undo.callback(setattr, owner, "data_ptr", original)
        yield
