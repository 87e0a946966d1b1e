"""`run --snapshot` and `compare` as a user runs them, in subprocesses, on the shipped
example (generator/examples/plain_loop.py): the snapshot opens in PyTorch's own visualizer
(torch.cuda._memory_viz's trace_plot and segment_plot, and its text summaries), and compare
of the script against its own simulated snapshot finds no difference."""

from __future__ import annotations

import pickle
from pathlib import Path

from conftest import REPO_ROOT, run_cli
from torch.cuda import _memory_viz

EXAMPLE = REPO_ROOT / "generator" / "examples" / "plain_loop.py"


def test_the_snapshot_opens_in_pytorch_s_visualizer_and_compares_equal(tmp_path: Path) -> None:
    written = tmp_path / "plain_loop.pickle"
    done = run_cli(["run", "--gpu", "RTX 4090", "--snapshot", written, EXAMPLE, "--steps", "3"],
                   tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"memory snapshot written to {written}" in done.stdout
    snapshot = pickle.loads(written.read_bytes())  # our own file: torch's way of reading it
    for plot in (_memory_viz.trace_plot, _memory_viz.segment_plot):
        page = plot(snapshot)
        assert page.lstrip().startswith("<!DOCTYPE html>") and "snapshot.pickle" in page
    assert "segments: " in _memory_viz.segsum(snapshot)
    assert "cudaMalloc" in _memory_viz.trace(snapshot)
    allocated = sum(b["requested_size"] for s in snapshot["segments"] for b in s["blocks"]
                    if b["state"] == "active_allocated")
    assert allocated > 0 and any(
        f["filename"] == str(EXAMPLE) for e in snapshot["device_traces"][0]
        for f in e["frames"])

    done = run_cli(["compare", written, "--gpu", "RTX 4090", "--", EXAMPLE, "--steps", "3"],
                   tmp_path)
    assert done.returncode == 0, done.stderr
    assert "no difference: the same peaks, segments and allocations" in done.stdout
    assert "simulated − snapshot" in done.stdout
