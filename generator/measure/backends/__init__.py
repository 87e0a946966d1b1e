"""Three ways to measure one experiment, behind one function: `measure(experiment)`.

| backend  | runs                        | ground truth beside the tracker          |
|----------|-----------------------------|------------------------------------------|
| estimate | fake tensors, no memory     | none                                     |
| cpu      | a real step on the CPU      | the CPU allocator's events (profiler)    |
| cuda     | a real step on a CUDA GPU   | torch.cuda max allocated / reserved      |
"""

from __future__ import annotations

from typing import Any, Callable

from generator.errors import BackendUnavailable, ConfigError, GeneratorError, ModelError
from generator.experiment import Experiment
from generator.measure.models import MODELS, check_model, options_unavailable, resolve_model

#: Raise when a change to the measuring code changes what it reports: stored results of an
#: older method are measured again instead of being reused. 13: an estimate of CUDA names the
#: GPU it models and keeps the allocator's peaks with the cuBLAS workspaces of the
#: catalogue's other GPUs (generator/gpus.py).
METHOD_VERSION = 13


def backend_available(name: str) -> str | None:
    """None if `name` can run here, else the reason it cannot."""
    if name == "cuda":
        import torch

        if not torch.cuda.is_available():
            return "no CUDA GPU on this machine (torch.cuda.is_available() is False)"
    return None


def measure(exp: Experiment) -> dict[str, Any]:
    """Run one experiment in this process and return its figures (see results.py)."""
    reason = backend_available(exp.backend)
    if reason:
        raise BackendUnavailable(f"cannot run backend {exp.backend!r}: {reason}")
    check_model(exp)
    missing = options_unavailable(exp)
    if missing:
        raise ConfigError(missing)
    spec = resolve_model(exp.model)
    try:
        figures = _runner(exp.backend)(exp, spec)
    except GeneratorError:
        raise
    except Exception as error:
        if exp.model in MODELS and isinstance(error, ValueError):
            # the zoo's batch makers refuse sizes they cannot build (e.g. batch 1 of
            # 32-pixel images: BatchNorm needs two values per channel)
            raise ConfigError(f"{exp.model}: {str(error).splitlines()[0]}") from None
        if exp.model in MODELS or is_out_of_memory(error):
            raise  # a built-in model that fails otherwise is this tool's bug
        detail = str(error).splitlines()[0][:200] if str(error) else ""
        raise ModelError(f"model {exp.model!r} failed in the training step: "
                         f"{type(error).__name__}: {detail}") from None
    if not figures.get("error"):
        # the attention the step ran with (the model's choice where it made one), which
        # the activation formula depends on
        ran = figures.get("attention") or exp.attention
        figures["attention"] = ran if "attention" in spec.takes else None
        arch = spec.architecture
        figures["architecture"] = {**arch, "attention": ran} if arch else arch
        figures["inputs"] = spec.inputs  # what seq_len counts: tokens, or an image's side
        peak = figures["ground_truth"]["peak_bytes"] if figures.get("ground_truth") \
            else figures["peak_bytes"]
        allocator = figures.get("allocator")
        if exp.gpu_memory is not None and allocator and allocator["out_of_memory"]:
            figures["error"] = "out_of_memory"  # the simulated allocator ran out
            figures["error_detail"] = (f"within the budget of {exp.gpu_memory:,} bytes, less "
                                       f"a CUDA context of {allocator['context_bytes'][0]:,}, "
                                       f"the simulated allocator ran {allocator['out_of_memory']}")
        elif exp.gpu_memory is not None and peak > exp.gpu_memory:
            # The figures stay: how much the step would have needed is worth knowing.
            figures["error"] = "out_of_memory"
            figures["error_detail"] = (f"the step needs {peak:,} bytes, more than the "
                                       f"budget of {exp.gpu_memory:,} bytes")
    return figures


def is_out_of_memory(error: BaseException) -> bool:
    import torch

    if isinstance(error, (torch.OutOfMemoryError, MemoryError)):
        return True
    return isinstance(error, RuntimeError) and "can't allocate memory" in str(error)


def _runner(name: str) -> Callable[..., dict[str, Any]]:
    if name == "estimate":
        from generator.measure.backends.estimate import run
    elif name == "cpu":
        from generator.measure.backends.cpu import run
    else:
        from generator.measure.backends.cuda import run
    return run
