"""`with simulated_gpu("RTX 4090") as gpu:` code that trains; then `gpu.report()`.

One run on the simulated device puts its pieces in place, in this order, and takes every one
of them back out on exit, however the block ends (style point 5g):

1. FakeTensorMode, with the estimate's additions (measure/emulation): the rules fake tensors
   lack (fake_kernel_gaps.py), and modules converted as on a device (fake_build.py). Every
   tensor made in the block is fake: nothing is allocated, whatever the model's size.
   Values fake tensors know (FakeTensorMode's small constants) are real; the rest are
   placeholders. A module deep-copied keeps its tensors in that mode (copies.py).
2. The device's kernels: on the GPU, CUDA's fused dropout and attention kernels, autocast
   policy and half-to-float softmax (cuda_kernels.py CudaKernelPolicy); on the CPU, the
   oneDNN LSTM's workspace (cpu_kernels.py).
3. The device's storages and its memory, online (placement.py, memory.py), and the values
   a simulated tensor cannot give (values.py); a checkpointed block recomputed in these
   modes (recompute.py).
4. On the GPU, torch.cuda's answers (device.py); the optimizer steps (steps.py).
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
from generator import gpus
from generator.simulate import copies
from generator.simulate import device as cuda_device
from generator.simulate import recompute
from generator.simulate.memory import DeviceMemory
from generator.simulate.placement import DeviceStorages, Placement
from generator.simulate.report import SimulationReport
from generator.simulate.steps import Steps, StopAfterSteps
from generator.simulate.values import Placeholders

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
    steps: stop the block after this many optimizer steps (None: let it run)."""

    def __init__(self, gpu: str | None = None, *, memory: int | str | None = None,
                 device: str = "cuda", steps: int | None = None) -> None:
        if steps is not None and (not isinstance(steps, int) or steps < 1):
            raise ConfigError(f"steps must be a positive number of optimizer steps or None, "
                              f"got {steps!r}")
        self.target = Target.of(gpu, memory, device)
        self.limit = steps
        self._stack: contextlib.ExitStack | None = None
        self._report: SimulationReport | None = None

    #: The run in progress: torch.cuda and FakeTensor have one simulated GPU at a time.
    _running: "SimulatedGpu | None" = None

    def __enter__(self) -> "SimulatedGpu":
        if SimulatedGpu._running is not None:
            raise ConfigError("a simulated GPU is running already: one run at a time")
        target = self.target
        cuda = target.device == "cuda"
        context = target.gpu.context_bytes if cuda else (0, 0)
        # The allocator gets the GPU's memory less the smallest CUDA context (as an
        # estimate with a budget does, measure/backends/estimate.py).
        capacity = max(0, target.memory_bytes - context[0]) if cuda else None
        overheads = target.gpu.overheads if cuda else None
        self.memory = DeviceMemory(cuda=cuda, capacity=capacity)
        self.values = Placeholders()
        self.storages = DeviceStorages(
            self.memory, self.values, every_storage=not cuda,
            workspace_bytes=overheads.cublas_workspace_bytes if cuda else 0,
            workspaces=overheads.cublas_workspaces if cuda else 0)
        self.steps = Steps(self.memory, self.limit)
        with contextlib.ExitStack() as stack:  # undone at once if anything fails
            stack.enter_context(quiet(FAKE_TENSOR_LOG))
            stack.enter_context(fake_kernel_gaps.installed())
            stack.enter_context(FakeTensorMode(allow_non_fake_inputs=True))
            stack.enter_context(CudaKernelPolicy() if cuda else modelled_kernels("cpu"))
            stack.enter_context(fakes_converted())
            stack.enter_context(copies.fake_copies())
            stack.enter_context(self.storages)
            stack.callback(self.storages.forget)
            stack.enter_context(Placement(self.storages, self.values, gpu=cuda))
            stack.enter_context(recompute.in_forward_modes())
            if cuda:
                stack.enter_context(cuda_device.answered(
                    target.gpu, target.memory_bytes, self.memory, self.storages, context[0]))
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

    def _made(self) -> SimulationReport:
        target = self.target
        cuda = target.device == "cuda"
        return SimulationReport(
            device=target.device, gpu=target.gpu.name if cuda else None,
            gpu_assumed=target.gpu_assumed, memory_bytes=target.memory_bytes,
            context_bytes=target.gpu.context_bytes if cuda else None,
            steps=tuple(self.steps.peaks), run=self.memory.run,
            placeholders=tuple(self.values.reads), stopped_after_steps=self.steps.stopped,
            out_of_memory=self.memory.out_of_memory, refused=self.memory.refused)


def simulated_gpu(gpu: str | None = None, *, memory: int | str | None = None,
                  device: str = "cuda", steps: int | None = None) -> SimulatedGpu:
    """Run the block on a simulated GPU of the catalogue (matched loosely: "4090",
    "a100 80gb"; None: the assumed H100), or on a GPU of `memory` bytes ("24GiB"), or
    modelling the CPU (device="cpu"). Tensors made on or moved to "cuda" inside are fake:
    nothing is allocated, and `torch.cuda` answers from the simulation. Then `report()`."""
    return SimulatedGpu(gpu, memory=memory, device=device, steps=steps)
