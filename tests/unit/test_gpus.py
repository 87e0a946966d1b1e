"""The GPUs (gpus.py): the overhead assumptions per generation (lookup by device name and
compute capability, consistent ranges, PyTorch's workspace defaults, a source for every
entry), and the catalogue of GPUs, found by loose names."""

from __future__ import annotations

import re

import pytest

from generator.errors import ConfigError
from generator import gpus

MIB = 2**20


@pytest.mark.parametrize(("device", "family"), [
    ("NVIDIA H100 80GB HBM3", "Hopper"), ("NVIDIA H100 PCIe", "Hopper"), ("NVIDIA H200", "Hopper"),
    ("NVIDIA GH200 480GB", "Hopper"), ("NVIDIA A100-SXM4-80GB", "Ampere datacenter"),
    ("NVIDIA A100 80GB PCIe", "Ampere datacenter"), ("NVIDIA A10G", "Ampere consumer"),
    ("NVIDIA GeForce RTX 3090", "Ampere consumer"), ("NVIDIA RTX A6000", "Ampere consumer"),
    ("NVIDIA GeForce RTX 4090", "Ada"), ("NVIDIA L4", "Ada"), ("NVIDIA L40S", "Ada"),
    ("NVIDIA RTX 6000 Ada Generation", "Ada"), ("NVIDIA B200", "Blackwell"),
    ("NVIDIA GeForce RTX 5090", "Blackwell"),
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "Blackwell"),
])
def test_a_device_name_finds_its_family(device: str, family: str) -> None:
    entry = gpus.for_device_name(device)
    assert entry is not None and entry.name.startswith(family), (device, entry)


def test_an_unknown_device_finds_nothing() -> None:
    assert gpus.for_device_name("Tesla V100-SXM2-16GB") is None
    assert gpus.for_device_name("cpu") is None


@pytest.mark.parametrize("entry", gpus.OVERHEADS, ids=lambda e: e.name.split(" (")[0])
def test_every_entry_is_consistent_and_sourced(entry: gpus.Overheads) -> None:
    assert 0 < entry.context_bytes_low <= entry.context_bytes_high < 2 * 2**30
    assert entry.cublas_workspaces == 2  # the forward's thread and autograd's device thread
    assert entry.persistent_workspace_bytes == 2 * entry.cublas_workspace_bytes
    assert entry.cublaslt_workspace_bytes == MIB
    assert entry.sources and all(isinstance(s, str) and s for s in entry.sources)
    assert len(set(entry.sources)) == len(entry.sources)
    assert entry.name_patterns
    assert gpus.for_device_name(entry.name) is entry  # its own name matches its patterns


def test_the_workspace_defaults_are_pytorchs() -> None:
    assert gpus.CUBLAS_WORKSPACE_DEFAULT == 8_519_680  # what memory_allocated shows off Hopper
    assert gpus.for_device_name("NVIDIA H100 80GB HBM3").cublas_workspace_bytes == 32 * MIB
    assert gpus.for_device_name("NVIDIA A100-SXM4-40GB").cublas_workspace_bytes == 8_519_680
    assert gpus.for_device_name("NVIDIA GeForce RTX 4090").cublas_workspace_bytes == 8_519_680


# -- the catalogue ------------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "found"), [
    ("3090", "NVIDIA GeForce RTX 3090"), ("RTX 4090", "NVIDIA GeForce RTX 4090"),
    ("rtx-4090", "NVIDIA GeForce RTX 4090"), ("A10", "NVIDIA A10"), ("l4", "NVIDIA L4"),
    ("L40S", "NVIDIA L40S"), ("a100-40gb", "NVIDIA A100-SXM4-40GB"),
    ("A100 80GB", "NVIDIA A100-SXM4-80GB"), ("a100-80gb", "NVIDIA A100-SXM4-80GB"),
    ("H100", "NVIDIA H100 80GB HBM3"), ("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"),
    ("h200", "NVIDIA H200"), ("B200", "NVIDIA B200"),
])
def test_a_gpu_is_found_by_a_loose_name(name: str, found: str) -> None:
    assert gpus.find(name).name == found


@pytest.mark.parametrize(("name", "message"), [
    ("a100", "'a100' names several GPUs; did you mean 'A100-SXM4-40GB', 'A100-SXM4-80GB'?"),
    ("h20", "'h20' is not a GPU of the catalogue; did you mean 'H200'?"),  # H20 is another GPU
    ("v100", "'v100' is not a GPU of the catalogue (the catalogue: RTX 3060, RTX 3070,"),
    ("RTX 2080", "'RTX 2080' is not a GPU of the catalogue (the catalogue:"),  # no B200 guess
    ("", "the catalogue: RTX 3060"),
])
def test_an_unknown_or_ambiguous_name_lists_the_close_ones(name: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        gpus.find(name)


@pytest.mark.parametrize("gpu", gpus.CATALOGUE, ids=lambda g: g.short_name)
def test_every_gpu_has_its_generation_and_sources(gpu: gpus.GPU) -> None:
    assert gpus.find(gpu.name) is gpu and gpus.find(gpu.short_name) is gpu
    assert gpu.overheads is gpus.for_device_name(gpu.name)
    # a process gets less than nvidia-smi's total: the driver keeps some of it
    assert 0.95 * gpu.smi_total_mib * MIB < gpu.memory_bytes < gpu.smi_total_mib * MIB
    assert len(gpu.sources) >= 2 and gpu.memory_source == gpu.sources[1]


def test_the_catalogue_has_the_gpus_people_train_on() -> None:
    names = {g.short_name for g in gpus.CATALOGUE}
    assert {"RTX 3090", "RTX 4090", "A10", "L4", "L40S", "A100-SXM4-40GB", "A100-SXM4-80GB",
            "H100 80GB HBM3", "H200", "B200"} <= names
    assert gpus.assumed().name == gpus.ASSUMED == "NVIDIA H100 80GB HBM3"
    assert gpus.workspace_sizes() == (8_519_680, 32 * MIB)


def test_the_rtx_3090_context_range_holds_the_notebook_reading() -> None:
    """mscherrmann's RTX 3090 notebook (HELD_OUT.md source 2): nvidia-smi used less
    memory_reserved() less what was used before PyTorch started, 1,113.7 MiB once the first
    forward and backward had loaded cuBLAS and the lazily loaded kernels."""
    entry = gpus.for_device_name("NVIDIA GeForce RTX 3090")
    reading = (4980.72 - 2972.00 - 895.04) * gpus.MIB
    assert entry.context_bytes_low <= reading <= entry.context_bytes_high
    assert any("testGPUMemoryBertTraining" in source for source in entry.sources)
    for lang in ("en", "zh"):  # the nvidia-smi figure names what loads after the first kernel
        said = gpus.CONTEXT_ENDS[lang].format(low="L", high="H")
        assert "L" in said and "H" in said and "cuBLAS" in said and "cuDNN" in said
