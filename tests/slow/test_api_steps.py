"""The API's questions that take many estimates (the largest batch, the levers) and its real
steps (measure_step, track): typed answers by the one rule, and a caller's process left as
it was found."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from process_state import changes, snapshot

import generator as g
from generator.measure.models import MODELS

TINY = {"batch_size": 2, "seq_len": 16}


def test_the_largest_batch_by_the_one_rule() -> None:
    """A budget whose answer is a dozen estimates away: the rule does not depend on the
    budget, a larger one only takes more estimates."""
    seen = []
    found = g.largest_batch("tiny", seq_len=16, memory="1100MiB",
                            progress=lambda b, e, v: seen.append(b))
    assert found.largest > 1 and found.tried[found.largest].fits
    assert list(found.tried) == seen and found.estimate.experiment.batch_size == found.largest
    if not found.capped:
        above = g.estimate("tiny", batch_size=found.largest + 1, seq_len=16)
        assert not above.fits(memory="1100MiB").fits
    with pytest.raises(g.ConfigError, match="needs a gpu"):
        g.largest_batch("tiny", seq_len=16)


def test_levers_are_ranked_on_the_reserved_peak_beside_the_tensors() -> None:
    rows = []
    report = g.levers("tiny", **TINY, progress=rows.append)
    assert [row.levers[0].id for row in report.rows][:2] == ["checkpointing", "sdpa"]
    assert list(report.rows) + ([report.together] if report.together else []) == rows
    for row in report.rows:
        if row.estimate is None:
            assert row.refused
            continue
        assert row.reserved_change_bytes == row.estimate.reserved_bytes - report.base.reserved_bytes
        assert row.peak_change_bytes == row.estimate.peak_bytes - report.base.peak_bytes
        assert row.change_bytes == row.reserved_change_bytes


def test_a_real_step_on_the_cpu_beside_its_allocator() -> None:
    before = snapshot()
    step = g.measure_step("tiny", **TINY, precision="amp-bf16")
    assert changes(before) == {}
    data = step.to_dict()
    assert step.kind == "measured on the CPU" and data["backend"] == "cpu"
    assert step.allocated_bytes == data["ground_truth"]["peak_bytes"]  # the CPU allocator's
    assert step.reserved_bytes is None and step.fits(memory=step.allocated_bytes).fits
    with pytest.raises(g.ConfigError, match="backend 'cpu' or 'cuda'"):
        g.measure_step("tiny", **TINY, backend="estimate")


def test_a_real_step_prints_nothing_into_the_callers_output() -> None:
    """The CPU backend's profiler (Kineto) would print profiler_start and profiler_stop lines
    on standard output; a fresh process, as its first use initialises Kineto."""
    code = "import generator; generator.measure_step('tiny', batch_size=2, seq_len=16)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert run.stdout == ""


def test_the_users_own_loop_tracked_and_rendered(tmp_path: Path) -> None:
    """Any loop, any loss, any optimizer: RMSprop, which the tool itself never builds."""
    workload = MODELS["tiny"].build()
    model = workload.model
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    before = snapshot()
    with g.track(model, optimizer, name="my-tiny", batch_size=4, seq_len=16) as tracked:
        for _ in range(2):
            inputs, target = workload.make_batch(4, 16, torch.device("cpu"))
            loss = workload.loss_fn(model(*inputs), target)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    assert changes(before) == {}
    step = tracked.measurement
    assert step.kind == "measured on the CPU" and step.experiment.optimizer == "rmsprop"
    assert [p.name for p in step.phases] == ["forward", "backward", "optimizer"] * 2
    assert step.category_max["optimizer_state"] > 0 and step.category_max["gradients"] > 0
    assert sum(step.live_at_peak.values()) == step.peak_bytes
    path = tracked.save(tmp_path / "results")
    assert json.loads(path.read_text())["key"] == "my-tiny-b4-s16-fp32-rmsprop-cpu-tracked"
    done = subprocess.run([sys.executable, "-m", "generator", "render", "--results",
                           str(tmp_path / "results"), "--docs", str(tmp_path / "docs")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    report = next((tmp_path / "docs" / "en" / "reports").glob("*my-tiny*.md"))
    assert "rmsprop" in report.read_text(encoding="utf-8")
