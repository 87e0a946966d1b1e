"""The GPU overhead assumptions (plan/gpus.py): lookup by device name and compute
capability, consistent ranges, PyTorch's workspace defaults, and a source for every entry."""

from __future__ import annotations

import pytest

from generator.plan import gpus

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


@pytest.mark.parametrize(("cc", "family"), [
    ((9, 0), "Hopper"), ((8, 0), "Ampere datacenter"), ((8, 6), "Ampere consumer"),
    ((8, 9), "Ada"), ((10, 0), "Blackwell"), ((12, 0), "Blackwell"),
])
def test_a_compute_capability_finds_its_family(cc: tuple[int, int], family: str) -> None:
    entry = gpus.for_compute_capability(*cc)
    assert entry is not None and entry.name.startswith(family)
    assert gpus.for_compute_capability(7, 0) is None


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


@pytest.mark.parametrize(("config", "nbytes"), [
    (":4096:8", 32 * MIB), (":16:8", 128 * 1024), (":4096:2:16:8", 8_519_680),
    ("nonsense", None), ("", None),
])
def test_cublas_workspace_config_parses_as_pytorch_does(config: str, nbytes: int | None) -> None:
    assert gpus.parse_cublas_workspace_config(config) == nbytes
