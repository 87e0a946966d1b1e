"""One step's memory as the API returns it: a frozen, typed view of a step result.

`Estimate` is what the estimate backend gives (fake tensors, modelling a device);
`Measurement` what a real run gives (on the CPU, or on a GPU it names). Both carry the same
four figures, each None where the kind of result has none:

    peak_bytes          the tensors' peak: what the tracker saw live at once
    allocated_bytes     the allocator's allocated peak (torch.cuda.max_memory_allocated; on
                        the CPU, the CPU allocator's peak)
    reserved_bytes      the caching allocator's reserved peak (max_memory_reserved): CUDA only
    nvidia_smi_bytes    reserved plus the CUDA context, low and high: what nvidia-smi shows

`fits` judges the step on a GPU by the one rule (plan/fit.py). `to_dict` gives back exactly
the stored JSON, and `from_dict` reads it. Torch-free.
"""

from __future__ import annotations

from copy import deepcopy
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from generator import gpus
from generator.arguments import checked
from generator.errors import ConfigError, ResultsError
from generator.experiment import Experiment
from generator.experiment.option import memory_bytes
from generator.plan import fit
from generator.results.notes import Note
from generator.results.shapes import CATEGORIES, StepResult


@dataclass(frozen=True)
class Phase:
    name: str
    """forward, backward or optimizer."""
    tick: int
    """The clock tick (allocation event) at which the step entered it."""


@dataclass(frozen=True)
class StepMemory:
    """The memory of one training step; see Estimate and Measurement."""

    experiment: Experiment
    peak_bytes: int
    """The tensors' peak."""
    allocated_bytes: int | None
    """The allocator's allocated peak."""
    reserved_bytes: int | None
    """The CUDA caching allocator's reserved peak; None off CUDA."""
    nvidia_smi_bytes: tuple[int, int] | None
    """What nvidia-smi shows: reserved plus the CUDA context, low and high."""
    live_at_peak: Mapping[str, int]
    """Category → bytes live at the peak (they sum to peak_bytes)."""
    category_max: Mapping[str, int]
    """Category → that category's own largest bytes during the step."""
    phases: tuple[Phase, ...]
    notes: tuple[Note, ...]
    """What was modelled, measured or left out: identifiers with values, and their words in
    either language (`note.text("zh")`; `str(note)` is the English)."""
    gpu: str | None
    """The GPU modelled (an estimate of CUDA) or measured on (a run on one); else None."""
    _data: Mapping[str, Any] = field(repr=False, compare=False)

    @property
    def kind(self) -> str:
        """Estimated or measured, and for which device, as every number must say."""
        raise NotImplementedError

    @property
    def context_name(self) -> str:
        """What the context's range holds, in words: a multi-GPU rank's holds NCCL's
        communicators too (allocator_replay.predict_on)."""
        nccl = (self._data.get("allocator") or {}).get("communicator_bytes")
        return "CUDA context with NCCL's buffers" if nccl else "CUDA context"

    def to_dict(self) -> StepResult:
        """The result exactly as the results store keeps it (a copy)."""
        return deepcopy(dict(self._data))

    @staticmethod
    def from_dict(data: dict[str, Any], *, copy: bool = True) -> "StepMemory":
        """An Estimate or a Measurement, by the result's backend. `copy=False` keeps `data`
        itself, for a caller that changes it no more: a page judging the results it holds,
        the API the result it has just made."""
        cls = Estimate if data.get("backend") == "estimate" else Measurement
        return cls._read(data, copy=copy)

    @classmethod
    def _read(cls, data: dict[str, Any], *, copy: bool) -> "StepMemory":
        if data.get("error"):
            raise ResultsError(f"result {data.get('key')!r} holds no figures: "
                               f"{data['error']} ({data.get('error_detail') or 'no detail'})")
        if copy:  # a change to the caller's dict then changes nothing here
            data = deepcopy(data)
        allocated, reserved, context, gpu = cls._allocator_figures(data)
        smi = None if reserved is None or context is None else \
            (reserved + context[0], reserved + context[1])
        return cls(experiment=Experiment.from_dict(data["experiment"]),
                   peak_bytes=data["peak_bytes"], allocated_bytes=allocated,
                   reserved_bytes=reserved, nvidia_smi_bytes=smi,
                   live_at_peak=_frozen({c: data["live_at_peak_bytes"][c] for c in CATEGORIES}),
                   category_max=_frozen({c: data["category_max_bytes"][c] for c in CATEGORIES}),
                   phases=tuple(Phase(p["name"], p["tick"]) for p in data.get("phases") or ()),
                   notes=tuple(map(Note.of, data.get("notes") or ())), gpu=gpu,
                   _data=_frozen(data))

    @staticmethod
    def _allocator_figures(data: dict[str, Any]) -> tuple:
        raise NotImplementedError

    # -- does it fit ------------------------------------------------------------------------
    @checked()
    def fits(self, gpu: str | None = None, *, memory: int | str | None = None) -> fit.Verdict:
        """Whether the step fits `gpu` (a name from the catalogue, loosely matched: "RTX
        4090", "a100-80gb"), or `memory` (bytes, or a size such as "24GiB"); both: that
        GPU's overheads with that memory. Neither: the GPU this step was modelled or
        measured on. One rule everywhere (plan/fit.py)."""
        target = gpus.find(gpu) if gpu is not None else self._own_gpu()
        if memory is None and target is None:
            raise ConfigError(f"{self.kind} names no GPU of the catalogue: give a gpu or a "
                              "memory size to judge it against")
        allocated, reserved, context = self._figures_on(target)
        named = target is not None and (gpu is not None or memory is None)
        return fit.judge(budget_bytes(target, memory), allocated=allocated, reserved=reserved,
                         context=context, gpu=target.name if named else None,
                         context_name=self.context_name)

    def _own_gpu(self) -> gpus.GPU | None:
        try:
            return gpus.find(self.gpu) if self.gpu else None
        except ConfigError:  # measured on a GPU the catalogue lacks
            return None

    def _figures_on(self, target: gpus.GPU | None) -> tuple[int, int | None, tuple[int, int]]:
        """(allocated, reserved, context) for judging on `target` (None: as recorded)."""
        allocated = self.allocated_bytes if self.allocated_bytes is not None else self.peak_bytes
        if self.reserved_bytes is None:
            return allocated, None, (0, 0)
        low, high = self.nvidia_smi_bytes or (self.reserved_bytes, self.reserved_bytes)
        return allocated, self.reserved_bytes, (low - self.reserved_bytes,
                                                high - self.reserved_bytes)


