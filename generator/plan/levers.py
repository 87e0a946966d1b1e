"""What to try when a step does not fit: the levers beyond the options a user chose, each one
change to their experiment, for `estimate --levers` to estimate one by one beside the step as
chosen. A lever the step already uses is left out, and so is one the model has no option
for; one the model refuses for another reason is estimated and refused with its reason.

Torch-free: the command estimates each.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from generator.experiment import Experiment, is_hf_name
from generator.experiment.option import resolved_optimizer_impl

#: Gradient accumulation is tried at these multiples of the step's micro-batches.
ACCUMULATION = (2, 4)
#: LoRA is tried at this rank, on PEFT's default modules for the model's type.
LORA_RANK = 16


@dataclass(frozen=True)
class Lever:
    words: str
    """What it is, in a few words."""
    changes: dict[str, Any]
    """The experiment fields it sets."""
    cost: str
    """What it costs beside memory."""

    def apply(self, exp: Experiment, *more: Lever) -> Experiment:
        """`exp` with this lever, and any more, on."""
        changes = dict(self.changes)
        for lever in more:
            changes.update(lever.changes)
        return replace(exp, **changes)

    @property
    def kind(self) -> str:
        """Levers of one kind replace each other: one precision, one optimizer (its kernels
        or its state), one count of micro-batches."""
        field = next(iter(self.changes))
        return "optimizer" if field == "optimizer_impl" else field


def levers_for(exp: Experiment, *, takes: tuple[str, ...],
               attention_ran: str | None) -> list[Lever]:
    """The levers to try on `exp`, for a model that takes the experiment fields `takes`
    (its ModelSpec's) and ran `attention_ran` (None: no attention option)."""
    found = []
    if not exp.checkpointing and not exp.checkpoint_classes:
        found.append(Lever("activation checkpointing", {"checkpointing": True},
                           "backward runs each block's forward again"))
    if "attention" in takes and attention_ran not in (None, "sdpa"):
        found.append(Lever("SDPA attention", {"attention": "sdpa"},
                           "none: a fused kernel in place of eager attention"))
    if exp.precision == "fp32":
        found.append(Lever("AMP bf16", {"precision": "amp-bf16"},
                           "bf16 matmuls; needs a GPU with bf16 (Ampere or later)"))
    if exp.precision != "bf16":
        found.append(Lever("pure bf16", {"precision": "bf16"},
                           "weights and optimizer state in bf16: small updates can round "
                           "away"))
    if exp.optimizer in ("adamw", "adam") and \
            resolved_optimizer_impl(exp.optimizer_impl, exp.device) != "fused":
        found.append(Lever(f"fused {exp.optimizer} kernel", {"optimizer_impl": "fused"},
                           "none (Hugging Face's Trainer picks it with PyTorch 2.8 or "
                           "later)"))
    if exp.optimizer == "adamw":
        found.append(Lever("8-bit AdamW", {"optimizer": "adamw-8bit"},
                           "bitsandbytes; optimizer state quantised to 8 bits"))
    for times in ACCUMULATION:
        count = exp.micro_batches * times
        if exp.batch_size % count == 0:
            found.append(Lever(f"gradient accumulation, {count} micro-batches of "
                               f"{exp.batch_size // count}", {"micro_batches": count},
                               f"{count} forward and backward passes per optimizer step"))
    if "logits" in takes and exp.logits == "all":
        found.append(Lever("logits at masked positions only", {"logits": "masked"},
                           "none: the same loss"))
    if is_hf_name(exp.model) and not exp.lora_rank:  # PEFT knows their module names
        found.append(Lever(f"LoRA, rank {LORA_RANK}", {"lora_rank": LORA_RANK},
                           "a different fine-tune: PEFT's adapters train, the model's own "
                           "weights stay frozen"))
        found.append(Lever(f"QLoRA: NF4 base, LoRA rank {LORA_RANK}",
                           {"lora_rank": LORA_RANK, "quantization": "nf4"},
                           "as LoRA, and the frozen weights in 4 bits: dequantized for every "
                           "matmul (slower steps), a little precision lost"))
    if exp.device == "cuda" and not exp.expandable_segments:
        found.append(Lever("expandable segments", {"expandable_segments": True},
                           "none: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; "
                           "acts on reserved memory only"))
    return found


def together(saved: list[tuple[Lever, int]]) -> list[Lever]:
    """Of the levers that saved memory (with the bytes each saved, in the order tried), the
    one of each kind that saved most, in the order tried."""
    best: dict[str, tuple[Lever, int]] = {}
    for lever, saving in saved:
        if lever.kind not in best or saving > best[lever.kind][1]:
            best[lever.kind] = (lever, saving)
    return [lever for lever, _ in saved if best[lever.kind][0] is lever]
