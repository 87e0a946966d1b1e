"""Study `sharding`: one GPU's memory in a data-parallel training step, FSDP2 against DDP, as
the number of GPUs grows.

Each (strategy, world size) is estimated on this one CPU process: rank 0 of a fake process
group (collectives accepted, nothing moved) and fake tensors (nothing allocated), modelling
CUDA as the `estimate` backend does. The step is the project's step (step.py): one warm-up,
then a step measured by MemoryTracker extended for sharded tensors (sharded_tracker.py),
which counts the storages this rank holds, i.e. the local shards. Modelling CUDA, both steps'
allocations are replayed through the caching allocator's rules, as for an estimate, for
the allocated and reserved peaks of each rank (`allocator`).

- fsdp2: `fully_shard` on every block of `model.layers` and on the root (ZeRO-3): parameters,
  gradients and optimizer state are split across ranks; each block's weights are gathered
  for its forward and again for its backward.
- ddp: a full replica per rank, plus DDP's gradient buckets (see parallel.DDPBuckets).
- fsdp2-mp: fsdp2 with FSDP2's own mixed precision, `MixedPrecisionPolicy(param_dtype=bf16,
  reduce_dtype=fp32)`, and no autocast (amp-bf16 only).

ddp and fsdp2 run the step in one regime, the study's precision (amp-bf16: fp32 parameters
under torch.autocast), so that they compare like for like. fsdp2-mp is another regime: FSDP2
casts the gathered weights to bf16 and nothing is autocast, so every op runs in the dtype of
its inputs (the residual stream, the norms and the loss in bf16, unless the model upcasts
them itself). `regime` says which a strategy runs in.

Parameters ([study.params]):
    model        a built-in transformer with its blocks in `layers` (llama-7b, gpt2-small, …)
    batch_size   samples per GPU per step;  seq_len  tokens per sample
    precision    fp32 or amp-bf16 (see parallel.PRECISIONS);  default amp-bf16
    optimizer    adamw, adam or sgd;  default adamw
    attention    eager or sdpa;  default sdpa
    strategies   list of fsdp2, ddp and fsdp2-mp;  default all three (fsdp2-mp only under
                 amp-bf16)
    world_sizes  list of GPU counts, default 1, 2, 4, 8, 16, 32, 64; or a table of lists by
                 strategy, e.g. {fsdp2 = [8, 64], ddp = [8]} (its keys are then the strategies:
                 DDP's memory does not depend on the GPU count, one or two points show it)
    device       the device modelled: cuda (512-byte blocks, CUDA kernels) or cpu; default cuda

The study always estimates. A real measurement needs real GPUs and processes:
scripts/torchrun_sharding.py writes a result of the same form under torchrun.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from generator.measure.backends import METHOD_VERSION
from generator.measure.studies import unknown_params

#: Raise the last digits when this module's figures change. Its ranks are measured with the
#: estimate's tracker and CUDA emulation, so a change of the estimate's method
#: (METHOD_VERSION) measures the study again too. 3: each rank modelling CUDA has its
#: allocator's figures (the warm-up and the step replayed, as an estimate's). 4: fsdp2 runs
#: under autocast as ddp does; FSDP2's MixedPrecisionPolicy is strategy fsdp2-mp.
VERSION = METHOD_VERSION * 1000 + 4
STRATEGIES = ("fsdp2", "ddp", "fsdp2-mp")
#: The strategy that needs a 16-bit precision: FSDP2's policy casts parameters to bf16.
MIXED_POLICY = "fsdp2-mp"
WORLD_SIZES = (1, 2, 4, 8, 16, 32, 64)
DEFAULTS: dict[str, Any] = {"precision": "amp-bf16", "optimizer": "adamw", "attention": "sdpa",
                            "strategies": list(STRATEGIES), "world_sizes": list(WORLD_SIZES),
                            "device": "cuda"}
REQUIRED = ("model", "batch_size", "seq_len")
MEASURED_STEP = "generator::measured_step"


def settings(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters with their defaults filled in."""
    p = {**DEFAULTS, **params}
    if isinstance(p["world_sizes"], dict):
        p["strategies"] = [s for s in STRATEGIES if s in p["world_sizes"]]
    elif "strategies" not in params and p["precision"] != "amp-bf16":
        p["strategies"] = [s for s in STRATEGIES if s != MIXED_POLICY]
    return p