@dataclass(frozen=True)
class Estimate(StepMemory):
    """A step estimated with fake tensors, modelling a device: nothing was allocated."""

    @property
    def kind(self) -> str:
        device = self.experiment.device
        return f"estimated for {self.gpu or device}" if device == "cuda" else \
            f"estimated for the {device.upper()}"

    @staticmethod
    def from_dict(data: dict[str, Any], *, copy: bool = True) -> "Estimate":
        if data.get("backend") != "estimate":
            raise ResultsError(f"result {data.get('key')!r} was measured "
                               f"({data.get('backend')}), not estimated: use "
                               "StepMemory.from_dict or Measurement.from_dict")
        return Estimate._read(data, copy=copy)

    @staticmethod
    def _allocator_figures(data: dict[str, Any]) -> tuple:
        allocator = data.get("allocator")
        if not allocator:  # modelling the CPU: the tensors' peak is the allocator's
            return data["peak_bytes"], None, None, None
        return (allocator["peak_allocated_bytes"], allocator["peak_reserved_bytes"],
                tuple(allocator["context_bytes"]), allocator.get("gpu") or gpus.ASSUMED)

    def _figures_on(self, target: gpus.GPU | None) -> tuple[int, int | None, tuple[int, int]]:
        """On another GPU of the catalogue, the allocator's figures replayed with that GPU's
        cuBLAS workspaces (the estimate keeps them for each size the catalogue has) and that
        GPU's CUDA context."""
        if self.reserved_bytes is None:
            if target is not None:
                raise ConfigError(f"this step was {self.kind}: estimate it with device "
                                  "'cuda' to judge it on a GPU (or give a memory size alone)")
            return self.peak_bytes, None, (0, 0)
        if target is None:
            return super()._figures_on(None)
        return allocator_figures_on(self._data["allocator"], target,
                                    what=f"result {self._data['key']!r}")


@dataclass(frozen=True)
class Measurement(StepMemory):
    """A real step, measured on the CPU or on a GPU: its allocator's own figures."""

    @property
    def kind(self) -> str:
        if self.experiment.backend == "cuda":
            return f"measured on {self.gpu or 'a GPU'}"
        return "measured on the CPU"

    @staticmethod
    def from_dict(data: dict[str, Any], *, copy: bool = True) -> "Measurement":
        if data.get("backend") == "estimate":
            raise ResultsError(f"result {data.get('key')!r} is an estimate: use "
                               "Estimate.from_dict or StepMemory.from_dict")
        return Measurement._read(data, copy=copy)

    @staticmethod
    def _allocator_figures(data: dict[str, Any]) -> tuple:
        truth = data.get("ground_truth") or {}
        device = (data.get("environment") or {}).get("device_name")
        if data.get("backend") != "cuda":  # the CPU allocator's own peak
            return truth.get("peak_bytes", data["peak_bytes"]), None, None, None
        allocated = truth.get("steps_peak_bytes", truth.get("peak_bytes", data["peak_bytes"]))
        reserved = truth.get("steps_max_reserved_bytes", truth.get("max_reserved_bytes"))
        context = truth.get("context_bytes")
        return (allocated, reserved, None if context is None else (context, context),
                device)


def budget_bytes(gpu: gpus.GPU | None, memory: int | str | None) -> int:
    """The memory a step is judged against: `memory` where given (bytes, or a size such as
    "24GiB"), else what `gpu` lets a process have."""
    if memory is not None:
        return memory_bytes(memory)
    if gpu is None:
        raise ConfigError("give a GPU of the catalogue or a memory size to fit in")
    return gpu.memory_bytes


def allocator_figures_on(allocator: dict[str, Any], gpu: gpus.GPU,
                         what: str = "the estimate") -> tuple[int, int, tuple[int, int]]:
    """(allocated, reserved, context) of a simulated allocator's figures (an estimate's, or
    a sharded rank's) on `gpu`: the peaks replayed with that GPU's cuBLAS workspaces, which
    the estimate keeps for every workspace size the catalogue has, and that GPU's CUDA
    context, with the NCCL memory of a multi-GPU rank's communicators."""
    size = gpu.overheads.persistent_workspace_bytes
    same = [allocator] if allocator["workspace_bytes"] == size else []
    found = same + [o for o in allocator.get("other_workspaces", ())
                    if o["workspace_bytes"] == size]
    if not found:
        raise ResultsError(f"{what} holds no figures with the cuBLAS workspaces of "
                           f"{gpu.name}: estimate it again")
    low, high = gpu.context_bytes
    nccl_low, nccl_high = allocator.get("communicator_bytes", (0, 0))
    return (found[0]["peak_allocated_bytes"], found[0]["peak_reserved_bytes"],
            (low + nccl_low, high + nccl_high))


def _frozen(data: dict[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(data)
