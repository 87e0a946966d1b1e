"""The GPU session's scripts (generator/bench/gpu_*.py), in what a machine without a GPU can check:
the memory snapshot's summary on a hand-made snapshot, the cuDNN reserve table's rows, and
one clear line with exit status 2 where there is no GPU."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import bench_script

MIB = 1 << 20


def _entry(action: str, addr: int, size: int) -> dict:
    return {"action": action, "addr": addr, "size": size, "stream": 0}


def test_the_snapshot_summary_places_each_large_request_in_its_segment() -> None:
    snapshot = bench_script("gpu_memory_snapshot")
    a, b = 1 << 40, 1 << 41  # two segments' addresses
    trace = [
        _entry("segment_alloc", a, 40 * MIB), _entry("alloc", a, 30 * MIB),
        _entry("alloc", a + 30 * MIB, 512), _entry("alloc", a + 31 * MIB, 4 * MIB),
        _entry("free_requested", a, 30 * MIB), _entry("free_completed", a, 30 * MIB),
        _entry("segment_alloc", b, 64 * MIB), _entry("alloc", b, 64 * MIB),
        _entry("free_completed", b, 64 * MIB), _entry("segment_free", b, 64 * MIB),
        # the freed range taken again: a new segment at the same address
        _entry("segment_alloc", b, 20 * MIB), _entry("alloc", b + 2 * MIB, 2 * MIB),
    ]
    summary = snapshot.summarise({"segments": [], "device_traces": [trace]}, max_entries=100)
    assert summary["segments"] == [{"bytes": 40 * MIB, "for_bytes": 30 * MIB, "made_by": 1},
                                   {"bytes": 64 * MIB, "for_bytes": 64 * MIB, "made_by": 4},
                                   {"bytes": 20 * MIB, "for_bytes": 2 * MIB, "made_by": 5}]
    assert summary["allocations"] == 5 and not summary["truncated"]
    assert summary["events"] == [
        ["segment_alloc", 40 * MIB, 0, 0], ["alloc", 30 * MIB, 0, 0],
        ["alloc", 4 * MIB, 0, 31 * MIB], ["free_completed", 30 * MIB, 0, 0],
        ["segment_alloc", 64 * MIB, 1, 0], ["alloc", 64 * MIB, 1, 0],
        ["free_completed", 64 * MIB, 1, 0], ["segment_free", 64 * MIB, 1, 0],
        ["segment_alloc", 20 * MIB, 2, 0], ["alloc", 2 * MIB, 2, 2 * MIB]]
    # a history as long as its limit may have lost its oldest entries
    assert snapshot.summarise({"device_traces": [trace]}, max_entries=len(trace))["truncated"]


@pytest.mark.parametrize("name, args", [("gpu_memory_snapshot", ["out"]),
                                        ("gpu_cudnn_rnn_reserve", ["out.csv"])])
@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message of a machine "
                    "without a GPU, and this one has one")
def test_without_a_gpu_the_scripts_say_so(name: str, args: list, capsys) -> None:
    assert bench_script(name).main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs a CUDA GPU" in err[0]


def test_the_reserve_finder_walks_the_graph_and_finds_none_on_the_cpu() -> None:
    """On the CPU an LSTM runs oneDNN, so the walk from its output over the whole graph finds
    no cuDNN node; the table's rows then say None rather than a wrong size."""
    reserve = bench_script("gpu_cudnn_rnn_reserve")
    lstm = torch.nn.LSTM(8, 8, num_layers=2)
    output, _ = lstm(torch.randn(5, 3, 8, requires_grad=True))
    assert reserve.saved_reserve((output * 2).sum()) is None


def test_the_simulation_notes_each_segment_it_takes_and_for_which_request() -> None:
    compare = bench_script("compare_snapshot")
    events = [("alloc", 0, 30 * MIB), ("alloc", 1, 512), ("free", 0),
              ("alloc", 2, 29 * MIB),  # fits in the freed 30 MiB block: no segment
              ("alloc", 3, 100 * MIB)]
    assert compare.simulated_segments(events) == [
        {"bytes": 30 * MIB, "for_bytes": 30 * MIB, "made_by": 1},
        {"bytes": 2 * MIB, "for_bytes": 512, "made_by": 2},
        {"bytes": 100 * MIB, "for_bytes": 100 * MIB, "made_by": 4}]


