"""What a result holds, typed once: a step result, a study result and their parts.

Results travel as JSON-ready dicts (they are written and read as JSON); these TypedDicts name
their fields for readers and type checkers. `store.load` checks a file against them. All
sizes are in bytes. Nothing here imports PyTorch: the site reads results without it.
"""

from __future__ import annotations

from typing import Any, Optional, TypedDict

#: The categories of a step's memory, in the order tables, charts and timelines list them.
#: `not_attributed`: bytes the CPU allocator handed out that neither a tracked tensor nor an
#: op's internal buffer explains (real CPU runs only,
#: generator/measure/tracking/cpu_allocator_blocks.py); `comm_buffers`: what a rank of a
#: multi-GPU step holds to communicate (FSDP2's gathered weights, DDP's gradient buckets;
#: sharded_tracker.py). Results measured before either existed read them as 0 (store.py).
CATEGORIES = ("parameters", "gradients", "optimizer_state", "activations",
              "autocast_copies", "comm_buffers", "temporaries", "not_attributed")
#: The largest byte count, or count, a result holds (int64, as PyTorch counts): a larger one
#: is no measurement, and turning it into a float for a page would overflow.
MAX_COUNT = 2**63 - 1
#: Categories that tables list only where a result has bytes in them (charts show only the
#: categories with bytes anyway).
ONLY_WHEN_SEEN = ("comm_buffers", "not_attributed")

#: How far a result stands from a real GPU, the device the site is about: a GPU run first,
#: then an estimate modelling CUDA, a real CPU run, an estimate modelling the CPU. Every page
#: that picks among results of one setting picks by this.
_TRUST = {("cuda", "cuda"): 0, ("estimate", "cuda"): 1, ("cpu", "cpu"): 2, ("estimate", "cpu"): 3}


def trust(backend: str, device: str | None = None) -> int:
    """The rank of a result of `backend` modelling `device` (lower is closer to a GPU).
    A real backend measures its own device; `device` matters for estimates only."""
    return _TRUST.get((backend, backend if backend != "estimate" else device or "cuda"), 9)


def result_trust(result: dict[str, Any]) -> int:
    """`trust` of a step result (its experiment names the modelled device) or of a study."""
    exp = result.get("experiment") or result.get("study") or {}
    return trust(exp.get("backend", result.get("backend", "")), exp.get("device"))


class Phase(TypedDict):
    name: str
    """forward, backward or optimizer."""
    tick: int
    """The clock tick (allocation event) at which the step entered it."""


class Timeline(TypedDict):
    tick: list[int]
    end_tick: int
    bytes: dict[str, list[int]]
    """Per category, the bytes live at each tick."""


class Environment(TypedDict):
    machine_id: str
    torch: Optional[str]
    transformers: Optional[str]
    python: Optional[str]
    platform: Optional[str]
    cpu: Optional[str]
    cpu_count: Optional[int]
    cuda: Optional[str]
    device_name: Optional[str]
    driver: Optional[str]
    git_commit: Optional[str]


class GroundTruth(TypedDict, total=False):
    source: str
    peak_bytes: int
    max_reserved_bytes: int
    allocator_overhead_bytes: int
    context_bytes: int
    device_total_bytes: int
    memory_stats: dict[str, Any]
    tracker_peak_bytes: int
    """cpu: the tracker's own peak, before the allocator's blocks are labelled with it."""
    before_steps: dict[str, int]
    """cuda: allocated_bytes and reserved_bytes once the model is built, before step 1."""
    steps_peak_bytes: int
    """cuda: the allocated peak over five untracked steps (the warm-up and four timed), as
    the allocator simulation and the published H100 runs count it; the tracked step comes
    after them (backends/cuda.py says why)."""
    steps_max_reserved_bytes: int
    """cuda: the reserved peak over the same five steps."""


class AllocatorPrediction(TypedDict):
    """The CUDA caching allocator's figures, simulated over the warm-up, the measured step
    and replays of it (generator/measure/emulation/allocator_replay.py); estimates modelling
    CUDA only."""

    source: str
    steps: int
    peak_allocated_bytes: int
    """The allocator's own allocated (and active) peak: block sizes, over all the steps."""
    peak_reserved_bytes: int
    """What torch.cuda.max_memory_reserved() would say: segments taken from the driver."""
    workspace_bytes: int
    """Of the allocated bytes, the cuBLAS workspaces that PyTorch keeps for its matmuls."""
    segments: int
    out_of_memory: Optional[str]
    """Where the allocator ran out within the budget (gpu_memory less the CUDA context)."""
    context_bytes: list[int]
    """The CUDA context's size on the modelled GPU, low and high (generator/gpus.py): what
    nvidia-smi shows on top of reserved memory."""
    # With allocation_trace, also "trace": the events replayed (generator/allocator/trace.py).


class Figures(TypedDict):
    """What measuring one step gives (the tracker's report and the backend's additions)."""

    peak_bytes: int
    live_at_peak_bytes: dict[str, int]
    category_max_bytes: dict[str, int]
    timeline: Timeline
    module_activation_bytes: dict[str, int]
    parameter_count: int
    trainable_parameter_count: Optional[int]
    """Those with requires_grad (None in results from before it was recorded)."""
    attention: Optional[str]
    """The attention the step ran (eager, sdpa): for a Hugging Face model left to choose,
    transformers' choice. None for a model without that option, or in results from before
    it was recorded (the experiment's attention ran there)."""
    phases: list[Phase]
    phase_max_bytes: dict[str, dict[str, int]]
    """Per phase, each category's and the total's largest bytes over the phase's whole
    interval (empty in results from before method 9)."""


class StepResult(Figures):
    """One experiment's result file (`results/<machine-id>/<key>.json`). When `error` is set
    (e.g. out_of_memory) the figures may be absent."""

    schema_version: int
    key: str
    experiment: dict[str, Any]
    """The experiment's fields (generator.experiment.Experiment.to_dict())."""
    backend: str
    method_version: Optional[int]
    environment: Environment
    measured_at: str
    error: Optional[str]
    error_detail: Optional[str]
    step_seconds: Optional[float]
    ground_truth: Optional[GroundTruth]
    notes: list[str]
    architecture: Optional[dict[str, Any]]
    """For transformers: layers, hidden, heads, intermediate, vocab, attention."""
    inputs: str
    """What the experiment's seq_len counts: "tokens" (or frames), or "image" (its side)."""
    tracked_storages: int
    warmup_steps: int
    allocator: Optional[AllocatorPrediction]


class StudyResult(TypedDict):
    """One study's result file (`results/studies/<machine-id>/<name>.json`)."""

    schema_version: int
    study: dict[str, Any]
    """kind, name, backend, params."""
    method_version: int
    environment: Environment
    measured_at: str
    error: Optional[str]
    data: dict[str, Any]
    """The kind's own figures (see its module under generator/measure/studies/)."""
