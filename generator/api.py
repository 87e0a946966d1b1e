"""The public API, which the command line prints and the pages mirror: one function per
question (generator/__init__.py exports them).

    estimate(model, batch_size=, seq_len=, gpu=, **options)  -> Estimate
    measure_step(model, ..., backend="cpu" | "cuda")          -> Measurement
    Estimate.fits(gpu)                                        -> Verdict
    largest_batch(model, seq_len=, gpu= | memory=, ...)       -> LargestBatch
    fewest_gpus(model, batch_size=, seq_len=, parallel=, gpu= | memory=, ...) -> FewestGpus
    levers(model, batch_size=, seq_len=, ...)                 -> LeverReport
    track(model, optimizer)                                   -> Tracking (a context manager)
    simulated_gpu(gpu= | memory=, steps=, gpus=, history=)    -> SimulatedGpu (a context manager)

A step over several GPUs takes gpus= and parallel= (ddp, fsdp2, hsdp, tp, fsdp2-tp) among
its options; every figure is then one GPU's, and a verdict says whether each GPU fits.

`model` is a built-in name (`python -m generator models`), `hf:<hub id | config.json |
folder>`, `"package.module:function"`, or a Python callable that returns `(model,
make_batch, loss_fn)`. The options are the fields of `Experiment` under the names suites use
(precision, optimizer, checkpointing, lora_rank, …); a wrong name or value raises a
GeneratorError with the one-line message the command line prints. Each call leaves the
process as it found it (generator/measure/__init__.py says how).

Importing this module imports no PyTorch: each function imports the measuring layer when
it runs.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from typing import Any, Union

from generator.arguments import checked
from generator.errors import ConfigError, GeneratorError
from generator.experiment import Experiment
from generator.experiment.option import parse_size
from generator.experiment import levers as lever_registry
from generator.experiment.strategies import STRATEGIES, listed
from generator.plan.fit import Verdict
from generator.experiment.levers import Lever
from generator.plan.search import GPU_COUNTS, fewest_fitting, largest_fitting
from generator.results.api_types import Estimate, Measurement, StepMemory, budget_bytes

#: A model: a name, or a factory returning (model, make_batch, loss_fn).
Model = Union[str, Callable[[], Any]]
#: What a caller may not set: the function says which backend it is.
_SET_BY_THE_CALL = ("model", "backend", "batch_size", "seq_len")
#: The step's options a function's **options may hold, by their names in suites.
_OPTIONS = tuple(sorted({f.name for f in fields(Experiment)} - set(_SET_BY_THE_CALL)))
#: Why a name a caller may reach for is not an option.
_HINTS = {"backend": "each function says its backend: estimate() and the searches estimate, "
                     "measure_step(backend='cpu' | 'cuda') runs a real step",
          "batch_size": "largest_batch() searches for it"}


def _public(function: Callable) -> Callable:
    """A function of the API: its arguments checked (a ConfigError, as the command line's
    flags are), and os.environ and the warnings filters as the caller had them afterwards
    (generator/measure/__init__.py says what else each call restores)."""
    from generator.measure import environment_kept

    checked_function = checked(options=_OPTIONS, hints=_HINTS)(function)

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        with environment_kept():
            return checked_function(*args, **kwargs)

    return call


class OutOfMemory(GeneratorError):
    """The step did not fit (a real run, or an estimate given gpu_memory); `result` holds
    what was recorded, as the results store keeps it."""

    def __init__(self, message: str, result: dict[str, Any]) -> None:
        super().__init__(message)
        self.result = result


@_public
def estimate(model: Model, *, batch_size: int, seq_len: int, gpu: str | None = None,
             **options: Any) -> Estimate:
    """One training step estimated with fake tensors, nothing allocated: modelling a CUDA
    GPU (`gpu`, from the catalogue; an H100 when None) unless `device="cpu"`."""
    with _experiment(model, backend="estimate", batch_size=batch_size, seq_len=seq_len,
                     gpu=gpu or "", **options) as exp:
        return Estimate.from_dict(_result(exp), copy=False)


@_public
def measure_step(model: Model, *, batch_size: int, seq_len: int, backend: str = "cpu",
                 **options: Any) -> Measurement:
    """One training step run for real in this process, on the CPU or on this machine's CUDA
    GPU, and measured: the tracker's categories beside the allocator's own figures. On a GPU
    it resets the allocator's peak statistics, and the options expandable_segments and
    gpu_memory set the allocator's settings for the rest of the process (PyTorch cannot say
    what they were): `python -m generator measure` runs each step in a process of its own."""
    if backend not in ("cpu", "cuda"):
        raise ConfigError(f"measure_step runs a real step: backend 'cpu' or 'cuda', got "
                          f"{backend!r} (estimate() estimates)")
    with _experiment(model, backend=backend, batch_size=batch_size, seq_len=seq_len,
                     **options) as exp:
        return Measurement.from_dict(_result(exp), copy=False)


@dataclass(frozen=True)
class LargestBatch:
    """The largest batch that fits, found with as few estimates as the figures allow."""

    largest: int
    """0: not even the smallest batch fits."""
    capped: bool
    """The search reached its limit, and that batch fits."""
    tried: dict[int, Verdict]
    """Every batch estimated, in the order estimated, with its verdict."""
    estimate: Estimate
    """The estimate of the largest batch that fits (of the smallest tried, when none does)."""

    @property
    def verdict(self) -> Verdict:
        return self.tried[self.estimate.experiment.batch_size]


@_public
def largest_batch(model: Model, *, seq_len: int, gpu: str | None = None,
                  memory: int | str | None = None, first: int | None = None,
                  progress: Callable[[int, Estimate, Verdict], None] | None = None,
                  **options: Any) -> LargestBatch:
    """The largest batch (a multiple of micro_batches) that fits `gpu` or `memory` by the
    one rule (plan/fit.py), from `first` (default: micro_batches) on. `progress` is called
    with each batch as it is estimated."""
    if gpu is None and memory is None:
        raise ConfigError("largest_batch needs a gpu (e.g. 'RTX 4090') or a memory size to "
                          "fit in")
    step = options.get("micro_batches", 1)
    estimates: dict[int, Estimate] = {}
    verdicts: dict[int, Verdict] = {}

    def needed(batch: int) -> int:
        estimates[batch] = estimate(model, batch_size=batch, seq_len=seq_len, gpu=gpu,
                                    **options)
        verdicts[batch] = estimates[batch].fits(gpu, memory=memory)
        if progress is not None:
            progress(batch, estimates[batch], verdicts[batch])
        return verdicts[batch].needed_bytes

    first = first or step
    with _experiment(model, backend="estimate", batch_size=first, seq_len=seq_len,
                     gpu=gpu or "", **options):
        pass  # a bad option is refused here, before any estimate
    budget = _budget(gpu, memory)
    search = largest_fitting(needed, budget, first=first, step=step)
    shown = search.largest or min(estimates)
    return LargestBatch(search.largest, search.capped,
                        {b: verdicts[b] for b in search.needed}, estimates[shown])


@dataclass(frozen=True)
class FewestGpus:
    """The fewest GPUs, a power of two up to 1,024, on which a strategy fits each GPU."""

    gpus: int
    """0: not even 1,024 GPUs (or as many as the model can be split over) fit."""
    tried: dict[int, Verdict | str]
    """Every GPU count estimated, in the order estimated: its verdict, or why the model
    cannot be split over that many."""
    estimate: Estimate | None
    """The estimate at `gpus` (at the largest count tried, when none fits; None when no
    count could be estimated)."""


@_public
def fewest_gpus(model: Model, *, batch_size: int, seq_len: int, parallel: str,
                gpu: str | None = None, memory: int | str | None = None,
                progress: Callable[[int, Estimate | None, Verdict | str], None] | None = None,
                **options: Any) -> FewestGpus:
    """The smallest number of GPUs (1, 2, 4, …, 1,024) over which `parallel` fits one rank
    of the step in `gpu` or `memory` by the one rule, found by halving (plan/search.py says
    why that holds); batch_size is each data-parallel rank's. `progress` is called with each
    count as it is estimated."""
    if gpu is None and memory is None:
        raise ConfigError("fewest_gpus needs a gpu (e.g. 'H100') or a memory size to fit in")
    if "gpus" in options:
        raise ConfigError("fewest_gpus searches for the number of GPUs: give no gpus")
    with _experiment(model, backend="estimate", batch_size=batch_size, seq_len=seq_len,
                     gpu=gpu or "", parallel=parallel, gpus=GPU_COUNTS[-1], **options):
        pass  # a bad option is refused here, before any estimate
    if parallel == "none":
        raise ConfigError("fewest_gpus needs a strategy to share the step: parallel "
                          f"{listed(list(STRATEGIES))}")
    estimates: dict[int, Estimate] = {}
    tried: dict[int, Verdict | str] = {}

    def fits(count: int) -> bool:
        try:
            estimates[count] = estimate(model, batch_size=batch_size, seq_len=seq_len,
                                        gpu=gpu, parallel=parallel, gpus=count, **options)
        except ConfigError as error:  # the model cannot be split over this many GPUs
            tried[count] = str(error).splitlines()[0]
        else:
            tried[count] = estimates[count].fits(gpu, memory=memory)
        if progress is not None:
            progress(count, estimates.get(count), tried[count])
        return isinstance(tried[count], Verdict) and tried[count].fits

    found = fewest_fitting(fits)
    shown = found or max(estimates, default=None)
    return FewestGpus(found, tried, None if shown is None else estimates[shown])


@dataclass(frozen=True)
class LeverRow:
    """One lever estimated on top of a step (or several together)."""

    levers: tuple[Lever, ...]
    title: str
    """Its name on the step, in English."""
    estimate: Estimate | None
    """None where the model refused the lever (see refused)."""
    refused: str | None
    base: Estimate

    @property
    def changes(self) -> dict[str, Any]:
        """The options the levers set on the step, by their names in suites."""
        base = self.base.experiment
        changed = self.levers[0].apply(base, *self.levers[1:])
        return {f.name: getattr(changed, f.name) for f in fields(Experiment)
                if getattr(changed, f.name) != getattr(base, f.name)}

    @property
    def reserved_change_bytes(self) -> int | None:
        """The change of the reserved peak, what runs out (None off CUDA or when refused)."""
        if self.estimate is None or self.base.reserved_bytes is None:
            return None
        return self.estimate.reserved_bytes - self.base.reserved_bytes

    @property
    def peak_change_bytes(self) -> int | None:
        """The change of the tensors' peak."""
        return None if self.estimate is None else self.estimate.peak_bytes - self.base.peak_bytes

    @property
    def change_bytes(self) -> int | None:
        """What a lever is judged and ranked by: the reserved peak where the allocator is
        modelled, else the tensors' peak."""
        reserved = self.reserved_change_bytes
        return reserved if reserved is not None else self.peak_change_bytes


