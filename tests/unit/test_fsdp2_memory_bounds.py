"""A rank's estimate against PyTorch's own bounds on FSDP2's memory: the FSDP2 memory test
(test/distributed/_composable/fsdp/test_fully_shard_memory.py, at pytorch/pytorch 5ae3db1)
runs a 3-block Transformer of width 768 on two real GPUs, with and without CPU offload and
with and without resharding after forward, and asserts the peak of active memory in each
phase below a bound it derives from FSDP2's design, in terms of the model's sizes (e.g. with
CPU offload, the forward holds three blocks' unsharded weights and the non-block ones, plus
16 MB for activations and the rest; the optimizer's step, on the CPU, holds nothing on the
GPU). The estimate of one rank of the same job must keep within the same bounds, phase by
phase. Upper bounds only: a test that the estimate leaves out nothing FSDP2 does not free.

The test measures its first step; the estimate a later one, which holds the optimizer's
state from the step before: that state is left out of the comparison (none with offload).
Its optimizer runs foreach=False (the estimate's, as on CUDA, foreach): the step's own bound
is compared only under offload, where it runs on the CPU."""

from __future__ import annotations

import pytest

import generator as g
from torchrun_models import fsdp2_memory_test_model

MODEL = "torchrun_models:fsdp2_memory_test_model"
MB = 1e6
FLOAT = 4
BUFFER_MB = 16  # the test's allowance for activations, fragmentation and the rest


def sizes() -> dict[str, int]:
    """The numels the test's bounds are written in."""
    model = fsdp2_memory_test_model().model
    unsharded = sum(p.numel() for p in model.parameters())
    block = sum(p.numel() for p in model.layers[0].parameters())
    return {"unsharded": unsharded, "sharded": (unsharded + 1) // 2, "block": block,
            "non_block": unsharded - len(model.layers) * block}


def bounds(reshard: bool, offload: bool) -> dict[str, float]:
    """The test's bounds in MB, phase by phase (its world size is 2)."""
    n = sizes()
    if reshard:
        forward = (3 * n["block"] + n["non_block"]) * FLOAT / MB + BUFFER_MB
        backward = (4 * n["block"] + n["non_block"]) * FLOAT / MB + BUFFER_MB
        if not offload:
            forward += n["sharded"] * FLOAT / MB
            backward += 2 * n["sharded"] * FLOAT / MB
    else:
        forward = (n["sharded"] + n["unsharded"] + n["block"]) * FLOAT / MB + BUFFER_MB
        backward = (n["sharded"] + n["unsharded"] + 1.5 * n["block"]) * FLOAT / MB + BUFFER_MB
    found = {"forward": forward, "backward": backward}
    if offload:
        found["optimizer"] = BUFFER_MB
    return found


#: Without resharding, the test bounds the forward by the unsharded weights, the shards and
#: one block being copied out; the estimate holds one block more at the last block's
#: copy-out: FSDP2's wait_for_unshard frees the previous block's all-gather output by
#: `self.comm_ctx.all_gather_state = None`, but the walrus in `if prev_all_gather_state :=
#: ...` keeps it until the function returns, after the copy-out (as in the test's own bound
#: with resharding, "current all-gather + copy-out and next all-gather"). The test was not
#: run on GPUs here, so which of the two is right on a GPU is open.
WALRUS = ("forward: 184.9 MB against a bound of 172.0 MB, one block's all-gather output "
          "(28.3 MB) more than the test allows without resharding")


@pytest.mark.parametrize(("reshard", "offload"), [
    (True, True), (True, False),
    pytest.param(False, False, marks=pytest.mark.xfail(strict=True, raises=AssertionError,
                                                       reason=WALRUS))])
def test_a_rank_keeps_within_pytorchs_own_fsdp2_bounds(reshard: bool, offload: bool) -> None:
    rank = g.estimate(MODEL, batch_size=1, seq_len=4, optimizer="adam", gpus=2,
                      parallel="fsdp2", reshard_after_forward=reshard, cpu_offload=offload)
    phases = rank.to_dict()["phase_max_bytes"]
    peak_so_far = 0.0
    for phase, bound in bounds(reshard, offload).items():
        held = phases[phase]["total"] - phases[phase]["optimizer_state"]
        # the test reads the peak since it began, reset only before the optimizer's step
        peak_so_far = held if phase == "optimizer" else max(peak_so_far, held)
        assert peak_so_far / MB <= bound, (phase, peak_so_far / MB, bound)
    if offload:
        assert phases["optimizer"]["total"] < MB  # the step runs on the CPU
