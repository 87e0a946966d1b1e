"""Building a model on fake tensors as it builds on a real device (`fake_build()`).

Two things a model's construction may do fail on fake tensors though they work on a device;
`fake_build()`, entered around the build only, makes both work under FakeTensorMode (and
changes nothing outside it, so a build on a real device goes through it as it is).

**Values of small constant tensors.** Fake tensors have shapes but no values, so `.item()`
or `.tolist()` on one fails (DataDependentOutputException). Some models read such values
while they are built: most of transformers' vision models spread their stochastic-depth rates with
`torch.linspace(0, config.drop_path_rate, sum(config.depths)).split(...)` then `.tolist()`
or `.item()` (ConvNeXt, SwinV2, Hiera, PVT and about twenty more). Their values follow from
the constants alone, so `KnownValues`, a TorchDispatchMode entered above FakeTensorMode for
the build only, computes them for real, on the CPU, beside the fake tensors:

- a factory op of constants (linspace, arange, …) with at most `LIMIT` elements: its real
  output, kept by the fake output's storage;
- an op whose tensor inputs all have known storages (a `split`, a `sum` of the rates): its
  real outputs too, when small and not random;
- `.item()` (`_local_scalar_dense`) of a tensor whose storage is known: the real value, read
  through the fake tensor's own view (size, stride, offset) of that storage;
- an op that writes into a known storage makes it unknown again.

The fake tensors themselves are unchanged and allocate nothing; the real copies are small and
dropped when the build ends.

**Converting a module** (`model.to(torch.bfloat16)`, `.half()`, `.to(device)`: in a user's
factory, or PEFT moving its adapters to the base layer's device). `nn.Module._apply` swaps a
fake parameter with its converted copy (`torch.utils.swap_tensors`), which refuses a tensor
that has a weak reference, and FakeTensorMode keeps one to the parameters it makes: its
converter's memo (`meta_converter.tensor_memo`) holds the `detach()` inside
`nn.Parameter(...)`, unless fake mode's dispatch cache answered that detach (so whether a
conversion fails depends on what ran before). `_swapping_fakes` drops the two tensors' memo
entries first; the memo only saves re-converting real tensors, which these are not. Where
PyTorch's C++ side still holds a weak pointer to one (the profiler's, `_exchange`), the two
trade their data and attributes instead, as a swap leaves them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from torch._subclasses.fake_tensor import FakeTensor, unset_fake_temporarily
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map_only

from generator.measure.emulation import bound_arguments

aten = torch.ops.aten
#: The most elements a tensor may have for its real value to be kept.
LIMIT = 1 << 16
_SCALAR = (aten._local_scalar_dense.default, aten.item.default)
#: Ops that make a tensor from constants alone (no tensor inputs) whose values are known.
FACTORIES = {aten.linspace.default, aten.logspace.default, aten.arange.default,
             aten.arange.start, aten.arange.start_step, aten.full.default,
             aten.zeros.default, aten.ones.default, aten.scalar_tensor.default}


def _key(t: torch.Tensor) -> int:
    return t.untyped_storage()._cdata


class KnownValues(TorchDispatchMode):
    """Real values of small constant tensors made while it is on (see the module)."""

    def __init__(self) -> None:
        super().__init__()
        # fake storage -> (a real tensor on its data, the fake tensor): the fake one is held
        # so that its storage, which allocates nothing, is not freed and its key reused
        self._real: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

    def _value_of(self, t: torch.Tensor) -> torch.Tensor | None:
        if not isinstance(t, FakeTensor):
            return t  # a real tensor among the inputs: its value is its own
        real, _ = self._real.get(_key(t), (None, None))
        if real is None:
            return None
        with unset_fake_temporarily():  # real tensors: fake mode must not see them
            return real.as_strided(t.shape, t.stride(), t.storage_offset())

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _SCALAR and (real := self._value_of(args[0])) is not None:
            with unset_fake_temporarily():
                return real.item()
        inputs = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
        values = {id(t): self._value_of(t) for t in inputs}
        out = func(*args, **kwargs)
        writes = [a.name for a in func._schema.arguments if a.alias_info and a.alias_info.is_write]
        bound = bound_arguments(func, args, kwargs) if writes else {}
        for name in writes:  # a storage written to holds values no longer known
            for written in tree_flatten(bound.get(name))[0]:  # a foreach op writes a list
                if isinstance(written, torch.Tensor):
                    self._real.pop(_key(written), None)
        outputs = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]
        if ((inputs or func in FACTORIES) and None not in values.values() and outputs
                and all(t.numel() <= LIMIT and t.device.type == "cpu" for t in outputs)
                and torch.Tag.nondeterministic_seeded not in func.tags and not writes):
            self._learn(func, args, kwargs, out, values)
        return out

    def _learn(self, func, args, kwargs, out, values: dict[int, torch.Tensor]) -> None:
        """Run `func` for real on the inputs' known `values` (by id) and keep its outputs'."""
        real_args, real_kwargs = tree_map_only(torch.Tensor, lambda t: values[id(t)],
                                               (args, kwargs))
        with unset_fake_temporarily():  # real compute on real tensors, below no fake mode
            real_out = func(*real_args, **real_kwargs)
            fakes, reals = tree_flatten(out)[0], tree_flatten(real_out)[0]
            for fake, real in zip(fakes, reals):
                if isinstance(fake, torch.Tensor) and _key(fake) not in self._real:
                    # the value laid out as the fake tensor is on its storage, so that any
                    # view of that storage reads back through its own size and strides
                    laid_out = torch.empty_strided(fake.shape, fake.stride(), dtype=real.dtype)
                    laid_out.copy_(real)
                    flat = laid_out.untyped_storage().nbytes() // laid_out.element_size()
                    self._real[_key(fake)] = (laid_out.as_strided((flat,), (1,), 0), fake)


def _swapping_fakes(swap_tensors):
    """`torch.utils.swap_tensors`, first dropping the two tensors' entries in their fake
    mode's memo (the weak references that make the swap refuse them). A real tensor swapped
    with a fake one (a module built before the simulated run, moved in it, with
    `torch.__future__.set_swap_module_params_on_conversion(True)`), and a tensor met as the
    `.grad` of one, are also held weakly by the converter's describer (its tensor ids):
    those entries go too."""

    def swap(t1: torch.Tensor, t2: torch.Tensor) -> None:
        for mode in {id(t.fake_mode): t.fake_mode for t in (t1, t2)
                     if isinstance(t, FakeTensor)}.values():
            converter = mode.fake_tensor_converter.meta_converter
            for t in (t1, t2):
                for key in [k for k, v in list(converter.tensor_memo.items()) if v is t]:
                    del converter.tensor_memo[key]
                converter.describer.lookup_tensor.pop(t, None)
        try:
            return swap_tensors(t1, t2)
        except RuntimeError:
            if not _exchangeable(t1, t2):
                raise
        _exchange(t1, t2)

    return swap


def _exchangeable(t1: torch.Tensor, t2: torch.Tensor) -> bool:
    """Whether two tensors can trade their contents without a swap: two fake tensors of one
    class, of one fake device, whose impls are alike (a fake parameter and its converted
    copy, as `nn.Module._apply` swaps them)."""
    return (isinstance(t1, FakeTensor) and type(t1) is type(t2)
            and t1.fake_device == t2.fake_device
            and torch._has_compatible_shallow_copy_type(t1, t2))


def _exchange(t1: torch.Tensor, t2: torch.Tensor) -> None:
    """What `swap_tensors` does, for two fake tensors that something still holds through a
    weak pointer of PyTorch's C++ side: the profiler, with `record_shapes` or
    `profile_memory`, keeps one to every tensor an op met until it stops, so a model moved
    to the GPU inside `torch.profiler.profile(...)` could not be swapped. On a device
    `Module.to` sets `param.data` (it swaps only fake and subclass tensors); here each
    tensor's data is set to the other's, and their attributes are exchanged, so each
    object holds what the other held, as after a swap."""
    with torch.no_grad():
        first = t1.detach()  # an alias of t1's data, as it is now
        t1.data = t2.detach()
        t2.data = first
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__


def under_fake_tensors() -> bool:
    """Whether the tensors made here now are fake: an estimate is running (FakeTensorMode is
    on this thread's stack of modes, and not set aside by `unset_fake_temporarily`)."""
    return torch._C._get_dispatch_mode(torch._C._TorchDispatchModeKey.FAKE) is not None


@contextlib.contextmanager
def fake_build() -> Iterator[None]:
    """Around a model's construction (see the module); nothing changes unless the tensors
    are fake."""
    if not under_fake_tensors():
        yield
        return
    with fakes_converted(), KnownValues():
        yield


@contextlib.contextmanager
def fakes_converted() -> Iterator[None]:
    """Modules of fake tensors converted as on a device (`model.to(...)`, see the module),
    for as long as the block lasts; a script run on the simulated GPU (generator/simulate)
    takes this part alone: KnownValues holds every small constant it learns until it exits,
    which over a whole training run would hold a step's constants for good. `nn.Module._apply`
    looks `torch.utils.swap_tensors` up when it converts, so replacing it meanwhile is
    enough; it is put back however the block ends."""
    original = torch.utils.swap_tensors
    torch.utils.swap_tensors = _swapping_fakes(original)
    try:
        yield
    finally:
        torch.utils.swap_tensors = original
