"""The tracker and the backends on small configs: the numbers must add up and agree."""

import resource

import pytest
import torch

from generator.measure.backends import measure
from generator.experiment import Experiment
from generator.results.shapes import CATEGORIES

TINY = dict(model="tiny", batch_size=4, seq_len=32)


def _estimate(**kw):
    return measure(Experiment(**{**TINY, "backend": "estimate", **kw}))


@pytest.fixture(scope="module")
def cpu_fp32():
    return measure(Experiment(**TINY, backend="cpu"))


@pytest.mark.parametrize("precision", ["fp32", "amp-fp16", "amp-bf16"])
def test_live_at_peak_sums_to_the_peak(precision):
    result = _estimate(precision=precision)
    assert sum(result["live_at_peak_bytes"].values()) == result["peak_bytes"]
    for cat in CATEGORIES:
        assert 0 <= result["live_at_peak_bytes"][cat] <= result["category_max_bytes"][cat]


def test_autocast_copies_only_under_amp():
    assert _estimate(precision="fp32")["category_max_bytes"]["autocast_copies"] == 0
    for precision in ("amp-fp16", "amp-bf16"):
        assert _estimate(precision=precision)["category_max_bytes"]["autocast_copies"] > 0


@pytest.mark.parametrize("optimizer", ["adam", "adamw"])
def test_adam_state_is_two_copies_of_the_parameters(optimizer):
    result = _estimate(optimizer=optimizer, device="cpu")
    params = result["category_max_bytes"]["parameters"]
    state = result["category_max_bytes"]["optimizer_state"]
    step_counters = 4 * len(list(_tiny_parameters()))  # one 0-dim fp32 `step` per parameter
    assert state == 2 * params + step_counters


def test_sgd_momentum_is_one_copy():
    result = _estimate(optimizer="sgd", device="cpu")
    assert result["category_max_bytes"]["optimizer_state"] == result["category_max_bytes"]["parameters"]


def test_gradients_equal_parameters_in_every_precision():
    for precision in ("fp32", "amp-fp16", "amp-bf16"):
        result = _estimate(precision=precision, device="cpu")
        assert result["category_max_bytes"]["gradients"] == result["category_max_bytes"]["parameters"]


def test_cuda_model_rounds_blocks_to_512_bytes():
    as_cpu, as_cuda = _estimate(device="cpu"), _estimate(device="cuda")
    # the same parameter tensors on both; only the rounding differs
    assert as_cuda["category_max_bytes"]["parameters"] > as_cpu["category_max_bytes"]["parameters"]
    assert all(v % 512 == 0 for v in as_cuda["live_at_peak_bytes"].values())


def test_cuda_model_keeps_one_byte_dropout_masks():
    # CUDA's fused dropout keeps a bool mask; the CPU fallback a mask of the input's dtype
    as_cpu, as_cuda = _estimate(device="cpu"), _estimate(device="cuda")
    assert as_cuda["category_max_bytes"]["activations"] < as_cpu["category_max_bytes"]["activations"]


def test_tracker_agrees_with_cpu_allocator(cpu_fp32):
    truth = cpu_fp32["ground_truth"]["peak_bytes"]
    assert abs(cpu_fp32["peak_bytes"] / truth - 1) < 0.02


def test_estimate_agrees_with_real_cpu_run(cpu_fp32):
    estimate = _estimate(device="cpu")
    assert abs(estimate["peak_bytes"] / cpu_fp32["ground_truth"]["peak_bytes"] - 1) < 0.01
    assert estimate["live_at_peak_bytes"] == cpu_fp32["live_at_peak_bytes"]


def test_timeline_has_phases_and_the_peak(cpu_fp32):
    timeline = cpu_fp32["timeline"]
    totals = [sum(values) for values in zip(*timeline["bytes"].values())]
    assert 0 < len(totals) <= 500
    assert max(totals) == cpu_fp32["peak_bytes"]
    assert [p["name"] for p in cpu_fp32["phases"]] == ["forward", "backward", "optimizer"]
    assert cpu_fp32["step_seconds"] > 0


def test_activations_are_attributed_to_blocks(cpu_fp32):
    modules = cpu_fp32["module_activation_bytes"]
    assert {"embeddings", "layers.0", "layers.1", "mlm_head"} <= set(modules)
    assert modules["layers.0"] == modules["layers.1"]  # identical layers save identical tensors


def test_the_estimate_allocates_nothing():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    result = measure(Experiment(model="bert-base", batch_size=64, seq_len=512))
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    assert result["peak_bytes"] > 20 * 2**30
    assert grown < 2**30


def _tiny_parameters():
    from generator.measure.models import resolve_model
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        return list(resolve_model("tiny").build().model.parameters())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (none on this machine)")
def test_cuda_tracker_agrees_with_caching_allocator():
    result = measure(Experiment(**TINY, backend="cuda"))
    truth = result["ground_truth"]["peak_bytes"]
    assert abs(result["peak_bytes"] / truth - 1) < 0.05


def test_levers_change_what_they_should():
    base = _estimate(batch_size=8)
    ckpt = _estimate(batch_size=8, checkpointing=True)
    assert ckpt["category_max_bytes"]["activations"] < base["category_max_bytes"]["activations"]
    sdpa = _estimate(batch_size=8, attention="sdpa")
    assert sdpa["category_max_bytes"]["activations"] < base["category_max_bytes"]["activations"]
    zeros = _estimate(batch_size=8, zero_grad="zeros")  # .grad kept from the warm-up step
    assert zeros["live_at_peak_bytes"]["gradients"] == zeros["category_max_bytes"]["parameters"]
    assert base["live_at_peak_bytes"]["gradients"] == 0


def test_a_budget_smaller_than_the_peak_is_out_of_memory():
    fits = _estimate(gpu_memory=2**30)
    assert fits.get("error") is None
    tight = _estimate(gpu_memory=fits["peak_bytes"] - 1)
    assert tight["error"] == "out_of_memory" and "budget" in tight["error_detail"]
    assert tight["peak_bytes"] == fits["peak_bytes"]  # the figures are kept