def regime(strategy: str, precision: str) -> dict[str, Any]:
    """How a strategy's step computes: `policy` (FSDP2's MixedPrecisionPolicy with bf16
    parameters, else its default: the parameters' own dtype), the precision the step runs
    under (its autocast), and the category of the low-precision copies of parameters.

    ddp and fsdp2 take the study's precision, so that they are compared in one regime; under
    fsdp2-mp FSDP2 casts each shard to bf16 before the all-gather (a communication buffer) and
    the step runs without autocast. Shared with scripts/torchrun_sharding.py."""
    if strategy == MIXED_POLICY:
        return {"regime": "bf16-params", "policy": True, "step_precision": "fp32",
                "cast_category": "comm_buffers"}
    return {"regime": precision, "policy": False, "step_precision": precision,
            "cast_category": "autocast_copies"}


def problems(params: dict[str, Any]) -> list[str]:
    from generator.experiment import ATTENTIONS, DEVICES, OPTIMIZERS
    from generator.measure.training.parallel import PRECISIONS

    found = [f"sharding needs {name}" for name in REQUIRED if name not in params]
    found += unknown_params("sharding", params, REQUIRED + tuple(DEFAULTS))
    p = settings(params)
    for name in ("batch_size", "seq_len"):
        if name in p and not _positive(p[name]):
            found.append(f"{name} must be a positive integer, got {p[name]!r}")
    for name, allowed in (("precision", PRECISIONS), ("optimizer", OPTIMIZERS),
                          ("attention", ATTENTIONS), ("device", DEVICES)):
        if p[name] not in allowed:
            found.append(f"unknown {name} {p[name]!r}; choose one of: {', '.join(allowed)}")
    sizes = p["world_sizes"]
    if isinstance(sizes, dict) and "strategies" in params:
        found.append("give strategies or a table of world_sizes by strategy, not both")
    strategies = list(sizes) if isinstance(sizes, dict) else p["strategies"]
    if not _nonempty_list(strategies) or not set(strategies) <= set(STRATEGIES):
        found.append(f"strategies must be a list of {', '.join(STRATEGIES)}, got {strategies!r}")
    elif MIXED_POLICY in strategies and p["precision"] != "amp-bf16":
        found.append(f"{MIXED_POLICY} casts the parameters to bf16: it needs precision "
                     f"amp-bf16, not {p['precision']!r}")
    lists = sizes.values() if isinstance(sizes, dict) else [sizes]
    if not all(_nonempty_list(one) and all(map(_positive, one)) for one in lists):
        found.append(f"world_sizes must be a list of positive integers (or a table of such "
                     f"lists by strategy), got {sizes!r}")
    if "model" in p and not found:
        found += _model_problems(p)
    return found + _torch_problems()


def _torch_problems() -> list[str]:
    """FSDP2 became public API (torch.distributed.fsdp.fully_shard) in PyTorch 2.6."""
    import torch

    if not torch.distributed.is_available():
        return ["the sharding study needs a PyTorch built with torch.distributed"]
    try:
        from torch.distributed.fsdp import fully_shard  # noqa: F401
    except ImportError:
        return [f"the sharding study needs PyTorch 2.6 or later for FSDP2 (fully_shard); "
                f"this is {torch.__version__}"]
    return []


def run(params: dict[str, Any]) -> dict[str, Any]:
    """Every (strategy, world size) of the study, each in a fake world of its own."""
    from generator.measure.models import resolve_model

    p = settings(params)
    spec = resolve_model(p["model"])
    rows = [measure_rank(spec, p, strategy, world_size) for strategy, world_size in plan(p)]
    return {"model": p["model"], "parameter_count": rows[0]["parameter_count"],
            "settings": p, "rows": rows,
            # the attention the rows ran with, which the activation formula depends on
            "architecture": ({**spec.architecture, "attention": p["attention"]}
                             if spec.architecture else None),
            "notes": _notes(p)}


def plan(p: dict[str, Any]) -> list[tuple[str, int]]:
    """The (strategy, world size) pairs a study measures, in order."""
    sizes = p["world_sizes"]
    if isinstance(sizes, dict):
        return [(s, n) for s in STRATEGIES if s in sizes for n in sorted(set(sizes[s]))]
    return [(s, n) for s in STRATEGIES if s in p["strategies"] for n in sorted(set(sizes))]


