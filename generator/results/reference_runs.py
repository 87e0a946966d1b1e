"""Published real-GPU runs: the H100 development set (reference_data/SOURCE.md), each as this
project's experiment, and the held-out points (HELD_OUT.md).

The development set of the accuracy page: each row of the dataset names a model, a batch, a
sequence length, a precision and whether checkpointing was on, and the peaks a real H100
reported. `ReferenceRun.experiment()` is the same training step in this project's options
(Adam with weight decay, autocast without a loss scaler, pure fp16, checkpointing by module
class, the model built on the GPU), so an estimate of it can be held against the real
figures. Nothing here imports PyTorch: the site reads it.
"""

from __future__ import annotations

import csv
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.experiment import is_hf_name
from generator.words import Words

DATA = Path(__file__).with_name("reference_data")
DATASET = "mem-run-estimator-H100"
SOURCE = ("sanketpurandare/mem-run-estimator", "e2955a1c4e2d369a140d9d337be5011e7b08e41f")
GPU = "NVIDIA H100"
#: The transformers release the runs used: not recorded in the dataset, but the one current
#: when they were made (Oct–Nov 2024; SOURCE.md). It changes the step: 4.46 copies the logits
#: for its loss's shift, 5.x does not.
TRANSFORMERS = "4.46"

#: Their model names → ours: the Hugging Face configs they built (their `model_cards`).
MODELS = {
    "hf_T5": "hf:t5-large",
    "hf_GPT2": "hf:gpt2-large",
    "llama_v3_1b": "hf:meta-llama/Llama-3.2-1B-Instruct",
    "gemma_2b": "hf:google/gemma-2b",
    "hf_clip": "hf:openai/clip-vit-large-patch14-336",
    "timm_vit": "timm:vit_huge_patch14_clip_224.laion2b_ft_in12k_in1k",
    "timm_convnext_v2": "timm:convnextv2_huge.fcmae_ft_in22k_in1k_512",
}
#: How pages name their models.
DISPLAY_NAMES = {
    "hf_T5": "T5-large", "hf_GPT2": "GPT-2 large", "llama_v3_1b": "Llama 3.2 1B Instruct",
    "gemma_2b": "Gemma 2B", "hf_clip": "CLIP ViT-L/14-336", "timm_vit": "timm ViT-H/14",
    "timm_convnext_v2": "timm ConvNeXt V2 huge",
}
#: The module classes their AC setting checkpoints, per model (a fact of their setup).
AC_CLASSES = {
    "hf_T5": ("T5LayerFF", "T5LayerNorm"),
    "hf_GPT2": ("GPT2Block",),
    "llama_v3_1b": ("LlamaMLP", "LlamaRMSNorm"),
    "gemma_2b": ("GemmaMLP", "GemmaRMSNorm"),
    "timm_convnext_v2": ("GlobalResponseNormMlp",),
    "timm_vit": ("Block",),
    "hf_clip": ("CLIPEncoderLayer",),
}
#: Their precisions in our options: MP is fp16 autocast without a GradScaler, HP the whole
#: model (and so Adam's state) in fp16.
PRECISIONS = {
    "FP": {"precision": "fp32"},
    "MP": {"precision": "amp-fp16", "loss_scaling": "off"},
    "HP": {"precision": "fp16"},
}
TIMM_SKIPPED = Words(
    "timm models need torchvision, which has no CPU build for this project's torch on the "
    "package registry", "timm 模型依赖 torchvision，而软件包仓库里没有适配本项目 torch 版本的 "
    "torchvision CPU 版")
#: T5 has no SDPA implementation in transformers, so its attention is eager there too.
EAGER_ONLY = ("hf_T5",)