@dataclass(frozen=True)
class LeverReport:
    base: Estimate
    rows: tuple[LeverRow, ...]
    """Each lever the step does not use yet, alone on top of it, in the registry's order."""
    together: LeverRow | None
    """The levers that lowered the step, the best of each kind, together (None: fewer than
    two did)."""


@_public
def levers(model: Model, *, batch_size: int, seq_len: int, gpu: str | None = None,
           progress: Callable[[LeverRow], None] | None = None,
           **options: Any) -> LeverReport:
    """Each lever of the registry (experiment/levers.py) the step does not use yet, estimated alone
    on top of it, then the ones that lowered it together; ranked by the reserved peak, what
    runs out, beside the tensors' peak. `progress` is called with each row as it comes."""
    from generator.measure.models import resolve_model

    base = estimate(model, batch_size=batch_size, seq_len=seq_len, gpu=gpu, **options)
    exp = base.experiment
    with _model_name(model):
        spec = resolve_model(exp.model)
    step = lever_registry.Step(spec.takes, base.to_dict().get("attention"))
    rows = []
    for lever in lever_registry.offered(exp, step):
        rows.append(_lever_row(model, base, (lever,), progress))
    saved = [(row.levers[0], -row.change_bytes) for row in rows
             if row.change_bytes is not None and row.change_bytes < 0]
    best = lever_registry.together(saved)
    both = _lever_row(model, base, tuple(best), progress) if len(best) > 1 else None
    return LeverReport(base, tuple(rows), both)