def measure_rank(spec, p: dict[str, Any], strategy: str, world_size: int, *,
                 fake: bool = True) -> dict[str, Any]:
    """One rank's step under `strategy` in a world of `world_size` GPUs, estimated.

    fake=False runs real tensors on this CPU instead (the collectives still move nothing),
    so that a test can hold the tracker against the CPU allocator: the measured step runs
    inside record_function(MEASURED_STEP)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.profiler import record_function

    from generator.measure.emulation.allocator_replay import TrackedSteps, predict_on
    from generator.measure.emulation.cuda_kernels import CudaKernelPolicy, optimizer_state_on_host
    from generator.measure.tracking.sharded_tracker import ShardedMemoryTracker, rank_figures
    from generator.measure.tracking.tracker import CUDA_BLOCK_BYTES
    from generator.measure.training.parallel import DDPBuckets, apply_fsdp2, fake_world
    from generator.measure.training.precision import make_optimizer
    from generator.measure.training.step import Trainer, gc_paused, tracked_step
    from generator.plan import gpus

    started = time.perf_counter()
    cuda = p["device"] == "cuda"
    with contextlib.ExitStack() as stack:
        mesh = stack.enter_context(fake_world(world_size))
        if fake:
            stack.enter_context(FakeTensorMode())
        if cuda:
            stack.enter_context(CudaKernelPolicy())
        workload = spec.build(attention=p["attention"])
        persistent: list[torch.Tensor] = []
        how = regime(strategy, p["precision"])
        step_precision, cast_category = how["step_precision"], how["cast_category"]
        if strategy == "ddp":
            persistent = DDPBuckets(workload.model).buffers
        else:
            apply_fsdp2(workload.model, mesh, bf16_params=how["policy"])
        optimizer = make_optimizer(p["optimizer"], workload.model.parameters(), impl="auto",
                                   modelled_device=p["device"])
        trainer = Trainer(workload, p["batch_size"], p["seq_len"], step_precision,
                          torch.device("cpu"), optimizer, None, fake=fake)

        def new_tracker() -> ShardedMemoryTracker:
            return ShardedMemoryTracker(
                workload.model, optimizer, persistent=persistent,
                round_bytes=CUDA_BLOCK_BYTES if cuda else 1, cast_category=cast_category,
                state_on_host=optimizer_state_on_host if cuda else None)  # as the estimate

        # The warm-up, tracked as an estimate's is: the allocator simulation replays it
        warm = new_tracker()
        with gc_paused(), warm:
            warmups = trainer.warm_up(warm.mark_phase)
        warm_up = TrackedSteps(warm.lives(), warm.phases())
        tracker = new_tracker()
        with record_function(MEASURED_STEP):
            report = tracked_step(trainer, tracker)
        figures = rank_figures(report)
        if cuda:  # this rank's allocated and reserved peaks, as the estimate gives them
            figures["allocator"] = predict_on(
                gpus.assumed(), [warm_up, TrackedSteps(tracker.lives(), tracker.phases())])
        count = sum(param.numel() for param in workload.model.parameters())
    return {"strategy": strategy, "world_size": world_size, "regime": how["regime"], **figures,
            "parameter_count": count, "warmup_steps": warmups,
            "seconds": round(time.perf_counter() - started, 2)}


def allocator_check(params: dict[str, Any], strategy: str, world_size: int) -> dict[str, int]:
    """The tracker's peak for one rank with real tensors on this CPU, beside the CPU
    allocator's own peak (torch.profiler): the check that sharded storages are counted right.
    Run it first thing in a fresh process: the profiler's running total carries allocations
    over from earlier profiling sessions in the same process."""
    from torch.profiler import ProfilerActivity, profile

    from generator.measure import quiet_profiler
    from generator.measure.backends.cpu import allocator_peak_bytes
    from generator.measure.models import resolve_model

    p = settings({**params, "device": "cpu"})
    with quiet_profiler(), profile(activities=[ProfilerActivity.CPU],
                                   profile_memory=True) as prof:
        row = measure_rank(resolve_model(p["model"]), p, strategy, world_size, fake=False)
    return {"tracker": row["peak_bytes"], "allocator": allocator_peak_bytes(prof, MEASURED_STEP)}


def _model_problems(p: dict[str, Any]) -> list[str]:
    from generator.errors import GeneratorError
    from generator.measure.models import resolve_model

    try:
        spec = resolve_model(p["model"])
    except GeneratorError as error:
        return [str(error)]
    if spec.architecture is None:
        return [f"sharding needs a transformer with its blocks in `layers`; {p['model']!r} "
                "is not one of the built-in transformers"]
    found = []
    if isinstance(p.get("seq_len"), int) and spec.max_seq_len is not None \
            and not spec.min_seq_len <= p["seq_len"] <= spec.max_seq_len:
        found.append(f"seq_len {p['seq_len']} is outside what {p['model']} accepts "
                     f"({spec.min_seq_len} to {spec.max_seq_len})")
    return found


def _notes(p: dict[str, Any]) -> list[dict]:
    from generator.results.notes import note

    notes = [note("sharding_estimate"), note("sharding_ddp_buckets")]
    if p["precision"] == "amp-bf16":
        notes.append(note("sharding_amp_bf16"))
    if MIXED_POLICY in p["strategies"]:
        notes.append(note("sharding_mixed_policy"))
    if p["device"] == "cuda":
        notes.append(note("sharding_models_cuda"))
    return notes


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _nonempty_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value)