def test_real_and_simulated_segments_are_set_side_by_side_building_included() -> None:
    compare = bench_script("compare_snapshot")
    simulated = [{"bytes": s * MIB, "for_bytes": s * MIB, "made_by": n}
                 for n, s in enumerate((500, 100, 200, 300, 400), start=1)]
    real = simulated[:3] + simulated[4:]  # the real run reused a block for 300
    snapshot = {"run": "r", "segments": real,
                "ground_truth": {"before_steps": {"reserved_bytes": 500 * MIB}}}
    lines = compare.compare(snapshot, simulated, 64 * MIB)
    assert "(1 of them, 0.49 GiB, taken while building)" in lines[0]
    assert lines[2:] == ["  = 3 segments alike (0.78 GiB)",
                         f"  i {'':<40}300 MiB for 300.0 MiB",
                         "  = 1 segment alike (0.39 GiB)"]
    assert compare.building_segments(real, 499 * MIB) == 0


def test_a_snapshot_run_writes_its_summary_and_stores_its_result(tmp_path, monkeypatch) -> None:
    """The GPU parts replaced (the step's result, the memory history, the GPU's name): what
    is left is this script's own work, which no CPU run would otherwise reach."""
    from made_results import hand_made_result

    from generator import results
    from generator.jobs import runner
    from generator.measure import run as measure_run
    from generator.results.reference_runs import runs

    snapshot = bench_script("gpu_memory_snapshot")
    run = next(r for r in runs() if r.name == "gemma_2b b8 s512 MP")
    made = hand_made_result(backend="cuda", device="cuda")
    made["ground_truth"] = {"source": "test", "peak_bytes": 8 * MIB,
                            "steps_max_reserved_bytes": 20 * MIB}
    monkeypatch.setattr(measure_run, "measure_to_result",
                        lambda exp: {**made, "key": exp.key})
    monkeypatch.setattr(runner, "machine_id", lambda backend: "nvidia-test")
    monkeypatch.setattr(torch.cuda.memory, "_record_memory_history", lambda *a, **k: None)
    monkeypatch.setattr(torch.cuda.memory, "_snapshot", lambda: {"device_traces": [[
        _entry("segment_alloc", 0, 20 * MIB), _entry("alloc", 0, 8 * MIB)]]})
    (tmp_path / "out").mkdir()
    path = snapshot.snapshot_run("gemma_2b b8 s512 MP", tmp_path / "out", tmp_path / "results")
    summary = json.loads(path.read_text(encoding="utf-8"))
    assert path.name == "gemma_2b_b8_s512_MP.json" and summary["run"] == run.name
    assert summary["key"] == run.key_on("cuda")
    assert summary["segments"] == [{"bytes": 20 * MIB, "for_bytes": 8 * MIB, "made_by": 1}]
    assert summary["h100_reserved_bytes"] == run.reserved_peak_bytes
    stored = results.load(tmp_path / "results" / "nvidia-test" / f"{run.key_on('cuda')}.json")
    assert stored["ground_truth"]["steps_max_reserved_bytes"] == 20 * MIB


def test_a_reserve_row_from_scripted_statistics_and_a_refused_shape() -> None:
    """measure_one on the CPU with torch.cuda's statistics scripted: the row's arithmetic
    (bytes kept beyond the outputs, the transient peak) and a shape the library refuses
    written as a row with its error, not raised."""
    reserve = bench_script("gpu_cudnn_rnn_reserve")
    calls = iter([1000, 1000 + 4 * 5 * 3 * 8 + 2 * 4 * 3 * 8 + 640])  # before, after

    class Scripted:
        def __getattr__(self, name):
            return getattr(torch, name)

    scripted = Scripted()
    scripted.cuda = type("Cuda", (), {
        "synchronize": staticmethod(lambda: None),
        "reset_peak_memory_stats": staticmethod(lambda: None),
        "memory_allocated": staticmethod(lambda: next(calls)),
        "max_memory_allocated": staticmethod(lambda: 5000)})()
    row = reserve.measure_one(scripted, "LSTM", "float32", 8, 1, False, 3, 5, device="cpu")
    assert row["error"] == "" and row["reserve_bytes"] is None  # no cuDNN on the CPU
    # output 5×3×8 floats, h and c 1×3×8 each: what is kept beyond them is the 640 B
    assert row["kept_beyond_outputs_bytes"] == 640
    assert row["transient_bytes"] == 5000 - (1000 + 480 + 192 + 640)
    refused = reserve.measure_one(scripted, "LSTM", "no_such_dtype", 8, 1, False, 3, 5,
                                  device="cpu")
    assert refused["reserve_bytes"] is None and refused["error"].startswith("AttributeError")
