"""QLoRA's frozen base (Dettmers et al. 2023): the linear layers in 4 bits, as transformers
loads a model with `BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=…)`.

bitsandbytes itself runs, on fake tensors as on real ones. Each layer transformers would
convert (every `nn.Linear` and GPT-2's `Conv1D`, not the output head nor weights tied to it:
its own `get_keys_to_not_convert` and `should_convert_module`) becomes a `bnb.nn.Linear4bit`
holding its weight quantized: two weights a byte, an 8-bit scale per block of 64 weights and,
with double quantization, an fp32 scale per 256 such blocks. Its forward dequantizes the
weight into the compute dtype for the matmul (`MatMul4Bit`) and frees it, and backward does so
again: the frozen weight keeps nothing for backward, and only PEFT's adapters on top train.
The weights are quantized from the compute dtype, as from a checkpoint loaded in it; the
layers not converted (embeddings, norms, the head) keep the precision's dtype: fp32 under
AMP, which is what `prepare_model_for_kbit_training` makes of them.

Fake tensors: `Params4bit` cannot wrap a fake tensor (it makes a tensor subclass of its own),
so a frozen `nn.Parameter` of the packed weight carries the same attributes. The quantization
state is registered as buffers of its layer, so that the step counts it with the parameters.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import sys
from dataclasses import replace
from typing import Iterator

from generator.errors import ConfigError
from generator.measure import importing_bitsandbytes
from generator.measure.training.optimizer_8bit import INSTALL
from generator.measure.training.workload import Workload
from generator.results.notes import note

#: Weights per scale: BitsAndBytesConfig's default blocksize for 4-bit weights.
BLOCK = 64


def unavailable(quantization: str) -> str | None:
    """Why 4-bit weights cannot be made here (bitsandbytes is missing), or None."""
    if quantization != "none" and importlib.util.find_spec("bitsandbytes") is None:
        return f"quantization needs the bitsandbytes package: {INSTALL}"
    return None


def quantized(workload: Workload, *, quant_type: str, compute_dtype) -> Workload:
    """The workload with its model's linear layers in 4 bits (bitsandbytes' Linear4bit), as
    transformers chooses them; the note says how many and what stayed as it was."""
    with importing_bitsandbytes():
        import bitsandbytes
    from torch import nn

    from generator.measure.emulation.fake_build import under_fake_tensors

    model = workload.model
    if not hasattr(model, "get_output_embeddings"):  # not a transformers model
        raise ConfigError("quantization: 4-bit weights are loaded through transformers; give "
                          "an hf: model")
    rules = _transformers_rules()
    if rules is None:
        raise ConfigError("quantization needs transformers 5 or later (pip install -e '.[hf]')")
    keys_to_keep, should_convert, conv1d = rules
    fake = under_fake_tensors()
    keep = keys_to_keep(model)
    converted, kept = [], []
    for name, module in model.named_modules():
        if type(module) is nn.Linear or isinstance(module, conv1d):
            (converted if should_convert(name, keep) else kept).append((name, module))
    if not converted:
        raise ConfigError(f"quantization: {type(model).__name__} has no linear layer that "
                          "transformers quantizes")
    with _fake_quantization_map(fake):
        for name, module in converted:
            parent, _, child = name.rpartition(".")
            setattr(model.get_submodule(parent), child, _linear_4bit(
                module, is_conv1d=isinstance(module, conv1d), quant_type=quant_type,
                compute_dtype=compute_dtype, fake=fake))
    model.is_loaded_in_4bit = True  # what PEFT reads to put its 4-bit LoRA layers on them
    said = note("qlora", bitsandbytes=bitsandbytes.__version__, quant_type=quant_type,
                layers=len(converted), block=BLOCK,
                dtype=str(compute_dtype).removeprefix("torch."),
                kept=[name for name, _ in kept])
    return replace(workload, notes=(*workload.notes, said))


def weights_in(param) -> int:
    """The weights a parameter holds: a 4-bit one packs two a byte (its quant_state has the
    shape it was quantized from)."""
    state = getattr(param, "quant_state", None)
    return math.prod(state.shape) if state is not None else param.numel()


def _transformers_rules():
    """transformers' own rules for which layers a 4-bit load converts, or None before 5."""
    try:
        from transformers.pytorch_utils import Conv1D
        from transformers.quantizers.base import get_keys_to_not_convert
        from transformers.quantizers.quantizers_utils import should_convert_module
    except ImportError:
        return None
    return get_keys_to_not_convert, should_convert_module, Conv1D


