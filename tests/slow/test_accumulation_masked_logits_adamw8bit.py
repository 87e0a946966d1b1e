"""Gradient accumulation (micro_batches), logits only at masked positions (logits =
"masked") and bitsandbytes' 8-bit AdamW: each changes the step as its name says; bad
combinations fail with one line."""

from __future__ import annotations

import functools
from typing import Any

import pytest
import torch

from generator.errors import ConfigError
from generator.experiment import Experiment
from generator.measure.backends import measure
from generator.measure.backends.common import build_workload
from generator.measure.models import resolve_model
from generator.measure.training import optimizer_8bit
from generator.measure.training.step import Trainer

TINY = {"model": "tiny", "batch_size": 8, "seq_len": 32}
NEEDS_BNB = pytest.mark.skipif(optimizer_8bit.unavailable("adamw-8bit") is not None,
                               reason="adamw-8bit needs bitsandbytes (the test extra has it)")


@functools.cache
def _estimate(**kw: Any) -> dict[str, Any]:
    return measure(Experiment(**{**TINY, **kw}))


def test_accumulation_holds_one_micro_batch_of_activations() -> None:
    whole = _estimate()
    accumulated = _estimate(micro_batches=4)
    micro = _estimate(batch_size=TINY["batch_size"] // 4)
    assert accumulated["category_max_bytes"]["activations"] == \
        micro["category_max_bytes"]["activations"]
    assert accumulated["category_max_bytes"]["activations"] < \
        whole["category_max_bytes"]["activations"] / 3
    # the later micro-batches run their forward with the gradients of the earlier ones alive
    assert accumulated["peak_bytes"] > micro["peak_bytes"]
    assert accumulated["live_at_peak_bytes"]["gradients"] == \
        accumulated["category_max_bytes"]["gradients"]


def test_accumulation_marks_a_forward_and_backward_per_micro_batch() -> None:
    names = [phase["name"] for phase in _estimate(micro_batches=4)["phases"]]
    assert names == ["forward", "backward"] * 4 + ["optimizer"]


def test_masked_logits_give_the_same_loss_on_real_tensors() -> None:
    """Same weights, same batch, same dropout draws: the loss over the masked positions'
    logits is the loss over all positions with the others ignored."""
    losses = []
    for logits in ("all", "masked"):
        exp = Experiment(**TINY, backend="cpu", logits=logits)
        torch.manual_seed(0)
        workload = build_workload(resolve_model(exp.model), exp)
        inputs, target = workload.make_batch(exp.batch_size, exp.seq_len, torch.device("cpu"))
        torch.manual_seed(1)
        output = workload.model(*inputs)
        losses.append(workload.loss_fn(output, target))
        vocab = workload.model.config.vocab_size
        expected = (round(0.15 * exp.batch_size * exp.seq_len), vocab) if logits == "masked" \
            else (exp.batch_size, exp.seq_len, vocab)
        assert tuple(output.shape) == expected
    assert losses[0].item() == pytest.approx(losses[1].item(), rel=1e-5)


def test_masked_logits_shrink_the_vocabulary_sized_tensors() -> None:
    full, masked = _estimate(), _estimate(logits="masked")
    assert masked["peak_bytes"] < full["peak_bytes"]
    assert masked["category_max_bytes"]["temporaries"] < \
        full["category_max_bytes"]["temporaries"]
    assert masked["category_max_bytes"]["parameters"] == full["category_max_bytes"]["parameters"]


@NEEDS_BNB
def test_8bit_adamw_state_is_bitsandbytes_own_rule() -> None:
    """Two uint8 moments per parameter tensor of ≥ 4096 elements plus an fp32 scale per block
    of 256 for each; smaller tensors keep two fp32 moments (bitsandbytes' min_8bit_size); and
    the two quantisation maps, which sit on the device once."""
    exp = Experiment(**TINY, optimizer="adamw-8bit")
    model = build_workload(resolve_model(exp.model), exp).model
    def block(nbytes: int) -> int:  # the CUDA caching allocator's 512-byte rounding
        return -(-nbytes // 512) * 512

    expected = 2 * block(256 * 4)  # its two quantisation maps, 256 fp32 values each
    for p in model.parameters():
        n = p.numel()
        expected += 2 * (block(n) + block(4 * -(-n // 256))) if n >= 4096 else 2 * block(4 * n)
    assert _estimate(optimizer="adamw-8bit")["category_max_bytes"]["optimizer_state"] == expected


@pytest.mark.parametrize("fields, message", [
    ({"micro_batches": 3}, "does not divide batch_size 8"),
    ({"micro_batches": 0}, "micro_batches must be a positive integer"),
    ({"optimizer": "adamw-8bit", "optimizer_impl": "fused"}, "kernels of its own"),
    ({"model": "gpt2-small", "logits": "masked"}, "works with masked-LM models"),
    ({"logits": "some"}, "unknown logits 'some'"),
])
def test_bad_values_fail_with_one_line(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        measure(Experiment(**{**TINY, **fields}))
    assert "\n" not in str(caught.value)


def test_the_options_name_themselves_in_keys_and_words() -> None:
    exp = Experiment(**TINY, micro_batches=4, logits="masked")
    assert exp.key.endswith("-accum-4-logits-masked")
    assert Experiment(**TINY, optimizer="adamw-8bit").key == \
        "tiny-b8-s32-fp32-adamw-8bit-estimate"


def test_trainer_splits_the_batch() -> None:
    exp = Experiment(**TINY, micro_batches=2, backend="cpu")
    workload = build_workload(resolve_model(exp.model), exp)
    seen = []
    make = workload.make_batch
    object.__setattr__(workload, "make_batch",
                       lambda b, s, d: seen.append(b) or make(b, s, d))
    Trainer.create(workload, exp, device=torch.device("cpu")).step()
    assert seen == [4, 4]


def test_home_ranking_leaves_out_defaults_and_merges_amp_twins() -> None:
    from generator.site.pages.article.context import what_to_do

    def row(id_: str, anchor: str, peak: float, saving: float, in_baseline: bool = False):
        return {"id": id_, "anchor": anchor, "peak": peak * 2**30, "saving": saving,
                "ref_peak": 5.64 * 2**30,
                "saving_bytes": int(saving * 2**30), "backend": "estimate",
                "in_baseline": in_baseline, "reserved": None}

    ranked = [row("accumulation", "accumulation", 2.74, 0.51),
              row("amp-bf16", "amp", 4.601, 0.183), row("amp-fp16", "amp", 4.602, 0.183),
              row("set-to-none", "set-to-none", 5.64, 0.067, in_baseline=True),
              row("fused", "fused", 5.64, 0.0)]
    rows = what_to_do(ranked)
    assert [r["ids"] for r in rows] == [["accumulation"], ["amp-bf16", "amp-fp16"]]
    ranked[2]["peak"] = 4.7 * 2**30  # no longer alike: two rows
    assert len(what_to_do(ranked)) == 3
