"""The sharding study for real: FSDP2 and DDP on a fake process group (the tiny LLaMA), the
tracker against the allocator on real tensors, and the torchrun script on two CPU processes
against the estimate. The script's refusal without GPUs is here too (a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import torch
from conftest import REPO_ROOT, cli_env

from generator import results
from generator.measure.studies import sharding

SCRIPT = REPO_ROOT / "scripts" / "torchrun_sharding.py"
TINY = {"model": "llama-tiny", "batch_size": 2, "seq_len": 16, "device": "cpu",
        "world_sizes": [1, 2, 4, 8]}
ALLOCATOR_CHECK = {"model": "llama-tiny", "batch_size": 2, "seq_len": 32, "precision": "amp-bf16"}
STATE = ("parameters", "gradients", "optimizer_state")
CEILING_S = 900  # only a hung process waits this long


@pytest.fixture(scope="module")
def background(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The two checks that need processes of their own, started together so that they run
    while this process estimates (tiny_rows)."""
    folder = tmp_path_factory.mktemp("torchrun")
    env = cli_env()
    started = {
        # a fresh process: the profiler's running total spans a process's sessions
        "allocator": subprocess.Popen(
            [sys.executable, "-c", "import json; from generator.measure.studies.sharding import "
             f"allocator_check; print(json.dumps(allocator_check({ALLOCATOR_CHECK!r}, "
             "'fsdp2', 4)))"], cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True),
        "torchrun": subprocess.Popen(
            [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
             str(SCRIPT), "--device", "cpu", "--model", TINY["model"], "--batch-size",
             str(TINY["batch_size"]), "--seq-len", str(TINY["seq_len"]), "--results",
             str(folder)], cwd=folder, env={**env, "OMP_NUM_THREADS": "1"},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
        "folder": folder}
    yield started
    for name in ("allocator", "torchrun"):
        if started[name].poll() is None:
            started[name].kill()
        started[name].communicate()


def _finish(process: subprocess.Popen) -> str:
    out, err = process.communicate(timeout=CEILING_S)
    assert process.returncode == 0, err[-3000:]
    return out


@pytest.fixture(scope="module")
def tiny_rows(background) -> dict[tuple[str, int], dict]:
    data = sharding.run(TINY)
    return {(r["strategy"], r["world_size"]): r for r in data["rows"]}


def _state(row: dict, *cats: str) -> int:
    return sum(row["category_max_bytes"][c] for c in cats)


@pytest.mark.parametrize("world_size", [2, 4, 8])
def test_fsdp_parameters_and_optimizer_state_fall_as_one_over_n(tiny_rows, world_size: int) -> None:
    whole = _state(tiny_rows["fsdp2", 1], "parameters", "optimizer_state")
    shard = _state(tiny_rows["fsdp2", world_size], "parameters", "optimizer_state")
    assert shard == pytest.approx(whole / world_size, rel=0.05)
    grads = _state(tiny_rows["fsdp2", world_size], "gradients")
    assert grads == pytest.approx(_state(tiny_rows["fsdp2", 1], "gradients") / world_size,
                                  rel=0.05)


def test_ddp_keeps_a_full_replica_on_every_rank(tiny_rows) -> None:
    one = tiny_rows["ddp", 1]
    for n in (2, 4, 8):
        row = tiny_rows["ddp", n]
        assert row["category_max_bytes"]["parameters"] == one["category_max_bytes"]["parameters"]
        assert row["peak_bytes"] == one["peak_bytes"]
    # DDP's buckets hold the gradients a second time (gradient_as_bucket_view=False)
    assert one["category_max_bytes"]["comm_buffers"] == one["category_max_bytes"]["gradients"]


def test_activations_do_not_shrink_with_sharding(tiny_rows) -> None:
    activations = {tiny_rows["fsdp2", n]["category_max_bytes"]["activations"] for n in (1, 2, 4, 8)}
    assert len(activations) == 1


def test_tracker_counts_a_ranks_storages_as_the_allocator_does(background) -> None:
    """Real tensors on this CPU, FSDP2 on 4 fake ranks: gathered weights freed by
    resize_(0), DTensor shards, reduce-scattered gradients all counted as the allocator sees
    them."""
    found = json.loads(_finish(background["allocator"]).strip().splitlines()[-1])
    assert found["tracker"] == pytest.approx(found["allocator"], rel=1e-4)


def test_torchrun_script_on_cpu_processes_matches_the_estimate(background, tiny_rows) -> None:
    """Its dry run: two real processes, gloo, the real DDP and fully_shard (under autocast,
    and with FSDP2's bf16 policy). Per rank they hold what the estimate (one process, fake
    process group, DDP's buckets reproduced) says, category by category; except that gloo's reduce-scatter makes a transient copy of
    its input, which NCCL, the backend the estimate stands for, does not."""
    _finish(background["torchrun"])
    [path] = background["folder"].glob("studies/*/sharding-llama-tiny.json")
    real = results.load_study(path)
    assert real["study"]["backend"] == "cpu"
    assert sharding.settings(real["study"]["params"]) == \
        {**sharding.settings(TINY),
         "world_sizes": {"fsdp2": [1, 2], "ddp": [1, 2], "fsdp2-mp": [1, 2]},
         "strategies": ["fsdp2", "ddp", "fsdp2-mp"]}
    assert len(real["data"]["rows"]) == 6
    assert real["data"]["notes"] == [{"id": "sharding_torchrun_cpu", "values": {"processes": 2}}]
    assert real["method_version"] == sharding.VERSION
    for row in real["data"]["rows"]:
        twin = tiny_rows[row["strategy"], row["world_size"]]
        if row["strategy"] == "ddp" or row["world_size"] == 1:
            assert row["live_at_peak_bytes"] == twin["live_at_peak_bytes"], row["strategy"]
            continue
        real_max, estimated_max = row["category_max_bytes"], twin["category_max_bytes"]
        for cat in STATE + ("activations", "autocast_copies", "comm_buffers"):
            assert real_max[cat] == estimated_max[cat], cat
        assert real_max["temporaries"] >= estimated_max["temporaries"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message of a machine "
                    "without CUDA GPUs")
def test_torchrun_script_fails_fast_without_gpus(tmp_path) -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "--model", "gpt2-small", "--batch-size",
                          "8", "--seq-len", "1024", "--results", str(tmp_path)],
                         capture_output=True, text=True, timeout=CEILING_S, env=cli_env())
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "no" in out.stderr and "CUDA" in out.stderr
    assert not any(tmp_path.iterdir())