def _lever_row(model: Model, base: Estimate, chosen: tuple[Lever, ...],
               progress: Callable[[LeverRow], None] | None) -> LeverRow:
    exp = base.experiment
    changed = chosen[0].apply(exp, *chosen[1:])
    title = " + ".join(lever.title(exp) for lever in chosen)
    fields_changed = {f.name: getattr(changed, f.name) for f in fields(Experiment)
                      if f.name not in _SET_BY_THE_CALL}
    try:
        outcome, refused = estimate(model, batch_size=changed.batch_size,
                                    seq_len=changed.seq_len, **fields_changed), None
    except GeneratorError as error:
        outcome, refused = None, str(error).splitlines()[0]
    row = LeverRow(chosen, title, outcome, refused, base)
    if progress is not None:
        progress(row)
    return row


@_public
def track(model: Any, optimizer: Any, *, name: str | None = None, batch_size: int = 1,
          seq_len: int = 1, precision: str = "fp32"):
    """A context manager around the user's own training-step code (their loop, their loss,
    any device): `with generator.track(model, optimizer) as tracked: ...`. Afterwards
    `tracked.measurement` holds the categories, peaks and timeline of what ran inside, and
    `tracked.save()` stores it where `python -m generator render` finds it (docs/data/).
    name, batch_size, seq_len, precision: what the report calls the step."""
    from generator.measure.track import Tracking

    return Tracking(model, optimizer, name=name, batch_size=batch_size, seq_len=seq_len,
                    precision=precision)


