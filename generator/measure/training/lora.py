"""LoRA (Hu et al. 2021) through PEFT, as users train it: `get_peft_model(model, LoraConfig(…))`.

PEFT itself runs, on fake tensors as on real ones, so what it does to memory is its own and
not restated here: the model's weights are frozen (no gradients, no optimizer state), each
target module gets two small trainable matrices, A (rank × in) and B (out × rank), and adapters
of a model cast to fp16 or bf16 are kept in fp32 (`autocast_adapter_dtype`, on by default).
What the adapters cost in activations follows from their forward: each keeps its input (or,
with dropout, its own dropped copy and the mask) and its rank-sized middle for backward; a
frozen layer behind a trainable one still passes gradients through, so autocast's 16-bit copy
of a frozen weight is saved for backward instead of cached (autocast caches only the casts of
weights that require grad).
"""

from __future__ import annotations

import importlib.util
import warnings
from dataclasses import replace

from generator.errors import ConfigError
from generator.measure import importing_bitsandbytes
from generator.measure.training.workload import Workload
from generator.results.notes import note

INSTALL = "pip install peft"


def unavailable(lora_rank: int) -> str | None:
    """Why LoRA cannot run here (PEFT is missing), or None."""
    if lora_rank and importlib.util.find_spec("peft") is None:
        return f"lora_rank needs the peft package: {INSTALL}"
    return None


def with_lora(workload: Workload, *, rank: int, targets: tuple[str, ...],
              dropout: float) -> Workload:
    """The workload with PEFT's LoRA on its model: the model becomes the PeftModel, whose
    forward calls the original one; the blocks activations are attributed to stay the same
    modules, now holding adapters. Its notes say where PEFT put the adapters."""
    from generator.measure.emulation.fake_build import fake_build

    with importing_bitsandbytes():
        import peft

    model = workload.model
    default = _default_targets(model) if not targets else None
    if not targets and default is None:
        raise ConfigError(f"lora_rank: PEFT has no default target modules for "
                          f"{type(model).__name__}; give --lora-targets (module names, e.g. "
                          f"{_linear_names(model)}, or all-linear)")
    # alpha only scales B·A's output (a number, no memory); PEFT's default is 8 for any rank.
    config = peft.LoraConfig(r=rank, lora_dropout=dropout, target_modules=(
        "all-linear" if targets == ("all-linear",) else list(targets) or None))
    # PEFT moves each adapter to its base layer's device (`.to()`), which fake tensors
    # refuse outside fake_build (see there).
    try:
        with warnings.catch_warnings(), fake_build():
            warnings.simplefilter("ignore")  # "…name_or_path was renamed…": no Hub id here
            wrapped = peft.get_peft_model(model, config)
    except ValueError as error:  # targets the model lacks
        raise ConfigError(f"lora_targets: {str(error).splitlines()[0][:200]} (the linear "
                          f"layers of {type(model).__name__}: {_linear_names(model)})") from None
    # the modules' own names (PEFT gives a path where it matched one: all-linear, own models)
    adapted = sorted({name.rsplit(".", 1)[-1]
                      for name in wrapped.peft_config["default"].target_modules})
    said = {"peft": peft.__version__, "rank": rank, "modules": adapted}
    if default:
        said = note("lora_default", **said, model_type=model.config.model_type)
    else:
        said = note("lora_all_linear" if targets == ("all-linear",) else "lora_as_asked",
                    **said)
    return replace(workload, model=wrapped, notes=(*workload.notes, said))


def _default_targets(model) -> list[str] | None:
    """PEFT's target modules for the model's type (a Hugging Face config's model_type), or
    None where it has none (the built-in models, users' own)."""
    from peft.utils.constants import TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING

    model_type = getattr(getattr(model, "config", None), "model_type", None)
    return TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING.get(model_type)


def _linear_names(model) -> str:
    """The distinct last names of the model's linear layers (GPT-2's are transformers'
    Conv1D), which targets can name."""
    from torch import nn

    names = sorted({path.rsplit(".", 1)[-1] for path, m in model.named_modules()
                    if path and (isinstance(m, nn.Linear) or type(m).__name__ == "Conv1D")})
    return ",".join(names[:12]) + (",…" if len(names) > 12 else "")
