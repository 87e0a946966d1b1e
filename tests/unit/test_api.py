"""The public API (generator/api.py, exported by the package): one function per question,
typed answers, the project's own errors in the command line's words, and a caller's process
left as it was found. Estimates of the tiny model: fake tensors, a second each."""

from __future__ import annotations

import dataclasses

import pytest
from process_state import snapshot

import generator as g
from generator.experiment import Experiment
from generator.measure.models import MODELS
from generator.measure.run import measure_to_result
from generator.results.shapes import CATEGORIES

TINY = {"batch_size": 2, "seq_len": 16}


@pytest.fixture(scope="module")
def tiny() -> g.Estimate:
    return g.estimate("tiny", **TINY)


def test_an_estimate_is_the_stored_result_typed(tiny: g.Estimate) -> None:
    stored = measure_to_result(Experiment(model="tiny", **TINY))
    data = tiny.to_dict()
    assert {k: v for k, v in data.items() if k != "measured_at"} == \
        {k: v for k, v in stored.items() if k != "measured_at"}
    assert g.Estimate.from_dict(data) == tiny and g.StepMemory.from_dict(data) == tiny
    allocator = data["allocator"]
    assert (tiny.peak_bytes, tiny.allocated_bytes, tiny.reserved_bytes) == (
        data["peak_bytes"], allocator["peak_allocated_bytes"], allocator["peak_reserved_bytes"])
    low, high = allocator["context_bytes"]
    assert tiny.nvidia_smi_bytes == (tiny.reserved_bytes + low, tiny.reserved_bytes + high)
    assert sum(tiny.live_at_peak.values()) == tiny.peak_bytes
    assert set(tiny.category_max) == set(CATEGORIES)
    assert [p.name for p in tiny.phases][:3] == ["forward", "backward", "optimizer"]
    assert tiny.gpu == "NVIDIA H100 80GB HBM3" and tiny.kind == "estimated for " + tiny.gpu
    assert any(note.id == "allocator_replay_assumed" for note in tiny.notes)
    assert any("(assumed: none was named)" in str(note) for note in tiny.notes)
    assert any("没有指定 GPU" in note.text("zh") for note in tiny.notes)


def test_an_estimate_cannot_be_changed(tiny: g.Estimate) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        tiny.peak_bytes = 0  # type: ignore[misc]
    with pytest.raises(TypeError):
        tiny.live_at_peak["activations"] = 0  # type: ignore[index]
    tiny.to_dict()["peak_bytes"] = 0  # a copy
    assert tiny.to_dict()["peak_bytes"] == tiny.peak_bytes


def test_wrong_names_and_values_are_the_projects_errors_in_the_cli_words(cli, project) -> None:
    with pytest.raises(g.ConfigError, match=r"^unknown precision 'fp8'; choose one of: fp32,"):
        g.estimate("tiny", **TINY, precision="fp8")
    proc = cli(["estimate", "tiny", "-b", "2", "-s", "16", "--precision", "fp8"], project)
    assert proc.returncode == 2
    assert "unknown precision 'fp8'; choose one of: fp32, amp-fp16" in proc.stderr
    with pytest.raises(g.ConfigError, match=r"^unknown option\(s\) precison; the options are"):
        g.estimate("tiny", **TINY, precison="fp8")
    with pytest.raises(g.ModelError, match="unknown model 'tinyy'"):
        g.estimate("tinyy", **TINY)
    with pytest.raises(g.ConfigError, match="'v100' is not a GPU of the catalogue"):
        g.estimate("tiny", **TINY, gpu="v100")
    with pytest.raises(g.ConfigError, match="batch_size must be a positive integer"):
        g.estimate("tiny", batch_size=0, seq_len=16)


def build_tiny():
    """A factory as a user passes it: a Python callable, no module path needed."""
    workload = MODELS["tiny"].build()
    return workload.model, workload.make_batch, workload.loss_fn


def test_a_python_callable_is_a_model(tiny: g.Estimate) -> None:
    mine = g.estimate(build_tiny, **TINY)
    assert mine.experiment.model == f"{__name__}:build_tiny"
    assert mine.peak_bytes == tiny.peak_bytes  # the same model, as the user built it
    from generator.measure.models.user import _CALLABLES

    assert not _CALLABLES  # resolvable only while the call lasts


def test_judged_on_another_gpu_as_an_estimate_for_it_would_be(tiny: g.Estimate) -> None:
    rtx = g.estimate("tiny", **TINY, gpu="RTX 3090")
    assert rtx.gpu == "NVIDIA GeForce RTX 3090" and rtx.fits() == tiny.fits("3090")
    assert tiny.fits("RTX 3090").needed_bytes == rtx.reserved_bytes + 800 * 2**20
    # the step is the same; its allocated peak differs by the persistent cuBLAS workspaces
    # (2 × 32 MiB on Hopper, 2 × 8,519,680 B on Ampere), where no block moves because of them
    assert rtx.peak_bytes == tiny.peak_bytes
    assert tiny.allocated_bytes - rtx.allocated_bytes == 2 * (32 * 2**20 - 8_519_680)
    assert tiny.fits(memory="1KiB").word == "no" and tiny.fits(memory=2**40).gpu is None


def test_a_cpu_estimate_is_judged_on_a_memory_size_alone() -> None:
    cpu = g.estimate("tiny", **TINY, device="cpu")
    assert (cpu.reserved_bytes, cpu.nvidia_smi_bytes, cpu.gpu) == (None, None, None)
    assert cpu.allocated_bytes == cpu.peak_bytes and cpu.kind == "estimated for the CPU"
    assert cpu.fits(memory=cpu.peak_bytes).word == "yes"
    with pytest.raises(g.ConfigError, match="device 'cuda' to judge it on a GPU"):
        cpu.fits("H100")


def test_an_estimate_leaves_the_process_as_it_found_it() -> None:
    before = snapshot()
    # AMP modelling CUDA registers CUDA's autocast policy for the CPU while it runs
    g.estimate("tiny", **TINY, precision="amp-bf16")
    g.estimate("tiny", **TINY, precision="amp-fp16", device="cpu")
    assert snapshot() == before


def test_the_snapshot_sees_what_an_estimate_changes_while_it_runs() -> None:
    """The check above can fail: inside an estimate the dispatch tables and fake tensors'
    rules are not torch's own."""
    from generator.measure.emulation import fake_kernel_gaps
    from generator.measure.emulation.cuda_kernels import CudaKernelPolicy

    before = snapshot()
    with CudaKernelPolicy(), fake_kernel_gaps.installed():
        during = snapshot()
    assert during["dispatch"] != before["dispatch"]
    assert during["fake rules"] != before["fake rules"]