def _linear_4bit(module, *, is_conv1d: bool, quant_type: str, compute_dtype, fake: bool):
    """`module` as bitsandbytes' Linear4bit, its weight quantized from the compute dtype."""
    import bitsandbytes as bnb
    from bitsandbytes import functional
    from torch import nn
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    weight = module.weight.detach()
    if is_conv1d:  # GPT-2's Conv1D holds its weight as (in, out)
        weight = weight.t()
    out_features, in_features = weight.shape
    with unset_fake_temporarily():  # a shell on the meta device; its weight comes next
        layer = bnb.nn.Linear4bit(in_features, out_features, bias=module.bias is not None,
                                  compute_dtype=compute_dtype, compress_statistics=True,
                                  quant_type=quant_type, device="meta")
    packed, state = functional.quantize_4bit(weight.to(compute_dtype), blocksize=BLOCK,
                                             compress_statistics=True, quant_type=quant_type)
    if fake:
        layer.weight = nn.Parameter(packed, requires_grad=False)
        for name, value in (("quant_state", state), ("quant_type", quant_type),
                            ("compress_statistics", True), ("blocksize", BLOCK),
                            ("bnb_quantized", True), ("module", layer)):
            setattr(layer.weight, name, value)
    else:
        layer.weight = bnb.nn.Params4bit(
            data=packed, requires_grad=False, quant_state=state, blocksize=BLOCK,
            compress_statistics=True, quant_type=quant_type, module=layer, bnb_quantized=True)
    layer.bias = module.bias
    layer.quant_state = state
    tensors = [state.absmax, state.code, state.offset, state.state2.absmax, state.state2.code]
    for number, tensor in enumerate(tensors):
        layer.register_buffer(f"quant_state_{number}", tensor, persistent=False)
    return layer.train(module.training)


@contextlib.contextmanager
def code_tables_kept() -> Iterator[None]:
    """bitsandbytes' code tables (`functional.name2qmap`) as they were, afterwards, for a
    script run on the simulated GPU: double quantization stores its 8-bit table there at its
    first use, and one made of fake tensors would serve every later real quantization in the
    process. bitsandbytes imported meanwhile (by the script) had none before."""
    def tables() -> dict | None:
        functional = sys.modules.get("bitsandbytes.functional")
        return getattr(functional, "name2qmap", None)

    before = dict(tables() or {})
    try:
        yield
    finally:
        after = tables()
        if after is not None:
            after.clear()
            after.update(before)


@contextlib.contextmanager
def _fake_quantization_map(fake: bool) -> Iterator[None]:
    """Double quantization looks its 8-bit code up in `functional.name2qmap["dynamic"]`,
    made on first use from Python numbers, which fake tensors refuse. On fake tensors the
    quantization sees the real map made outside fake mode and held as a fake tensor (as
    optimizer_8bit.py does); the real one is put back after, for real runs."""
    if not fake:
        yield
        return
    import torch
    from bitsandbytes import functional
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    saved = functional.name2qmap.get("dynamic")
    with unset_fake_temporarily():
        real = functional.create_dynamic_map().to("cpu") if saved is None else saved
    functional.name2qmap["dynamic"] = torch._guards.detect_fake_mode().from_tensor(real)
    try:
        yield
    finally:
        functional.name2qmap["dynamic"] = real
