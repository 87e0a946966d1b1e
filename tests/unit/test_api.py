"""The public API (generator/api.py, exported by the package): one function per question,
typed answers, the project's own errors in the command line's words, and a caller's process
left as it was found. Estimates of the tiny model: fake tensors, a second each."""

from __future__ import annotations

import dataclasses
import gc
import os
import sys
import warnings

import pytest
from conftest import assert_refused
from process_state import changes, snapshot

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


def test_from_dict_copies_unless_told_not_to(tiny: g.Estimate) -> None:
    """A caller's later change reaches a step made with copy=False, never one made without."""
    data = tiny.to_dict()
    copied, kept = g.StepMemory.from_dict(data), g.StepMemory.from_dict(data, copy=False)
    data["notes"].append("changed afterwards")
    assert copied.to_dict()["notes"] == tiny.to_dict()["notes"]
    assert kept.to_dict()["notes"] == data["notes"]
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
    with pytest.raises(g.ConfigError, match=r"^unknown argument\(s\) precison to estimate\(\)"):
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
    assert tiny.fits("RTX 3090").needed_bytes == rtx.reserved_bytes + 1114 * 2**20
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
    assert changes(before) == {}


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
    kept = [[] for _ in range(10)]
    gc.freeze()  # as a call that froze its caller's objects would
    assert "gc frozen" in changes(before) and kept


# --------------------------------------------------------------------------- bad calls


@pytest.mark.parametrize("call, words", [
    (lambda e: g.estimate("tiny", **TINY, backend="cpu"),
     r"^unknown argument\(s\) backend to estimate\(\) \(each function says its backend: "
     r".*measure_step\(backend='cpu' \| 'cuda'\)"),
    (lambda e: e.fits(4090), r"^a GPU is named by a string such as 'RTX 4090', got int 4090"),
    (lambda e: e.fits(memory=0), r"^memory size must be a positive number of bytes"),
    (lambda e: e.fits(memory=True), r"^memory size must be a positive number of bytes"),
    (lambda e: e.fits("H100", memry="24GiB"),
     r"^unknown argument\(s\) memry to fits\(\); it takes gpu, memory$"),
    (lambda e: g.estimate("tiny", **TINY, precison="fp8"),
     r"^unknown argument\(s\) precison to estimate\(\); it takes model, batch_size, seq_len, "
     r"gpu, and the step's options: allocation_trace, .*precision"),
    (lambda e: g.estimate("tiny", **TINY, model="gpt2"),
     r"^estimate\(\): multiple values for argument 'model'; it takes \(model, \*, "
     r"batch_size, seq_len, gpu=None, \*\*options\)$"),
    (lambda e: g.estimate("tiny", seq_len=16), r"missing a required argument: 'batch_size'"),
    (lambda e: g.estimate("tiny", 2, 16), r"^estimate\(\): too many positional arguments"),
    (lambda e: g.measure_step("tiny", **TINY, bogus=1),
     r"^unknown argument\(s\) bogus to measure_step\(\); it takes model, batch_size, seq_len, "
     r"backend, and the step's options"),
    (lambda e: g.largest_batch("tiny", seq_len=16, memory="1GiB", batch_size=4),
     r"^unknown argument\(s\) batch_size to largest_batch\(\) \(largest_batch\(\) searches "
     r"for it\); it takes model, seq_len, gpu, memory, first, progress, and"),
    (lambda e: g.fewest_gpus("tiny", **TINY, parallel="ddp", memory="1GiB", bogus=1),
     r"^unknown argument\(s\) bogus to fewest_gpus\(\)"),
    (lambda e: g.levers("tiny", **TINY, backend="cuda"),
     r"^unknown argument\(s\) backend to levers\(\)"),
    (lambda e: g.track(None, None, bogus=1),
     r"^unknown argument\(s\) bogus to track\(\); it takes model, optimizer, name, "
     r"batch_size, seq_len, precision$"),
], ids=["backend", "gpu-int", "memory-0", "memory-bool", "fits-kw", "option", "model-twice",
        "missing", "positional", "measure-kw", "largest-batch-size", "fewest-kw",
        "levers-backend", "track-kw"])
