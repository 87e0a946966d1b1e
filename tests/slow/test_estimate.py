"""The estimate backend on fake tensors (nothing allocated): its numbers add up, each
category is what the step keeps, CUDA's allocator and kernels are modelled, and the step
options change what they should. Against real runs: slow/test_measure_cpu.py."""

from __future__ import annotations

import copy
import functools
import gc
import resource
from typing import Any

import pytest
from torch._subclasses.fake_tensor import FakeTensorMode

from generator.experiment import Experiment
from generator.measure.backends import measure
from generator.measure.models import resolve_model
from generator.results.shapes import CATEGORIES

TINY = dict(model="tiny", batch_size=4, seq_len=32)


@functools.lru_cache(maxsize=None)
def _cached(**kw: Any) -> dict[str, Any]:
    return measure(Experiment(**{**TINY, "backend": "estimate", **kw}))


def _estimate(**kw: Any) -> dict[str, Any]:
    """The tiny model's step estimated with `kw`; each setting once per session (a deep copy
    each time, so that no test sees another's edits)."""
    return copy.deepcopy(_cached(**kw))


def _tiny_parameter_count() -> int:
    with FakeTensorMode():
        return len(list(resolve_model("tiny").build().model.parameters()))


@pytest.mark.parametrize("precision", ["fp32", "amp-fp16", "amp-bf16"])
def test_live_at_peak_sums_to_the_peak(precision: str) -> None:
    result = _estimate(precision=precision)
    assert sum(result["live_at_peak_bytes"].values()) == result["peak_bytes"]
    for cat in CATEGORIES:
        assert 0 <= result["live_at_peak_bytes"][cat] <= result["category_max_bytes"][cat]
    totals = [sum(values) for values in zip(*result["timeline"]["bytes"].values())]
    assert 0 < len(totals) <= 500 and max(totals) == result["peak_bytes"]
    assert [p["name"] for p in result["phases"]] == ["forward", "backward", "optimizer"]


def test_autocast_copies_only_under_amp() -> None:
    assert _estimate(precision="fp32")["category_max_bytes"]["autocast_copies"] == 0
    for precision in ("amp-fp16", "amp-bf16"):
        assert _estimate(precision=precision)["category_max_bytes"]["autocast_copies"] > 0


@pytest.mark.parametrize("optimizer", ["adam", "adamw"])
def test_adam_state_is_two_copies_of_the_parameters(optimizer: str) -> None:
    result = _estimate(optimizer=optimizer, device="cpu")
    params = result["category_max_bytes"]["parameters"]
    state = result["category_max_bytes"]["optimizer_state"]
    step_counters = 4 * _tiny_parameter_count()  # one 0-dim fp32 `step` per parameter
    assert state == 2 * params + step_counters


def test_sgd_momentum_is_one_copy() -> None:
    result = _estimate(optimizer="sgd", device="cpu")
    assert result["category_max_bytes"]["optimizer_state"] == \
        result["category_max_bytes"]["parameters"]


def test_gradients_equal_parameters_in_every_precision() -> None:
    for precision in ("fp32", "amp-fp16", "amp-bf16"):
        result = _estimate(precision=precision, device="cpu")
        assert result["category_max_bytes"]["gradients"] == \
            result["category_max_bytes"]["parameters"]


def test_cuda_model_rounds_blocks_and_keeps_one_byte_dropout_masks() -> None:
    as_cpu, as_cuda = _estimate(device="cpu"), _estimate(device="cuda")
    # the same parameter tensors on both; only the rounding to 512-byte blocks differs
    assert as_cuda["category_max_bytes"]["parameters"] > as_cpu["category_max_bytes"]["parameters"]
    assert all(v % 512 == 0 for v in as_cuda["live_at_peak_bytes"].values())
    # CUDA's fused dropout keeps a bool mask; the CPU fallback a mask of the input's dtype
    assert as_cuda["category_max_bytes"]["activations"] < \
        as_cpu["category_max_bytes"]["activations"]


def test_activations_are_attributed_to_blocks() -> None:
    modules = _estimate(device="cpu")["module_activation_bytes"]
    assert {"embeddings", "layers.0", "layers.1", "mlm_head"} <= set(modules)
    assert modules["layers.0"] == modules["layers.1"]  # identical layers save identical tensors


def test_the_estimate_allocates_nothing() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    result = measure(Experiment(model="bert-base", batch_size=64, seq_len=512))
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    assert result["peak_bytes"] > 20 * 2**30
    assert grown < 2**30


def test_step_options_change_what_they_should() -> None:
    base = _estimate(batch_size=8)
    ckpt = _estimate(batch_size=8, checkpointing=True)
    assert ckpt["category_max_bytes"]["activations"] < base["category_max_bytes"]["activations"]
    sdpa = _estimate(batch_size=8, attention="sdpa")
    assert sdpa["category_max_bytes"]["activations"] < base["category_max_bytes"]["activations"]
    zeros = _estimate(batch_size=8, zero_grad="zeros")  # .grad kept from the warm-up step
    assert zeros["live_at_peak_bytes"]["gradients"] == zeros["category_max_bytes"]["parameters"]
    assert base["live_at_peak_bytes"]["gradients"] == 0


def test_checkpointing_keeps_one_block_input_per_block() -> None:
    """BERT-base (12 blocks): with checkpointing each block keeps only its input, so at most
    one block's activations exist at a time."""
    shape = dict(model="bert-base", batch_size=2, seq_len=64)
    base = measure(Experiment(**shape))
    ckpt = measure(Experiment(**shape, checkpointing=True))
    hidden = base["architecture"]["hidden"]
    blocks = {k: v for k, v in base["module_activation_bytes"].items() if k.startswith("layers.")}
    kept = {k: v for k, v in ckpt["module_activation_bytes"].items() if k.startswith("layers.")}
    assert len(blocks) == len(kept) == base["architecture"]["layers"] == 12
    block_input = shape["batch_size"] * shape["seq_len"] * hidden * 4  # fp32
    assert set(kept.values()) == {block_input}
    before = base["category_max_bytes"]["activations"]
    after = ckpt["category_max_bytes"]["activations"]
    assert after <= before - (len(blocks) - 1) * max(blocks.values()) + len(blocks) * block_input


def test_a_budget_smaller_than_the_peak_is_out_of_memory() -> None:
    fits = _estimate(gpu_memory=2**30)
    assert fits.get("error") is None
    tight = _estimate(gpu_memory=fits["peak_bytes"] - 1)
    assert tight["error"] == "out_of_memory" and "budget" in tight["error_detail"]
    assert tight["peak_bytes"] == fits["peak_bytes"]  # the figures are kept


def test_imports_run_with_the_collector_paused_and_freeze_in_our_own_process_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import generator.measure as measure

    was_enabled = gc.isenabled()
    try:
        gc.enable()
        before = gc.get_freeze_count()
        with measure.imports_frozen():  # a caller's process (the API): nothing frozen
            assert not gc.isenabled()
            [[n] for n in range(1000)]
        assert gc.isenabled() and gc.get_freeze_count() == before
        monkeypatch.setattr(measure, "_OWN_PROCESS", True)  # python -m generator, the worker
        with measure.imports_frozen():
            made = [[n] for n in range(1000)]  # tracked objects, as a module's would be
        assert gc.isenabled()
        assert gc.get_freeze_count() >= before + len(made)
        gc.disable()
        with measure.imports_frozen():
            pass
        assert not gc.isenabled()  # a collector paused by the caller stays paused
    finally:
        gc.unfreeze()
        (gc.enable if was_enabled else gc.disable)()
