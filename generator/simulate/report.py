"""What a run on the simulated device found: its figures, and whether it fits.

Decisions live with the data (the command line prints them): the verdict is the one fit
rule's (plan/fit.py), judged on the run's reserved peak plus the GPU generation's CUDA
context; what nvidia-smi would show is the reserved peak plus that context's range
(plan/gpus.py). A run that met out of memory is judged on what it asked for: the allocated
and reserved bytes the refused allocation would have taken them to, so it reads "no" (or
"only just", where the tensors would fit but not the cache). A run modelling the CPU has no
caching allocator and no verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator.plan.fit import Verdict, judge
from generator.simulate.memory import Peaks
from generator.simulate.values import Read

#: The JSON report's format; a change to its fields changes it (2: the placeholders' kinds,
#: `compiled`).
SCHEMA_VERSION = 2


@dataclass(frozen=True)
class SimulationReport:
    """All sizes in bytes. Figures are estimated (simulated), never measured."""

    device: str
    """"cuda" (a GPU of the catalogue, or a memory size) or "cpu"."""
    gpu: str | None
    """The GPU simulated, by name; None on the CPU."""
    gpu_assumed: bool
    """No GPU was named: the catalogue's assumed one (plan/gpus.py ASSUMED)."""
    memory_bytes: int | None
    """What the GPU lets a process have (or the size given); None on the CPU."""
    context_bytes: tuple[int, int] | None
    """The CUDA context of the GPU's generation, low and high; None on the CPU."""
    steps: tuple[Peaks, ...]
    """Each optimizer step's peaks, from the end of the step before (the first from the
    start of the run)."""
    run: Peaks
    """The whole run's peaks."""
    placeholders: tuple[Read, ...]
    """Each place in the script that read a value a simulated tensor cannot give."""
    stopped_after_steps: bool
    """The run was stopped at its limit of optimizer steps."""
    compiled: tuple[tuple[str, int, int], ...] = ()
    """Each place (file, line, how often) where the script asked for torch.compile, which
    ran eagerly (unmodelled.py COMPILED_EAGERLY says what that leaves out)."""
    out_of_memory: str | None = None
    """The first out-of-memory error the simulated GPU raised, if any."""
    refused: Peaks | None = None
    """What the refused allocations would have taken the figures to: the verdict judges
    the memory the run asked for, not only what it got."""
    gpus: int = 1
    """The job's GPUs: the script ran as rank 0 of them, so each figure is one GPU's."""
    timeline: dict[str, list[int]] | None = None
    """With the allocator's history recorded (run --snapshot): the allocated and reserved
    bytes over its events (compare.timeline); None without it."""

    @property
    def peak_bytes(self) -> int:
        """The tensors' peak (their storages' own bytes)."""
        return self.run.tensor_bytes

    @property
    def allocated_bytes(self) -> int:
        """max_memory_allocated over the run (the CPU allocator's peak on the CPU)."""
        return self.run.allocated_bytes

    @property
    def reserved_bytes(self) -> int | None:
        """max_memory_reserved over the run; None on the CPU (no cache)."""
        return self.run.reserved_bytes if self.device == "cuda" else None

    @property
    def nvidia_smi_bytes(self) -> tuple[int, int] | None:
        """What nvidia-smi would show at the peak: reserved plus the CUDA context."""
        if self.context_bytes is None or self.reserved_bytes is None:
            return None
        low, high = self.context_bytes
        return self.reserved_bytes + low, self.reserved_bytes + high

    @property
    def verdict(self) -> Verdict | None:
        """Whether the run fits the GPU (plan/fit.py); None on the CPU."""
        if self.memory_bytes is None:
            return None
        asked = self.refused or self.run
        return judge(self.memory_bytes,
                     allocated=max(self.allocated_bytes, asked.allocated_bytes),
                     reserved=max(self.reserved_bytes, asked.reserved_bytes),
                     context=self.context_bytes or (0, 0), gpu=self.gpu)

    def to_dict(self) -> dict[str, Any]:
        """The JSON report (`run --json FILE`)."""
        verdict = self.verdict
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": "estimated: a script run on a simulated device",
            "device": self.device,
            "gpu": self.gpu,
            "gpu_assumed": self.gpu_assumed,
            "memory_bytes": self.memory_bytes,
            "gpus": self.gpus,
            "steps": [{"allocated_bytes": p.allocated_bytes, "reserved_bytes": p.reserved_bytes,
                       "tensor_bytes": p.tensor_bytes} for p in self.steps],
            "stopped_after_steps": self.stopped_after_steps,
            "peak_bytes": self.peak_bytes,
            "allocated_bytes": self.allocated_bytes,
            "reserved_bytes": self.reserved_bytes,
            "context_bytes": None if self.context_bytes is None else list(self.context_bytes),
            "nvidia_smi_bytes": (None if self.nvidia_smi_bytes is None
                                 else list(self.nvidia_smi_bytes)),
            "verdict": None if verdict is None else verdict.word,
            "verdict_reason": None if verdict is None else verdict.reason,
            "out_of_memory": self.out_of_memory,
            "placeholders": [{"file": r.file, "line": r.line, "what": r.what, "count": r.count}
                             for r in self.placeholders],
            "compiled": [{"file": file, "line": line, "count": count}
                         for file, line, count in self.compiled],
            "timeline": self.timeline,
        }