def simulated_gpu(gpu: str | None = None, *, memory: int | str | None = None,
                  device: str = "cuda", steps: int | None = None, gpus: int = 1,
                  history: bool = False):
    """A context manager that runs the code inside on a simulated GPU of the catalogue
    (`gpu`, matched loosely; the assumed H100 when None), or one of `memory` bytes ("24GiB"),
    or modelling the CPU (device="cpu"): `with generator.simulated_gpu("RTX 4090") as gpu:
    <unmodified training code>`, then `gpu.report()` (per-step allocated and reserved
    peaks, the run's peak, the verdict). Nothing is allocated; torch.cuda answers from the
    simulation; every patch is undone when the block ends. steps: end the block after this
    many optimizer steps (None: let it run). gpus: run the block as rank 0 of a torchrun job
    over this many GPUs (its process group a fake one); each figure is one GPU's. history:
    record every allocation with its stack, so that `gpu.snapshot()` /
    `gpu.dump_snapshot(path)` give the run in the format of `torch.cuda.memory._snapshot()`,
    which PyTorch's memory visualizer opens."""
    from generator.simulate import simulated_gpu as simulated

    return simulated(gpu, memory=memory, device=device, steps=steps, gpus=gpus,
                     history=history)


# -- helpers ---------------------------------------------------------------------------------
@contextlib.contextmanager
def _model_name(model: Model) -> Iterator[str]:
    """The name a model goes by in its experiment; a Python callable resolves meanwhile."""
    if isinstance(model, str):
        yield model
        return
    if not callable(model):
        raise ConfigError(f"model must be a name or a callable returning (model, make_batch, "
                          f"loss_fn), got {type(model).__name__}")
    from generator.measure.models.user import callable_model

    with callable_model(model) as name:
        yield name


@contextlib.contextmanager
def _experiment(model: Model, **values: Any) -> Iterator[Experiment]:
    """The experiment of a call, every option's value checked at once (one ConfigError;
    their names were checked as the call began: _public)."""
    if isinstance(values.get("gpu_memory"), str):
        values["gpu_memory"] = parse_size(values["gpu_memory"])
    with _model_name(model) as name:
        yield Experiment.from_dict({**values, "model": name})


def _result(exp: Experiment) -> dict[str, Any]:
    from generator.measure.run import measure_to_result

    result = measure_to_result(exp)
    if result.get("error"):
        raise OutOfMemory(f"{exp.label}: out of memory ({result.get('error_detail')})", result)
    return result


def _budget(gpu: str | None, memory: int | str | None) -> int:
    from generator import gpus

    return budget_bytes(gpus.find(gpu) if gpu is not None else None, memory)


__all__ = ["Estimate", "FewestGpus", "LargestBatch", "LeverReport", "LeverRow", "Measurement",
           "OutOfMemory", "StepMemory", "Verdict", "estimate", "fewest_gpus", "largest_batch", "levers",
           "measure_step", "track"]
