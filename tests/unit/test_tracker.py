"""MemoryTracker on a tiny two-layer model on the CPU: what it labels, when a storage's life
ends, rounding to allocator blocks, and the seams a subclass builds on (the sharded tracker's
local shards and resized storages)."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.nn import functional as F
from torch.testing._internal.two_tensor import TwoTensor

from generator.measure.tracking.sharded_tracker import (
    ShardedMemoryTracker,
    local_storages,
    rank_figures,
)
from generator.measure.tracking.tracker import (
    CUDA_BLOCK_BYTES,
    OUTSIDE_MODULES,
    PRECEDENCE,
    MemoryTracker,
    round_up,
)
from generator.measure.training.step import Trainer, tracked_step
from generator.measure.training.workload import Workload
from generator.results.shapes import CATEGORIES

BATCH, IN, HIDDEN, OUT = 3, 4, 8, 2
FLOAT = 4  # bytes

# torch.optim imports torch's compiler stack when the process creates its first optimizer
# (about a second, once): pay that with the module's import rather than in one test.
torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)


def make_batch(batch_size: int, _seq_len: int, device: torch.device):
    return (torch.ones(batch_size, IN, device=device),), torch.zeros(batch_size, OUT,
                                                                     device=device)


def trainer(precision: str = "fp32", **options) -> Trainer:
    """A two-layer model with Adam, warmed up: the optimizer has its state."""
    model = nn.Sequential(nn.Linear(IN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, OUT))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    run = Trainer(Workload(model, make_batch, F.mse_loss), BATCH, 1, precision,
                  torch.device("cpu"), optimizer, None, **options)
    run.warm_up()
    return run


def storage_bytes(tensors) -> int:
    return sum(t.untyped_storage().nbytes() for t in tensors)


def tracker_of(run: Trainer, cls=MemoryTracker, **options) -> MemoryTracker:
    return cls(run.workload.model, run.optimizer, **options)


def test_a_step_is_labelled() -> None:
    run = trainer()
    params = list(run.workload.model.parameters())
    report = tracked_step(run, tracker_of(run, device_type="cpu"))
    state = [v for s in run.optimizer.state.values() for v in s.values()]
    maxima = report.category_max_bytes
    assert maxima["parameters"] == storage_bytes(params) == (IN * HIDDEN + HIDDEN
                                                             + HIDDEN * OUT + OUT) * FLOAT
    assert maxima["gradients"] == storage_bytes(params)
    assert maxima["optimizer_state"] == storage_bytes(state)  # exp_avg, exp_avg_sq, step
    assert maxima["autocast_copies"] == 0
    assert maxima["activations"] > 0 and maxima["temporaries"] > 0
    assert sum(report.live_at_peak_bytes.values()) == report.peak_bytes
    assert [phase["name"] for phase in report.phases] == ["forward", "backward", "optimizer"]
    # the first Linear saves the batch for backward, ReLU its output; the loss is outside
    activations = report.module_activation_bytes
    assert activations["0"] == BATCH * IN * FLOAT
    assert activations["1"] == BATCH * HIDDEN * FLOAT
    assert OUTSIDE_MODULES in activations


@pytest.mark.parametrize("before_backward", [False, True])
def test_zero_grad_before_backward_keeps_the_last_gradients_through_forward(
        before_backward: bool) -> None:
    """zero_grad() between forward and backward (a loop as Raschka's DistilBERT experiment
    writes it): the last step's gradients live through the forward pass and are let go before
    backward makes new ones; after the optimizer step (the default) none are there."""
    run = trainer(zero_grad_before_backward=before_backward)
    params = list(run.workload.model.parameters())
    assert run.keeps_gradients is before_backward
    with tracker_of(run) as tracker:
        run.step(tracker.mark_phase)
    backward = dict(tracker.phases())["backward"]
    kept = [life for life in tracker.lives() if life.category == "gradients" and life.born == 0]
    if before_backward:
        assert sum(life.nbytes for life in kept) == storage_bytes(params)
        assert all(life.died is not None and life.died <= backward for life in kept)
        assert all(p.grad is not None for p in params)  # this step's, for the next forward
    else:
        assert kept == []
        assert all(p.grad is None for p in params)


def test_autocast_copies_of_the_parameters() -> None:
    run = trainer("amp-bf16")
    report = tracked_step(run, tracker_of(run))
    bf16 = 2  # bytes
    copies = sum(p.numel() for p in run.workload.model.parameters()) * bf16
    assert report.category_max_bytes["autocast_copies"] == copies


def test_optimizer_state_kept_on_the_host_is_not_counted() -> None:
    """An estimate of a GPU step (fake CPU tensors) leaves out Adam's step counts, which
    torch.optim keeps in host memory beside CUDA parameters."""
    def steps_on_host(optimizer, group, key, value) -> bool:
        assert optimizer.param_groups[0] is group
        return key == "step"

    run = trainer()
    params = list(run.workload.model.parameters())
    report = tracked_step(run, tracker_of(run, state_on_host=steps_on_host))
    moments = storage_bytes(params) * 2  # exp_avg, exp_avg_sq
    assert report.category_max_bytes["optimizer_state"] == moments

    # The first step creates them: counted as temporaries until the step ends, then not at
    # all, and nothing else changes.
    def first_step(**options) -> list[tuple[int, str]]:
        model = nn.Linear(IN, OUT)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        run = Trainer(Workload(model, make_batch, F.mse_loss), BATCH, 1, "fp32",
                      torch.device("cpu"), optimizer, None)
        with MemoryTracker(model, optimizer, **options) as tracker:
            run.warm_up(tracker.mark_phase)
        return [(life.requested, life.category) for life in tracker.lives()]

    counted, left_out = first_step(), first_step(state_on_host=steps_on_host)
    for life in left_out:
        counted.remove(life)
    assert counted == [(FLOAT, "optimizer_state")] * 2  # one per parameter


def test_a_storage_freed_in_the_step_ends_its_life() -> None:
    run = trainer()
    with tracker_of(run) as tracker:
        kept = torch.ones(16)
        freed = torch.ones(64)
        del freed
    temporaries = {life.nbytes: life for life in tracker.lives() if life.born > 0}
    assert temporaries[64 * FLOAT].died is not None
    assert temporaries[64 * FLOAT].died > temporaries[64 * FLOAT].born
    assert temporaries[16 * FLOAT].died is None
    assert temporaries[16 * FLOAT].category == "temporaries"
    del kept


def test_sizes_are_rounded_to_allocator_blocks() -> None:
    assert [round_up(n, CUDA_BLOCK_BYTES) for n in (0, 1, 512, 513, 1500)] == \
        [0, 512, 512, 1024, 1536]
    assert round_up(13, 1) == 13
    run = trainer()
    with tracker_of(run, round_bytes=CUDA_BLOCK_BYTES) as tracker:
        scalar = torch.ones(1)
    assert {life.nbytes for life in tracker.lives()} == {CUDA_BLOCK_BYTES}
    del scalar


def test_a_later_label_wins_only_if_it_ranks_higher() -> None:
    run = trainer()
    weight = run.workload.model[0].weight
    with tracker_of(run) as tracker:
        temporary = torch.ones(5)
        tracker.label(temporary, "activations", module="somewhere")
        tracker.label(weight, "activations")
        tracker.label(temporary, "temporaries")
    [labelled] = [life for life in tracker.lives() if life.born > 0]
    assert (labelled.nbytes, labelled.category, labelled.module) == (5 * FLOAT, "activations",
                                                                     "somewhere")
    parameters = [life for life in tracker.lives() if life.category == "parameters"]
    assert sum(life.nbytes for life in parameters) == \
        storage_bytes(run.workload.model.parameters())
    del temporary


def test_a_resized_storage_ends_one_life_and_starts_another() -> None:
    run = trainer()
    with tracker_of(run) as tracker:
        buffer = torch.ones(100)
        storage = buffer.untyped_storage()
        tracker.end_life(storage)  # as FSDP2 frees gathered weights: resize_(0)
        storage.resize_(0)
        storage.resize_(200 * FLOAT)
        tracker.label_storage(storage, "temporaries")
        del buffer, storage  # the second life ends; the first is not ended twice
    first, second = [life for life in tracker.lives() if life.born > 0]
    assert (first.nbytes, second.nbytes) == (100 * FLOAT, 200 * FLOAT)
    assert first.born < first.died < second.born < second.died


def test_the_sharded_tracker_follows_resize() -> None:
    run = trainer()
    original = torch.UntypedStorage.resize_
    with tracker_of(run, ShardedMemoryTracker) as tracker:
        assert torch.UntypedStorage.resize_ is not original
        gathered = torch.ones(100)
        gathered.untyped_storage().resize_(0)
        gathered.untyped_storage().resize_(100 * FLOAT)
    assert torch.UntypedStorage.resize_ is original
    first, second = [life for life in tracker.lives() if life.born > 0]
    assert (first.category, second.category) == ("temporaries", "comm_buffers")
    assert first.died is not None and first.died < second.born and second.died is None
    del gathered


def test_the_local_storage_seam() -> None:
    """A subclass that counts a stand-in "local shard" for a parameter, as the sharded tracker
    counts a DTensor's: the labels of the step go through `storages`."""
    run = trainer()
    weight = run.workload.model[0].weight
    shard = torch.ones(weight.numel() // 4)

    class Sharded(MemoryTracker):
        def storages(self, tensor):
            return [shard.untyped_storage()] if tensor is weight else super().storages(tensor)

    params = list(run.workload.model.parameters())
    report = tracked_step(run, tracker_of(run, Sharded))
    assert report.category_max_bytes["parameters"] == \
        storage_bytes(params) - storage_bytes([weight]) + storage_bytes([shard])


def test_the_sharded_tracker_counts_the_inner_tensors_of_a_wrapper() -> None:
    a, b = torch.ones(6), torch.zeros(6)
    wrapper = TwoTensor(a, b)
    assert sorted(s.data_ptr() for s in local_storages(wrapper)) == \
        sorted((a.data_ptr(), b.data_ptr()))
    run = trainer()
    with tracker_of(run, ShardedMemoryTracker, cast_category="comm_buffers") as tracker:
        tracker.label(wrapper, "autocast_copies")  # FSDP2's casts are communication buffers
    labelled = [life for life in tracker.lives() if life.nbytes == 6 * FLOAT]
    assert [life.category for life in labelled] == ["comm_buffers", "comm_buffers"]


def test_sharded_precedence_and_figures() -> None:
    assert PRECEDENCE == ("temporaries", "activations", "autocast_copies", "comm_buffers",
                          "gradients", "optimizer_state", "parameters")
    run = trainer()
    persistent = torch.zeros(10)
    tracker = tracker_of(run, ShardedMemoryTracker, persistent=[persistent])
    figures = rank_figures(tracked_step(run, tracker))
    assert list(figures) == ["peak_bytes", "live_at_peak_bytes", "category_max_bytes",
                             "peak_phase"]
    assert list(figures["live_at_peak_bytes"]) == list(CATEGORIES)
    assert figures["category_max_bytes"]["comm_buffers"] == 10 * FLOAT
    assert figures["peak_phase"] in ("forward", "backward", "optimizer")
    assert tracker.report().timeline["bytes"].keys() == set(CATEGORIES)


def test_hooks_are_removed_on_exit() -> None:
    run = trainer()
    seen = []

    class Counting(ShardedMemoryTracker):
        def __enter__(self):
            handle = run.workload.model.register_forward_hook(lambda *_: seen.append(1))
            self.on_exit(handle.remove)
            return super().__enter__()

    tracker = tracker_of(run, Counting)
    tracked_step(run, tracker)
    count = len(tracker.lives())
    run.step()  # new gradients: a grad or optimizer hook left behind would label them
    assert seen == [1]
    assert len(tracker.lives()) == count


def test_a_failed_enter_leaves_nothing_behind() -> None:
    run = trainer()
    original = torch.UntypedStorage.resize_

    class Failing(ShardedMemoryTracker):
        def label(self, tensor, category, **options):
            if category == "optimizer_state":
                raise RuntimeError("no state")
            super().label(tensor, category, **options)

    tracker = tracker_of(run, Failing)
    with pytest.raises(RuntimeError, match="no state"):
        tracker.__enter__()
    assert torch.UntypedStorage.resize_ is original
    count = len(tracker.lives())
    run.step()
    assert len(tracker.lives()) == count


def test_the_casts_autocast_frees_as_it_exits_die_in_the_order_they_were_born():
    """Autocast clears its cache of weight casts in an order of its own (a hash map keyed by
    address); the tracker reports them first born, first freed, so a step repeats."""
    model = nn.Sequential(*[nn.Linear(IN, IN) for _ in range(6)])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with MemoryTracker(model, optimizer) as tracker, torch.no_grad(), \
            torch.autocast("cpu", dtype=torch.bfloat16):  # no_grad: no cast is saved
        model(torch.ones(BATCH, IN))
    casts = [life for life in tracker.lives() if life.category == "autocast_copies"]
    assert len(casts) == 12  # each layer's weight and bias
    assert [life.died for life in casts] == sorted(life.died for life in casts)