@dataclass(frozen=True)
class ReferenceRun:
    """One configuration of the dataset with what the H100 reported for it."""

    model: str
    batch_size: int
    seq_len: int
    image_size: int
    precision: str
    checkpointing: bool
    active_peak_bytes: int
    reserved_peak_bytes: int
    step_ms: float
    memtracker_bytes: int | None
    """PyTorch's MemTracker on fake tensors on the GPU host (an estimate), if it ran."""

    @property
    def name(self) -> str:
        """Readable and unique: 'llama_v3_1b b4 s1024 MP AC'."""
        size = f"s{self.seq_len}" if self.seq_len > 0 else f"img{self.image_size}"
        if self.seq_len > 0 and self.image_size > 0:
            size += f" img{self.image_size}"
        return (f"{self.model} b{self.batch_size} {size} {self.precision}"
                + (" AC" if self.checkpointing else ""))

    def experiment(self) -> dict[str, Any]:
        """The same step as this project's experiment (fields of `Experiment`)."""
        fields: dict[str, Any] = {
            "model": MODELS[self.model], "batch_size": self.batch_size,
            # image models take the image side as their length (CLIP: the text's tokens)
            "seq_len": self.seq_len if self.seq_len > 0 else self.image_size,
            "optimizer": "adam", "backend": "estimate",
            # built on the GPU (`with torch.device(dev)`), in fp16 from the start for HP
            # (torch.set_default_dtype): what building frees stays in the allocator's cache
            "built_on_device": True, **PRECISIONS[self.precision],
        }
        if not MODELS[self.model].startswith("timm:"):  # timm's optimizer factory: no decay
            fields["weight_decay"] = 1e-4
        if is_hf_name(MODELS[self.model]):  # timm's ViT picks SDPA by itself
            fields["attention"] = "eager" if self.model in EAGER_ONLY else "sdpa"
        if self.checkpointing:
            fields["checkpoint_classes"] = AC_CLASSES[self.model]
        return fields

    @property
    def key(self) -> str:
        """The key of this step's estimate: its result's file name."""
        return self.key_on("estimate")

    def key_on(self, backend: str) -> str:
        """The key of this step's experiment on `backend` ("cuda": measured on a GPU)."""
        from generator.experiment import Experiment

        return Experiment.from_dict({**self.experiment(), "backend": backend}).key

    @property
    def skipped(self) -> Words | None:
        """Why this project does not reproduce the run, or None."""
        if MODELS[self.model].startswith("timm:"):
            return TIMM_SKIPPED
        return None


def runs() -> list[ReferenceRun]:
    """Every configuration once, in the file's order (repeated runs report the same bytes)."""
    estimates = {_config(row): int(row[6]) for row in _rows("memory_estimation_H100.csv")}
    found: dict[tuple, ReferenceRun] = {}
    for row in _rows("real_execution_H100.csv"):
        config = _config(row)
        if config in found:
            continue
        model, batch, seq, image, precision, ac = config
        found[config] = ReferenceRun(model, batch, seq, image, precision, ac,
                                     active_peak_bytes=int(row[7]),
                                     reserved_peak_bytes=int(row[8]), step_ms=float(row[6]),
                                     memtracker_bytes=estimates.get(config))
    return list(found.values())


def experiment_keys() -> frozenset[str]:
    """The keys of every run's step, estimated or measured on a GPU: results that exist for
    the accuracy page. (A run this project cannot build here may still run on a GPU
    machine that has what it needs.)"""
    return frozenset(run.key_on(backend) for run in runs() for backend in ("estimate", "cuda"))


def _rows(name: str) -> list[list[str]]:
    with open(DATA / name, newline="", encoding="utf-8") as handle:
        return [row for row in csv.reader(handle) if row]


def _config(row: list[str]) -> tuple:
    return (row[0], int(row[1]), int(row[2]), int(row[3]), row[4], row[5] == "True")


# The held-out points (reference_data/HELD_OUT.md): published real-GPU measurements outside
# the development set above, each estimated once, at a recorded commit, before it was compared.
HELD_OUT = "held_out.json"
#: What each source printed → the estimated figure it is held against: nvidia-smi shows the
#: reserved memory plus what lies outside the allocator (the CUDA context the source read).
FIGURES = ("nvidia-smi", "reserved", "allocated")


@dataclass(frozen=True)
class HeldOutSource:
    """One source of held-out points: who published it, on which GPU, what it printed."""

    id: str
    label: Words
    """How the page names it in a link."""
    title: str
    url: str
    gpu: str
    figure: str
    """One of FIGURES."""
    context_bytes: int
    """The CUDA context the source itself read (0 where it compares no nvidia-smi figure)."""
    date: str
    model_name: str
    versions_stated: bool
    versions: dict[str, tuple[str, ...]]
    """The source's torch and transformers: stated, or assumed from its date."""
    notes: Words
    correction: Words | None = None
    """Why its points were estimated a second time: a setting first transcribed differently
    from how the source ran (None: never)."""