def test_a_bad_call_is_a_config_error_that_names_the_argument(tiny: g.Estimate, call,
                                                              words: str) -> None:
    with pytest.raises(g.ConfigError, match=words):
        call(tiny)


@pytest.mark.parametrize("search", [
    lambda seen: g.largest_batch("tiny", seq_len=16, memory=-1, progress=seen.append),
    lambda seen: g.fewest_gpus("tiny", **TINY, parallel="ddp", memory=-1,
                               progress=lambda *row: seen.append(row)),
], ids=["largest_batch", "fewest_gpus"])
def test_a_search_refuses_a_budget_below_one_byte_before_it_estimates(search) -> None:
    seen: list = []
    with pytest.raises(g.ConfigError, match="^memory size must be a positive number of bytes"):
        search(seen)
    assert seen == []


def exits() -> None:
    sys.exit(3)


def exits_in_make_batch():
    model, _, loss_fn = build_tiny()

    def make_batch(batch_size, seq_len, device):
        sys.exit("no batches today")

    return model, make_batch, loss_fn


def test_user_code_that_calls_sys_exit_is_a_model_error_not_the_end_of_the_caller() -> None:
    with pytest.raises(g.ModelError, match=r"^model factory '.*:exits' raised SystemExit: "
                                           r"sys\.exit\(3\) would end this process$"):
        g.estimate(exits, **TINY)
    with pytest.raises(g.ModelError, match=r"^model factory 'sys:exit' raised SystemExit: "
                                           r"sys\.exit\(\) would end this process$"):
        g.estimate("sys:exit", **TINY)
    with pytest.raises(g.ModelError, match=r":exits_in_make_batch: the model's code raised "
                                           r"SystemExit: sys\.exit\('no batches today'\)"):
        g.estimate(exits_in_make_batch, **TINY)


def test_the_command_line_says_so_in_one_line(cli, seeded, user_package) -> None:
    """`python -m generator estimate sys:exit` used to exit 0 and print nothing."""
    assert_refused(cli, seeded, ["estimate", "sys:exit", "-b", "2", "-s", "4"],
                   "model factory 'sys:exit' raised SystemExit: sys.exit() would end")
    user_package(seeded, "import sys\nsys.exit(1)\n", name="exitpkg")
    assert_refused(cli, seeded, ["estimate", "exitpkg.mod:build", "-b", "2", "-s", "4"],
                   "cannot import module 'exitpkg.mod'", "SystemExit: sys.exit(1) would end")


# --------------------------------------------------------------------------- the caller's process


def changes_the_process():
    """A factory that sets, changes and removes variables and adds a warnings filter."""
    os.environ["GENERATOR_TEST_SET"] = "by the factory"
    os.environ["GENERATOR_TEST_CHANGED"] = "by the factory"
    del os.environ["GENERATOR_TEST_REMOVED"]
    warnings.filterwarnings("ignore", message="added by the factory")
    return build_tiny()


def changes_the_process_and_fails():
    changes_the_process()
    raise ValueError("after the changes")


def test_a_call_puts_back_the_environment_and_the_warnings_filters(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What a call does to os.environ and warnings.filters (PyTorch's first import of its
    compiler sets TORCHINDUCTOR_CACHE_DIR; numpy and sympy add filters) is undone: here by a
    factory, since in this process torch was imported before (slow/test_no_network.py checks
    the first estimate of a fresh process)."""
    monkeypatch.setenv("GENERATOR_TEST_CHANGED", "by the caller")
    monkeypatch.setenv("GENERATOR_TEST_REMOVED", "by the caller")
    before = snapshot()
    g.estimate(changes_the_process, **TINY)
    assert changes(before) == {}
    with pytest.raises(g.ModelError, match="after the changes"):  # after a mistake too
        g.estimate(changes_the_process_and_fails, **TINY)
    assert changes(before) == {}
