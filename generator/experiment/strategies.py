"""How a step is spread over several GPUs, one record per strategy: its name and words, its
part of `--parallel`'s help, its device mesh, how its groups are formed, how its data-parallel
ranks hold the model, whether it splits the model by its tensor-parallel plan, and what it
refuses. The experiment's option and its checks, the command line, the API, the estimate
(measure/training/parallel.py) and the scale page read these records; nothing else names a
strategy's properties.

Torch-free: the site reads the records without PyTorch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from generator.words import Words, same

#: Refused by every strategy: bitsandbytes' 4-bit layers are not sharded.
_NO_QLORA = {"quantization": "4-bit base weights (QLoRA) are not modelled with a multi-GPU "
                             "strategy"}


@dataclass(frozen=True)
class Strategy:
    name: str
    """Its value of `parallel`, in keys, flags and suites."""
    words: Words
    """How pages and headings name it."""
    help: str
    """What it does, in a few words, for `--parallel`'s help."""
    mesh: tuple[str, ...]
    """Its device mesh's dimensions, outer first; a result records the mesh by these names."""
    group: str | None = None
    """On a 2-D mesh, the option that sizes the inner dimension's groups (its default: one
    node's 8 GPUs, or all of them when fewer); the outer dimension is what is left."""
    data_parallel: str | None = None
    """How the data-parallel ranks hold the model: "replicate" (a copy each, DDP), "shard"
    (FSDP2, whose own options then apply), None (none: tensor parallelism alone)."""
    tensor_parallel: bool = False
    """Whether it splits the model by the model's own tensor-parallel plan, over the mesh's
    last dimension ("tp"); FSDP2 beside it shards over the first."""
    refuses: Mapping[str, str] = field(default_factory=dict)
    """The options it cannot be combined with (set to other than their defaults), and why."""

    @property
    def shards(self) -> bool:
        return self.data_parallel == "shard"


STRATEGIES: dict[str, Strategy] = {s.name: s for s in (
    Strategy("ddp", same("DDP"), "a replica each", ("dp",), data_parallel="replicate",
             refuses=_NO_QLORA),
    Strategy("fsdp2", same("FSDP2"), "fully_shard on every block and the root", ("dp",),
             data_parallel="shard", refuses=_NO_QLORA),
    Strategy("hsdp", same("HSDP"), "FSDP2 within --shard-size GPUs, replicated across",
             ("replicate", "shard"), group="shard_size", data_parallel="shard",
             refuses=_NO_QLORA),
    Strategy("tp", same("TP"), "tensor parallelism by the model's plan", ("tp",),
             tensor_parallel=True,
             refuses={**_NO_QLORA, "lora_rank": "LoRA is not modelled with tensor parallelism"}),
    Strategy("fsdp2-tp", same("FSDP2 × TP"), "TP within --tp-size GPUs, FSDP2 across",
             ("dp", "tp"), group="tp_size", data_parallel="shard", tensor_parallel=True,
             refuses={**_NO_QLORA, "lora_rank": "LoRA is not modelled with tensor parallelism"}),
)}
#: One GPU: no strategy.
NONE = "none"
#: The options that size a strategy's groups, each with the strategy it belongs to.
GROUP_OPTIONS = {s.group: s.name for s in STRATEGIES.values() if s.group}


def listed(names: list[str], last: str = "or") -> str:
    """["fsdp2", "hsdp", "fsdp2-tp"] → "fsdp2, hsdp or fsdp2-tp"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {last} {names[-1]}"


def sharding() -> list[str]:
    """The strategies that shard with FSDP2, whose options (its policy, offload, resharding)
    apply."""
    return [s.name for s in STRATEGIES.values() if s.shards]


def parallel_help() -> str:
    """`--parallel`'s help: each strategy with what it does."""
    return ("how the GPUs share the step: "
            + ", ".join(f"{s.name} ({s.help})" for s in STRATEGIES.values())
            + f"; {NONE}: one GPU (default)")