@dataclass(frozen=True)
class HeldOutPoint:
    """One published measurement beside the estimate made of it once (None: not yet)."""

    id: str
    source: HeldOutSource
    quote: str
    training_arguments: str
    batch_size: int
    micro_batches: int
    precision: str
    optimizer: str
    checkpointing: bool
    published_bytes: int
    """What the source printed (MiB or decimal GB in the file)."""
    command: str
    commit: str | None
    estimated: dict[str, int] | None
    """The estimate's allocated and reserved peaks: {"allocated": …, "reserved": …}."""
    versions: dict[str, str]
    zero_grad: str = "none"
    """When the source's loop lets its gradients go (the estimate's --zero-grad)."""
    first: dict[str, Any] | None = None
    """The first estimate, where the setting was corrected and the point estimated again:
    {"command", "zero_grad", "commit", "estimated"} as above (None: estimated once)."""

    @property
    def seq_len(self) -> int:
        """The tokens per sample, as the estimate's command gives them (`-s N`)."""
        words = shlex.split(self.command)
        return int(words[words.index("-s") + 1])

    @property
    def modelled_gpu(self) -> str:
        """The catalogue GPU the estimate modelled (`--gpu NAME` in its command)."""
        words = shlex.split(self.command)
        return words[words.index("--gpu") + 1]


def held_out_sources() -> list[HeldOutSource]:
    """Every source of held-out points, in the file's order."""
    return [_source(raw) for raw in _held_out_data()["sources"]]


def held_out() -> list[HeldOutPoint]:
    """Every held-out point, source by source, in the file's order."""
    points = []
    for raw in _held_out_data()["sources"]:
        source = _source(raw)
        for point in raw["points"]:
            config, quoted, estimate = point["configuration"], point["source"], point["estimate"]
            points.append(HeldOutPoint(
                id=point["id"], source=source, quote=quoted["quote"],
                training_arguments=quoted["training_arguments"],
                batch_size=config["batch_size"], micro_batches=config["micro_batches"],
                precision=config["precision"], optimizer=config["optimizer"],
                checkpointing=config["checkpointing"], published_bytes=published_bytes(point),
                command=point["command"], commit=estimate["commit"] if estimate else None,
                estimated=_peaks(estimate),
                versions={k: estimate[k] for k in ("torch", "transformers", "bitsandbytes")
                          if estimate and k in estimate},
                zero_grad=config.get("zero_grad", "none"), first=_first(point)))
    return points


def _peaks(estimate: dict[str, Any] | None) -> dict[str, int] | None:
    if not estimate:
        return None
    return {"allocated": estimate["peak_allocated_bytes"],
            "reserved": estimate["peak_reserved_bytes"]}


def _first(point: dict[str, Any]) -> dict[str, Any] | None:
    """A corrected point's first estimate, kept as it was recorded."""
    first = point.get("first_estimate")
    if first is None:
        return None
    return {"command": first["command"], "zero_grad": first["zero_grad"],
            "commit": first["estimate"]["commit"], "estimated": _peaks(first["estimate"])}


def published_bytes(point: dict[str, Any]) -> int:
    """The published figure in bytes: `published_mib` (2**20) or `published_gb` (10**9)."""
    if "published_mib" in point:
        return round(point["published_mib"] * 2**20)
    return round(point["published_gb"] * 10**9)


def _held_out_data() -> dict[str, Any]:
    with open(DATA / HELD_OUT, encoding="utf-8") as handle:
        return json.load(handle)


def _source(raw: dict[str, Any]) -> HeldOutSource:
    if raw["figure"] not in FIGURES:
        raise ValueError(f"{raw['id']}: figure {raw['figure']!r} is none of {FIGURES}")
    versions = raw["versions"]
    return HeldOutSource(
        id=raw["id"], label=Words(**raw["label"]), title=raw["title"], url=raw["url"],
        gpu=raw["gpu"], figure=raw["figure"],
        context_bytes=raw["context"]["mib"] * 2**20 if raw["context"] else 0,
        date=raw["date"], model_name=raw["model_name"], versions_stated=versions["stated"],
        versions={k: tuple(versions[k]) for k in ("torch", "transformers")},
        notes=Words(**raw["notes"]),
        correction=Words(**raw["correction"]) if raw.get("correction") else None)


