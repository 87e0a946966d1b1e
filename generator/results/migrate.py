"""Results of an older schema, read as the current one; their figures are never touched.

Schema 1 kept each note as an English sentence. Schema 2 keeps an identifier with values
(notes.py), whose words in both languages live in one catalogue. `upgrade` reads each
sentence the measuring code of schema 1 wrote back into its identifier and values, once, as
a result is loaded; a sentence it does not know stays as written (notes.text shows it so).
`python -m generator migrate` writes a results folder's old files again as the current schema,
once. These patterns read old files only: no page translates prose.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from generator.plan.gpus import ASSUMED
from generator.results.notes import note

#: The schema this module reads results of: every older one.
OLDEST = 1

_EXACT = {
    "estimate: fake tensors, nothing allocated; kernels' internal buffers are not seen "
    "unless modelled": "estimate",
    "dropout: CUDA's fused kernel, keeping a 1-byte mask, not the CPU's noise tensor":
        "cuda_dropout",
    "attention: CUDA's fused SDPA kernel (flash for fp16/bf16 without a mask, else "
    "memory-efficient), keeping output and log-sum-exp, not the attention matrix":
        "cuda_attention",
    "softmax of fp16 into fp32: CUDA's half-to-float kernel, without the CPU's fp32 copy":
        "cuda_softmax",
    "optimizer step counters: in host memory, as torch.optim keeps them beside CUDA "
    "parameters unless capturable or fused": "optimizer_state_on_host",
    "figures: the allocator's blocks labelled by the tracker; kernels' internal buffers count "
    "as temporaries": "cpu_blocks",
    "mixed-dtype elementwise ops: the copies the CPU's kernels make of inputs not in the op's "
    "common dtype (TensorIterator; cpu_promotion.py)": "cpu_promotion",
    "attention masks: the batch holds no padding, so transformers leaves the mask to SDPA's "
    "causal flag where a real run of it does (fake tensors have no values to read)":
        "unpadded_masks",
    "not modelled: cuDNN's reserve space for the recurrent layers (LSTM, GRU, RNN), which "
    "their CUDA kernel keeps for backward and whose size cuDNN decides; the estimate counts "
    "what the CPU's kernels save in its place (for an LSTM, nothing)":
        "not_modelled_cudnn_reserve",
    "ddp: PyTorch's DistributedDataParallel cannot run on fake tensors; its gradient buckets "
    "are reproduced (25 MiB each, gradient_as_bucket_view=False)": "sharding_ddp_buckets",
}

Reader = Callable[[re.Match, dict[str, Any]], dict[str, Any]]


def _names(text: str) -> list[str]:
    return [] if text == "none" else text.split(", ")


#: (a sentence's pattern, the note it was) for the sentences that carried values.
_PATTERNS: list[tuple[re.Pattern[str], Reader]] = [(re.compile(p), r) for p, r in (
    (r"models CUDA: sizes rounded up to (\d+)-byte blocks, foreach optimizer kernels",
     lambda m, r: note("models_cuda", block=int(m[1]))),
    (r"autocast: CUDA's op policy of PyTorch ([\d.]+) in place of the CPU's \(pow, exp, sums, "
     r"softmax, norms and losses in fp32; cat, stack not cast\)",
     lambda m, r: note("cuda_autocast", torch=m[1])),
    (r"gradient sums: ([\d,]+) sums of two gradients made in place, where autograd makes them "
     r"so in an untracked step \(\w+\.py\); a fake or tracked step makes each in a new tensor",
     lambda m, r: note("in_place_sums", count=int(m[1].replace(",", "")))),
    # before the GPU catalogue, every estimate had the workspaces of the GPU now ASSUMED
    (r"allocated and reserved peaks: the CUDA caching allocator's rules replayed over (\d+) "
     r"steps, with the cuBLAS workspaces of an? .+ GPU",
     lambda m, r: note("allocator_replay_assumed", steps=int(m[1]), gpu=ASSUMED)),
    (r"model built on the GPU: building it freed .+ \(e\.g\. an output weight that tying "
     r"replaced\), which the allocator keeps cached for the steps",
     lambda m, r: note("built_on_device",
                       freed_bytes=r["allocator"]["freed_while_building_bytes"])),
    (r"LoRA: PEFT ([\w.+-]+) adapters of rank (\d+) on (.+) \(PEFT's default for (\S+)\); "
     r"the model's own weights frozen",
     lambda m, r: note("lora_default", peft=m[1], rank=int(m[2]), modules=_names(m[3]),
                       model_type=m[4])),
    (r"LoRA: PEFT ([\w.+-]+) adapters of rank (\d+) on (.+) \(all-linear, as PEFT reads it\); "
     r"the model's own weights frozen",
     lambda m, r: note("lora_all_linear", peft=m[1], rank=int(m[2]), modules=_names(m[3]))),
    (r"LoRA: PEFT ([\w.+-]+) adapters of rank (\d+) on (.+) \(as asked\); the model's own "
     r"weights frozen",
     lambda m, r: note("lora_as_asked", peft=m[1], rank=int(m[2]), modules=_names(m[3]))),
    (r"QLoRA: bitsandbytes ([\w.+-]+) (nf4|fp4) weights in (\d+) linear layers \(blocks of "
     r"(\d+), double quantization\), computed in (\w+); linear layers not quantized: (.+)",
     lambda m, r: note("qlora", bitsandbytes=m[1], quant_type=m[2], layers=int(m[3]),
                       block=int(m[4]), dtype=m[5], kept=_names(m[6]))),
    # scripts/torchrun_sharding.py's study results
    (r"real run: (\d+) processes under torchrun, NCCL, (.+)",
     lambda m, r: note("sharding_torchrun_cuda", processes=int(m[1]), gpu=m[2])),
    (r"real run: (\d+) processes under torchrun, gloo, CPU",
     lambda m, r: note("sharding_torchrun_cpu", processes=int(m[1]))),
    (r"real run on the CPU with (\d+) threads?",
     lambda m, r: note("real_cpu_run", threads=int(m[1]))),
    (r"real run on (.+)", lambda m, r: note("real_cuda_run", gpu=m[1])),
    (r"LSTM: oneDNN's workspace saved for backward and the buffers its kernels hold while "
     r"they run are modelled \(\w+\.py\); brgemm's per-thread buffers \(bf16\) are not",
     lambda m, r: note("onednn_lstm")),
    (r"convolutions: the buffers oneDNN's kernels hold while they run \(reorders, "
     r"scratchpad\) taken from running each shape's kernel once for real on the CPU that "
     r"made the estimate \(\w+\.py\)",
     lambda m, r: note("onednn_convolutions")),
)]


def read_note(sentence: Any, result: dict[str, Any]) -> Any:
    """One note of schema 1 as schema 2 keeps it (a sentence no pattern knows: as it was)."""
    if not isinstance(sentence, str):
        return sentence
    if sentence in _EXACT:
        return note(_EXACT[sentence])
    for pattern, read in _PATTERNS:
        found = pattern.fullmatch(sentence)
        if found:
            return read(found, result)
    return sentence


def upgrade(data: dict[str, Any], version: int) -> dict[str, Any]:
    """A result (or a study result) of schema `version` as the current schema keeps it."""
    data = copy.deepcopy(data)
    if version < 2:
        if isinstance(data.get("notes"), list):
            data["notes"] = [read_note(n, data) for n in data["notes"]]
        study = data.get("data")  # a study's notes are among its data
        if isinstance(study, dict) and isinstance(study.get("notes"), list):
            study["notes"] = [read_note(n, data) for n in study["notes"]]
    data["schema_version"] = 2
    return data


def rewrite(folder: Path) -> list[Path]:
    """Every result and study result under `folder` of an older schema, written again as the
    current schema keeps it (atomically); the files rewritten. Every file is read first: one
    that is no result refuses the whole folder (a ResultsError), before any is written."""
    from generator.results.store import SCHEMA_VERSION, read_current, read_object, save

    found = []
    for path in sorted(Path(folder).rglob("*.json")):
        version = read_object(path).get("schema_version")
        if isinstance(version, int) and OLDEST <= version < SCHEMA_VERSION:
            found.append((path, read_current(path)))  # upgraded as load reads it
    for path, data in found:
        save(path, data)
    return [path for path, _ in found]

