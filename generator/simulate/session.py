"""`with simulated_gpu("RTX 4090") as gpu:` code that trains; then `gpu.report()`.

One run on the simulated device puts its pieces in place, in this order, and takes every one
of them back out on exit, however the block ends (style point 5g):

1. FakeTensorMode, with the estimate's additions (measure/emulation): the rules fake tensors
   lack (fake_kernel_gaps.py), and modules converted as on a device (fake_build.py), their
   parameter subclasses too (subclasses.py: bitsandbytes' Params4bit), bitsandbytes' code
   tables put back afterwards (quantize_4bit.py). Every
   tensor made in the block is fake: nothing is allocated, whatever the model's size.
   Values fake tensors know (FakeTensorMode's small constants) are real; the rest are
   placeholders. A module deep-copied keeps its tensors in that mode (copies.py).
2. The device's kernels: on the GPU, CUDA's fused dropout and attention kernels, autocast
   policy and half-to-float softmax (cuda_kernels.py CudaKernelPolicy); on the CPU, the
   oneDNN LSTM's workspace (cpu_kernels.py) and the generator's states that checkpoints
   keep (rng_states.py).
3. The device's storages and its memory, online (placement.py, memory.py), the values
   a simulated tensor cannot give (values.py), checkpoints read from their headers
   (weights.py), a storage's address its own (addresses.py: a checkpoint's check for
   shared tensors), from_pretrained answered offline (pretrained.py), and a checkpointed
   block recomputed in these modes (recompute.py).
4. On the GPU, torch.cuda's answers (device.py); torch.compile made eager (unmodelled.py);
   the optimizer steps (steps.py).

With `history=True` the allocator's every call is recorded with the script's stack, as
`torch.cuda.memory._record_memory_history()` does on a GPU, and `snapshot()` /
`dump_snapshot(path)` give it in the format of `torch.cuda.memory._snapshot()`
(snapshot.py), which PyTorch's memory visualizer opens. The script's own calls to that API
are answered from the simulated GPU too (`recording`: what it dumped).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from torch._subclasses.fake_tensor import FakeTensorMode

from generator.errors import ConfigError
from generator.experiment.option import parse_size
from generator.measure import quiet
from generator.measure.backends.estimate import FAKE_TENSOR_LOG
from generator.measure.emulation import fake_kernel_gaps
from generator.measure.emulation.cpu_kernels import modelled_kernels
from generator.measure.emulation.cuda_kernels import CudaKernelPolicy
from generator.measure.emulation.fake_build import fakes_converted
from generator.measure.training.quantize_4bit import code_tables_kept
from generator import gpus
from generator.simulate import addresses, compare, copies, recompute, rng_states
from generator.simulate import device as cuda_device
from generator.simulate.distributed import local_gpus, rank_zero_of
from generator.simulate.memory import DeviceMemory
from generator.simulate.placement import DeviceStorages, Placement
from generator.simulate import snapshot as snapshots
from generator.simulate.pretrained import pretrained_offline
from generator.simulate.report import SimulationReport
from generator.simulate.steps import Steps, StopAfterSteps
from generator.simulate.subclasses import subclasses_of_fakes
from generator.simulate.unmodelled import Compiled
from generator.simulate.values import Placeholders, Values
from generator.simulate.weights import weights_not_read

DEVICES = ("cuda", "cpu")


@dataclass(frozen=True)
class Target:
    """The device a run simulates: a GPU of the catalogue, its memory the catalogue's or a
    size given (a size alone: the assumed GPU's overheads, as estimate's --gpu-memory), or
    the CPU."""

    device: str
    gpu: gpus.GPU | None
    gpu_assumed: bool
    memory_bytes: int | None

    @classmethod
    def of(cls, gpu: str | None = None, memory: int | str | None = None,
           device: str = "cuda") -> "Target":
        if device not in DEVICES:
            raise ConfigError(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
        if device == "cpu":
            if gpu or memory is not None:
                raise ConfigError("a run that models the CPU takes no GPU and no GPU memory")
            return cls("cpu", None, False, None)
        size = parse_size(memory) if isinstance(memory, str) else memory
        if size is not None and size <= 0:
            raise ConfigError(f"memory must be a positive number of bytes, got {size!r}")
        found = gpus.find(gpu) if gpu else gpus.assumed()
        return cls("cuda", found, not gpu, size if size is not None else found.memory_bytes)


class SimulatedGpu:
    """The run's context manager (see the module); `report()` once the block has ended.
    steps: stop the block after this many optimizer steps (None: let it run). gpus: run it
    as rank 0 of a job over this many GPUs (simulate/distributed.py).
    history: record the allocator's calls with their stacks, for `snapshot()`."""

    def __init__(self, gpu: str | None = None, *, memory: int | str | None = None,
                 device: str = "cuda", steps: int | None = None, gpus: int = 1,
                 history: bool = False) -> None:
        if steps is not None and (not isinstance(steps, int) or steps < 1):
            raise ConfigError(f"steps must be a positive number of optimizer steps or None, "
                              f"got {steps!r}")
        if not isinstance(gpus, int) or isinstance(gpus, bool) or gpus < 1:
            raise ConfigError(f"gpus must be a positive number of GPUs, got {gpus!r}")
        self.target = Target.of(gpu, memory, device)
        if history and self.target.device != "cuda":
            raise ConfigError("a memory snapshot is of the CUDA caching allocator: history "
                              "needs the simulated GPU (device='cuda')")
        self.limit, self.history, self.gpus = steps, history, gpus
        self._stack: contextlib.ExitStack | None = None
        self._report: SimulationReport | None = None
        self._left: dict | None = None
        """The snapshot of the memory as the run left it: taken once, after the block."""
        self.recording: snapshots.ScriptRecording | None = None
        """On the GPU: the script's own calls to torch.cuda.memory's snapshot API."""

    #: The run in progress: torch.cuda and FakeTensor have one simulated GPU at a time.
    _running: "SimulatedGpu | None" = None

    def __enter__(self) -> "SimulatedGpu":
        if SimulatedGpu._running is not None:
            raise ConfigError("a simulated GPU is running already: one run at a time")
        target = self.target
        cuda = target.device == "cuda"
        self._left = None
        context = target.gpu.context_bytes if cuda else (0, 0)
        # The allocator gets the GPU's memory less the smallest CUDA context (as an
        # estimate with a budget does, measure/backends/estimate.py).
        capacity = max(0, target.memory_bytes - context[0]) if cuda else None
        overheads = target.gpu.overheads if cuda else None
        self.memory = DeviceMemory(cuda=cuda, capacity=capacity, history=self.history)
        self.values = Placeholders()
        self.storages = DeviceStorages(
            self.memory, self.values, every_storage=not cuda,
            workspace_bytes=overheads.cublas_workspace_bytes if cuda else 0,
            workspaces=overheads.cublas_workspaces if cuda else 0)
        self.steps = Steps(self.memory, self.limit)
        self.compiled = Compiled()
        with contextlib.ExitStack() as stack:  # undone at once if anything fails
            stack.enter_context(quiet(FAKE_TENSOR_LOG))
            stack.enter_context(fake_kernel_gaps.installed())
            stack.enter_context(FakeTensorMode(allow_non_fake_inputs=True))
            stack.enter_context(CudaKernelPolicy() if cuda else modelled_kernels("cpu"))
            stack.enter_context(fakes_converted())
            stack.enter_context(subclasses_of_fakes())
            stack.enter_context(code_tables_kept())
            stack.enter_context(copies.fake_copies())
            stack.enter_context(self.storages)
            stack.enter_context(self.storages.resizes_followed())
            if not cuda:
                stack.enter_context(rng_states.counted(self.storages))
            stack.callback(self.storages.forget)
            stack.enter_context(Placement(self.storages, gpu=cuda))
            # above Placement: the script's reads
            stack.enter_context(Values(self.values, known=self.storages.knows_values))
            stack.enter_context(weights_not_read(self.storages, cpu=not cuda))
            stack.enter_context(addresses.distinct())
            stack.enter_context(pretrained_offline())
            stack.enter_context(recompute.in_forward_modes())
            if cuda:
                stack.enter_context(cuda_device.answered(
                    target.gpu, target.memory_bytes, self.memory, self.storages, context[0],
                    devices=local_gpus(self.gpus)))
                self.recording = snapshots.ScriptRecording(self.memory, target.gpu.name)
                stack.enter_context(self.recording.answering())
            if self.gpus > 1:
                stack.enter_context(rank_zero_of(self.gpus))
            stack.enter_context(self.compiled.eager())
            stack.enter_context(self.steps)
            SimulatedGpu._running = self
            stack.callback(setattr, SimulatedGpu, "_running", None)
            self._stack = stack.pop_all()
        return self

    def __exit__(self, kind, error, trace) -> bool:
        self._stack.close()
        self._stack = None
        self._report = self._made()
        return kind is StopAfterSteps  # the block had its steps: it ends here, cleanly

    def report(self) -> SimulationReport:
        """The run's figures; a ConfigError before the block has ended."""
        if self._report is None:
            raise ConfigError("no report yet: call report() after the `with` block")
        return self._report

    def snapshot(self) -> dict:
        """The simulated GPU's memory as `torch.cuda.memory._snapshot()` gives a real one's:
        its segments and blocks now, and with history the trace of every call (else empty).
        During the block or after it (then: as the run left it)."""
        if not hasattr(self, "memory"):
            raise ConfigError("no snapshot yet: the simulated GPU has not run")
        if self.target.device != "cuda":
            raise ConfigError("a memory snapshot is of the CUDA caching allocator: a run "
                              "that models the CPU has none")
        if self._stack is not None:  # during the block: as the memory is now
            return snapshots.taken(self.memory, gpu=self.target.gpu.name)
        if self._left is None:  # after it the memory no longer changes: the report's
            # timeline and a written snapshot share one
            self._left = snapshots.taken(self.memory, gpu=self.target.gpu.name)
        return self._left

    def dump_snapshot(self, path) -> None:
        """`snapshot()` written to `path` as `torch.cuda.memory._dump_snapshot` writes one
        (a pickle), whole or not at all."""
        snapshots.dump(self.snapshot(), path)

    def _made(self) -> SimulationReport:
        target = self.target
        cuda = target.device == "cuda"
        return SimulationReport(
            device=target.device, gpu=target.gpu.name if cuda else None, gpus=self.gpus,
            gpu_assumed=target.gpu_assumed, memory_bytes=target.memory_bytes,
            context_bytes=target.gpu.context_bytes if cuda else None,
            steps=tuple(self.steps.peaks), run=self.memory.run,
            placeholders=tuple(self.values.reads), compiled=tuple(self.compiled.places),
            stopped_after_steps=self.steps.stopped,
            out_of_memory=self.memory.out_of_memory, refused=self.memory.refused,
            timeline=compare.timeline(self.snapshot()) if self.history else None)


def simulated_gpu(gpu: str | None = None, *, memory: int | str | None = None,
                  device: str = "cuda", steps: int | None = None,
                  gpus: int = 1, history: bool = False) -> SimulatedGpu:
    """Run the block on a simulated GPU of the catalogue (matched loosely: "4090",
    "a100 80gb"; None: the assumed H100), or on a GPU of `memory` bytes ("24GiB"), or
    modelling the CPU (device="cpu"). Tensors made on or moved to "cuda" inside are fake:
    nothing is allocated, and `torch.cuda` answers from the simulation. gpus: the block runs
    as rank 0 of a job over this many GPUs, as torchrun starts it (simulate/distributed.py),
    and each figure is one GPU's. Then `report()`; with history=True, `snapshot()` /
    `dump_snapshot(path)` as PyTorch's own."""
    return SimulatedGpu(gpu, memory=memory, device=device, steps=steps, gpus=gpus,
                        history=history)