# The held-out points over several GPUs (HELD_OUT.md, "Multi-GPU points"): published per-GPU
# figures of multi-GPU jobs (MULTI_GPU), each estimated once as one GPU of its job.
MULTI_GPU = "multi_gpu_measurements.json"
MULTI_GPU_HELD_OUT = "multi_gpu_held_out.json"


@dataclass(frozen=True)
class MultiGpuPoint:
    """One published per-GPU figure of a multi-GPU job beside the estimate made of it once
    (one GPU of the job, estimated at `commit`)."""

    id: str
    gpus: int
    model: str
    """The model as the source names it ("Llama 3.1 8B")."""
    gpu: str
    """The GPU the job ran on, as the source describes it."""
    local_batch_size: int
    seq_len: int
    quote: str
    source_url: str
    figure: str
    """What the published figure is held against: "reserved" (FIGURES)."""
    figure_stated: bool
    """Whether the source names its counter (else it is inferred from its code)."""
    published_gib: float
    """As published, to its own precision."""
    command: str
    commit: str
    estimated: dict[str, int]
    """The estimate's allocated and reserved peaks: {"allocated": …, "reserved": …}."""
    wall_seconds: float
    versions: dict[str, str]

    @property
    def published_bytes(self) -> int:
        return round(self.published_gib * 2**30)

    @property
    def modelled_gpu(self) -> str:
        """The catalogue GPU the estimate modelled (`--gpu NAME` in its command)."""
        words = shlex.split(self.command)
        return words[words.index("--gpu") + 1]


@dataclass(frozen=True)
class NotEstimated:
    """Published multi-GPU rows the tool does not estimate, and why."""

    rows: tuple[str, ...]
    what: Words
    why: Words


def multi_gpu_held_out() -> list[MultiGpuPoint]:
    """Every multi-GPU held-out point, in the file's order, with its published row."""
    data = _json(MULTI_GPU_HELD_OUT)
    published = {row["id"]: row for row in _json(MULTI_GPU)}
    source, points = data["source"], []
    for point in data["points"]:
        row, estimate = published[point["row"]], point["estimate"]
        if point["gpus"] != row["num_gpus"] or point["published_gib"] != row["value_as_published"]:
            raise ValueError(f"{point['id']}: its GPUs or figure differ from {MULTI_GPU}'s row")
        points.append(MultiGpuPoint(
            id=point["id"], gpus=point["gpus"], model=row["model"], gpu=source["gpu"],
            local_batch_size=row["local_batch_size"],
            seq_len=int(row["sequence_length"].split()[0]), quote=row["quote"],
            source_url=row["source_url"], figure=source["figure"],
            figure_stated=source["figure_stated"], published_gib=point["published_gib"],
            command=point["command"], commit=estimate["commit"],
            estimated={"allocated": estimate["peak_allocated_bytes"],
                       "reserved": estimate["peak_reserved_bytes"]},
            wall_seconds=estimate["wall_seconds"],
            versions={k: estimate[k] for k in ("torch", "transformers")}))
    return points


def multi_gpu_not_estimated() -> list[NotEstimated]:
    """The other published multi-GPU rows, in groups, each with why it is not estimated;
    every row of MULTI_GPU is either a point or in one of them."""
    data = _json(MULTI_GPU_HELD_OUT)
    groups = [NotEstimated(tuple(g["rows"]), Words(**g["what"]), Words(**g["why"]))
              for g in data["not_estimated"]]
    listed = [row for g in groups for row in g.rows] + [p["row"] for p in data["points"]]
    every = [row["id"] for row in _json(MULTI_GPU)]
    if sorted(listed) != sorted(every):
        raise ValueError(f"{MULTI_GPU_HELD_OUT} does not account for each row of {MULTI_GPU} "
                         "once")
    return groups


def _json(name: str) -> Any:
    with open(DATA / name, encoding="utf-8") as handle:
        return json.load(handle)
