"""PyTorch's memory snapshot, both ways (simulate/history.py, snapshot.py, compare.py;
`run --snapshot`, `compare`): the simulated run written in `torch.cuda.memory._snapshot()`'s
shape, consistent with the simulated allocator; a snapshot from someone else read with an
unpickler that admits no global (a planted os.system is refused, not run); and the
comparison's figures and sentences. Tiny scripts on fake tensors, in this process; the
shipped example through subprocesses and torch's visualizer: slow/test_snapshot_runs.py."""

from __future__ import annotations

import os
import pickle
from collections import Counter
from pathlib import Path

import pytest
import torch
from conftest import assert_refused
from torch.cuda import _memory_viz

import generator as g
from generator.allocator.caching import CachingAllocator
from generator.cli.main import _after_dashes
from generator.errors import ConfigError
from generator.simulate import compare
from generator.simulate import snapshot as snapshots
from generator.simulate.history import ENGINE_FRAME

TRAINS = '''
import torch
from torch import nn
model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 256)).to("cuda")
optimizer = torch.optim.AdamW(model.parameters())
for step in range(3):
    loss = model(torch.randn(64, 256, device="cuda")).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
'''


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def simulated() -> dict:
    """The snapshot of a small loop run on a simulated RTX 4090, with its history."""
    with g.simulated_gpu("RTX 4090", history=True) as gpu:
        exec(compile(TRAINS, "trains.py", "exec"), {"__name__": "__main__"})
    return gpu.snapshot()


# --------------------------------------------------------------------------- the writer


def test_the_snapshot_has_pytorch_s_shape(simulated: dict) -> None:
    assert {"segments", "device_traces", "allocator_settings"} <= set(simulated)
    assert len(simulated["device_traces"]) == 1 and simulated["segments"]
    for segment in simulated["segments"]:
        assert {"device", "address", "total_size", "allocated_size", "active_size",
                "requested_size", "stream", "segment_type", "segment_pool_id",
                "is_expandable", "frames", "blocks"} <= set(segment)
        assert segment["segment_type"] in ("small", "large") and segment["device"] == 0
        address = segment["address"]
        for block in segment["blocks"]:  # the blocks tile the segment, in address order
            assert set(block) == {"address", "size", "requested_size", "state", "frames"}
            assert block["address"] == address and block["state"] in (
                "active_allocated", "inactive")
            assert block["requested_size"] <= block["size"]
            address += block["size"]
        assert address == segment["address"] + segment["total_size"]
        assert segment["allocated_size"] == sum(b["size"] for b in segment["blocks"]
                                                if b["state"] == "active_allocated")
    actions = Counter(e["action"] for e in simulated["device_traces"][0])
    assert set(actions) == {"segment_alloc", "alloc", "free_requested", "free_completed"}
    assert actions["free_requested"] == actions["free_completed"]
    for entry in simulated["device_traces"][0]:
        assert {"action", "addr", "size", "stream", "frames"} == set(entry)
        for frame in entry["frames"]:
            assert set(frame) == {"filename", "line", "name"}


def test_the_trace_and_the_segments_tell_one_story(simulated: dict) -> None:
    """Replayed backwards from the state at the end, as the viewer does (MemoryViz.js
    simulate_memory), every live block lies in a segment held at that moment, and an
    allocation is freed only where it was made."""
    segments = {s["address"]: s["total_size"] for s in simulated["segments"]}
    blocks = {b["address"]: b["requested_size"] for s in simulated["segments"]
              for b in s["blocks"] if b["state"] == "active_allocated"}
    for entry in reversed(simulated["device_traces"][0]):
        action, addr = entry["action"], entry["addr"]
        if action == "alloc":
            assert blocks.pop(addr) == entry["size"]
        elif action == "free_completed":
            assert addr not in blocks
            blocks[addr] = entry["size"]
        elif action == "segment_alloc":
            assert not any(addr <= b < addr + segments[addr] for b in blocks)
            del segments[addr]
        for block, size in blocks.items():
            assert any(s <= block and block + size <= s + n for s, n in segments.items())
    assert not blocks and not segments  # the trace began with the run: nothing before it


def test_frames_are_the_script_s_not_the_tool_s(simulated: dict) -> None:
    trace = simulated["device_traces"][0]
    files = {f["filename"] for e in trace for f in e["frames"]}
    tool = os.path.dirname(g.__file__)
    assert "trains.py" in files
    assert not any(f.startswith(tool) for f in files)  # no frame of this tool
    assert not any("_subclasses" in f or "_python_dispatch" in f for f in files)
    linear = [e for e in trace if e["action"] == "alloc"
              and any(f["name"] == "forward" and f["filename"].endswith("linear.py")
                      for f in e["frames"])]
    names = [f["filename"] for f in linear[0]["frames"]]
    assert names[0].endswith("linear.py") and "trains.py" in names  # innermost first
    assert compare.site(linear[0]["frames"]).startswith("trains.py:")
    backward = [e for e in trace if e["frames"] and e["frames"][-1] is ENGINE_FRAME]
    assert backward  # backward's allocations: autograd's thread, as on a GPU
    # frames seen before are the same objects: a pickle stores each stack once
    assert len({id(e["frames"]) for e in trace}) < len(trace) / 4


def test_pytorch_s_visualizer_reads_it(simulated: dict) -> None:
    assert "segments: " in _memory_viz.segsum(simulated)
    assert "cudaMalloc" in _memory_viz.trace(simulated)
    assert "<html>" in _memory_viz.trace_plot(simulated).lower()


def test_after_the_block_one_snapshot_serves_the_report_and_the_file(tmp_path: Path) -> None:
    with g.simulated_gpu("RTX 4090", history=True) as gpu:
        exec(compile(TRAINS, "trains.py", "exec"), {"__name__": "__main__"})
    left = gpu.snapshot()
    assert gpu.snapshot() is left  # the memory no longer changes: taken once
    gpu.dump_snapshot(tmp_path / "s.pickle")
    assert snapshots.load(tmp_path / "s.pickle") == left
    assert gpu.report().timeline == compare.timeline(left)


def test_without_history_the_state_alone_and_the_cpu_has_none() -> None:
    with g.simulated_gpu("RTX 4090") as gpu:
        kept = torch.nn.Linear(64, 64).cuda()
    state = gpu.snapshot()
    assert state["device_traces"] == [[]] and len(state["segments"]) == 1
    assert sum(b["requested_size"] for b in state["segments"][0]["blocks"]) == 64 * 65 * 4
    del kept
    with pytest.raises(ConfigError, match="CUDA caching allocator"):
        g.simulated_gpu(device="cpu", history=True)


RECORDS_ITS_OWN = '''
import torch
model = torch.nn.Linear(64, 64).cuda()
torch.cuda.memory._record_memory_history(max_entries=100000)
model(torch.randn(4, 64, device="cuda")).sum().backward()
assert len(torch.cuda.memory_snapshot()) == len(torch.cuda.memory._snapshot()["segments"])
torch.cuda.memory._dump_snapshot(OUT)
torch.cuda.memory._record_memory_history(enabled=None)
'''


def test_a_script_that_takes_its_own_snapshot_gets_the_simulated_one(tmp_path: Path) -> None:
    out = tmp_path / "real.pickle"
    out.write_bytes(b"the user's real snapshot")
    before = {n: getattr(torch.cuda.memory, n) for n in ("_snapshot", "_dump_snapshot",
                                                          "_record_memory_history")}
    with g.simulated_gpu("RTX 4090") as gpu:
        exec(RECORDS_ITS_OWN, {"__name__": "__main__", "OUT": str(out)})
    assert out.read_bytes() == b"the user's real snapshot"  # never written over
    [(name, taken)] = gpu.recording.dumped
    assert name == str(out) and snapshots.shape_problem(taken) is None
    trace = taken["device_traces"][0]
    assert trace and trace[0]["action"] == "alloc"  # from the script's call on, not before
    blocks = [b for s in taken["segments"] for b in s["blocks"] if b["state"] != "inactive"]
    # the weight, made before the script recorded: no frames, as on a GPU; its gradient's
    assert [b["frames"] for b in blocks if b["requested_size"] == 64 * 64 * 4] == [
        [], [ENGINE_FRAME]]
    assert {n: getattr(torch.cuda.memory, n) for n in before} == before
    # the run asked for no history: it began with the script's call
    assert gpu.snapshot()["device_traces"][0][:len(trace)] == trace


def test_dump_then_load_gives_it_back(simulated: dict, tmp_path: Path) -> None:
    path = tmp_path / "run.pickle"
    snapshots.dump(simulated, path)
    assert snapshots.load(path) == simulated
    assert not list(tmp_path.glob(".*.tmp"))


def test_the_allocator_lists_its_segments_and_tells_of_each() -> None:
    told = []
    allocator = CachingAllocator(capacity=64 << 20)
    allocator.on_segment = lambda *event: told.append(event)
    assert allocator.allocate("a", 3 << 20) and allocator.allocate("b", 1000)
    (large, size, blocks), (small, small_size, small_blocks) = sorted(
        allocator.segment_blocks(), key=lambda s: s[1])[::-1]
    assert (size, small_size) == (20 << 20, 2 << 20)
    assert [b.size for b in blocks] == [3 << 20, 17 << 20] and blocks[0].allocated
    assert blocks[0] is allocator.block("a") and small_blocks[0] is allocator.block("b")
    allocator.free("a")
    allocator.empty_cache()
    assert told == [("segment_alloc", large, 20 << 20), ("segment_alloc", small, 2 << 20),
                    ("segment_free", large, 20 << 20)]


# --------------------------------------------------------------------------- loading


def _valid() -> dict:
    return {"segments": [{"device": 0, "address": 4096, "total_size": 2 << 20, "stream": 0,
                          "segment_pool_id": (0, 0), "blocks": [
                              {"address": 4096, "size": 2 << 20, "requested_size": 0,
                               "state": "inactive", "frames": []}]}],
            "device_traces": [[{"action": "alloc", "addr": 4096, "size": 512, "stream": 0,
                                "time_us": 1, "frames": [
                                    {"filename": "train.py", "line": 3, "name": "f"}]},
                               {"action": "oom", "device_free": 0, "size": 1 << 40,
                                "stream": 0, "frames": []}]],
            "allocator_settings": {"garbage_collection_threshold": 0.0, "x": None,
                                   "expandable_segments": True}}


@pytest.mark.parametrize("protocol", [2, 4, pickle.HIGHEST_PROTOCOL])
def test_what_a_snapshot_holds_is_admitted(tmp_path: Path, protocol: int) -> None:
    path = tmp_path / "real.pickle"
    path.write_bytes(pickle.dumps(_valid(), protocol=protocol))
    assert snapshots.load(path) == _valid()


class _Planted:
    """What a hostile snapshot holds: unpickling it would run a shell command."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


@pytest.mark.parametrize("planted", [
    lambda m: _Planted(m), lambda m: {"segments": [], "device_traces": [[_Planted(m)]]},
    lambda m: Counter(a=1), lambda m: {"segments": [], "device_traces": [], "x": {1, 2}},
    lambda m: eval])
def test_any_global_is_refused_and_never_called(tmp_path: Path, planted) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / "evil.pickle"
    path.write_bytes(pickle.dumps(planted(marker), protocol=2))
    with pytest.raises(ConfigError) as refused:
        snapshots.load(path)
    assert str(refused.value).startswith(f"{path} is not a memory snapshot: it names ")
    assert "\n" not in str(refused.value) and not marker.exists()


def test_a_planted_command_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "evil.pickle"
    path.write_bytes(pickle.dumps(_Planted(tmp_path / "ran")))
    with pytest.raises(ConfigError, match=rf"it names {os.system.__module__}\.system$"):
        snapshots.load(path)
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("data, needle", [
    (b"segments: []\n", "not a pickle that can be read"),
    (pickle.dumps(_valid())[:40], "not a pickle that can be read"),  # truncated
    (b"", "not a pickle that can be read"),
    (pickle.dumps([1, 2]), "it holds no list of segments"),
    (pickle.dumps({"segments": []}), "device_traces"),
    (pickle.dumps({"segments": [{"address": "x"}], "device_traces": []}), "a segment"),
    (pickle.dumps({"segments": [], "device_traces": [[{"action": "alloc"}]]}),
     "a trace entry"),
    (pickle.dumps({"segments": [], "device_traces": [[{"action": "alloc", "addr": 1,
                                                        "size": 2, "frames": [1]}]]}),
     "a frame 1"),
])
def test_what_is_not_a_snapshot_is_one_line(tmp_path: Path, data: bytes, needle: str) -> None:
    path = tmp_path / "bad.pickle"
    path.write_bytes(data)
    with pytest.raises(ConfigError, match="is not a memory snapshot") as refused:
        snapshots.load(path)
    assert needle in str(refused.value) and "\n" not in str(refused.value)


def _key(name: str) -> bytes:
    return b"X" + len(name).to_bytes(4, "little") + name.encode()


def test_a_small_file_that_stands_for_too_much_is_refused(tmp_path: Path, monkeypatch) -> None:
    """A pickle refers to one list many times over: 1,000 entries of 1,000 frames in 10 KB."""
    frames = [{"filename": "a.py", "line": 1, "name": "f"}] * 1000
    entry = {"action": "alloc", "addr": 0, "size": 1, "frames": frames}
    path = tmp_path / "bomb.pickle"
    path.write_bytes(pickle.dumps({"segments": [], "device_traces": [[entry] * 1000]}))
    assert path.stat().st_size < 10_000
    monkeypatch.setattr(snapshots, "ITEM_LIMIT", 100_000)
    with pytest.raises(ConfigError, match="it holds more than 100,000 segments"):
        snapshots.load(path)


def test_lists_nested_deeper_than_repr_goes_are_one_line(tmp_path: Path) -> None:
    depth = 20_000  # built from opcodes: pickle.dumps itself would recurse that deep
    path = tmp_path / "deep.pickle"
    path.write_bytes(b"\x80\x02}" + _key("device_traces") + b"]s" + _key("segments") + b"]"
                     + b"]" * depth + b"a" * depth + b"s.")
    with pytest.raises(ConfigError, match=r"not a memory snapshot: a segment \[\[\[") as refused:
        snapshots.load(path)
    assert len(str(refused.value)) < 200


def test_files_that_cannot_be_read_are_one_line(tmp_path: Path, monkeypatch) -> None:
    with pytest.raises(ConfigError, match="no memory snapshot at"):
        snapshots.load(tmp_path / "missing.pickle")
    with pytest.raises(ConfigError, match="not a regular file"):
        snapshots.load(tmp_path)
    big = tmp_path / "big.pickle"
    big.write_bytes(pickle.dumps(_valid()))
    monkeypatch.setattr(snapshots, "READ_LIMIT", 2**20 // 2)
    big.write_bytes(b"x" * 2**20)
    with pytest.raises(ConfigError, match="larger than"):
        snapshots.load(big)


# --------------------------------------------------------------------------- comparing


def _frames(*names: tuple[str, str]) -> list[dict]:
    return [{"filename": f, "line": 7, "name": n} for f, n in names]


FORWARD = _frames(("/x/torch/nn/modules/linear.py", "forward"),
                  ("/x/torch/nn/modules/module.py", "_call_impl"), ("/home/me/train.py", "main"))


@pytest.mark.parametrize("frames, phase", [
    ([], "no stack"), ([ENGINE_FRAME], "backward"),
    (_frames(("??", "torch::autograd::Engine::evaluate_function(...)")), "backward"),
    (_frames(("/x/torch/optim/adamw.py", "step"), ("train.py", "main")), "optimizer"),
    (FORWARD, "forward"), (_frames(("train.py", "main")), "other")])
def test_phases_are_read_from_the_frames(frames: list, phase: str) -> None:
    assert compare.phase(frames) == phase


def test_the_site_is_the_innermost_frame_outside_torch() -> None:
    assert compare.site(FORWARD) == "train.py:7 main"
    assert compare.site([ENGINE_FRAME]) == ("<autograd device thread>:0 "
                                            "torch::autograd::Engine::thread_main")
    assert compare.site([]) == "no stack"


def test_figures_count_what_was_live_before_the_trace_began() -> None:
    """A trace that begins late: the state at the end, less what the trace did."""
    mib = 2**20
    snapshot = {"segments": [{"address": 0, "total_size": 20 * mib, "blocks": [
        {"size": 4 * mib, "requested_size": 4 * mib, "state": "active_allocated"},
        {"size": 16 * mib, "requested_size": 0, "state": "inactive"}]}],
        "device_traces": [[
            {"action": "alloc", "addr": 8 * mib, "size": 8 * mib, "frames": FORWARD},
            {"action": "free_completed", "addr": 8 * mib, "size": 8 * mib},
            {"action": "free_completed", "addr": 12 * mib, "size": 2 * mib},
            {"action": "oom", "device_free": 0, "size": 1 << 40}]]}
    found = compare.figures(snapshot)
    assert found.peak_allocated == 14 * mib  # 6 MiB before the trace, then 8 more
    assert found.phases_at_peak[compare.BEFORE] == 6 * mib
    assert found.phases_at_peak["forward"] == 8 * mib
    assert found.peak_reserved == 20 * mib and (found.segments, found.most_segments) == (1, 1)
    assert found.size_classes["1 to 10 MiB"] == (1, 8 * mib) and found.out_of_memory == 1
    assert found.allocations == Counter({("train.py:7 main", 8 * mib): 1})


def test_the_sentences_say_what_the_figures_hold() -> None:
    assert compare.difference(100, 100) == "the same"
    assert compare.difference(2**20, 3 * 2**20) == "+2.00 MiB (+200.0%)"
    assert compare.difference(4, 3, nbytes=False) == "−1 (−25.0%)"
    assert compare.difference(0, 3, nbytes=False) == "+3"
    def made(size: int) -> compare.Figures:
        return compare.figures({"segments": [], "device_traces": [[
            {"action": "alloc", "addr": 0, "size": size, "frames": FORWARD},
            {"action": "free_completed", "addr": 0, "size": size}]]})

    one, other = made(512), made(1024)
    assert compare.summary(one, one).startswith("no difference")
    assert compare.summary(one, other) == "they differ in: peak allocated, allocations"
    assert compare.lacking(one, other) == [compare.Lacking("train.py:7 main", 512, 1)]
    assert compare.lacking(one, one) == []


def test_the_device_is_the_only_one_or_the_one_chosen() -> None:
    two = {"segments": [{"device": 1, "address": 0, "total_size": 1, "blocks": []}],
           "device_traces": [[{"action": "alloc", "addr": 0, "size": 1}], []]}
    with pytest.raises(ConfigError, match="holds devices 0, 1: choose one"):
        compare.device_of(two, None)
    assert compare.device_of(two, 1) == 1
    with pytest.raises(ConfigError, match="nothing for device 3"):
        compare.device_of(two, 3)
    with pytest.raises(ConfigError, match="holds no segment and no trace entry"):
        compare.device_of({"segments": [], "device_traces": [[]]}, None)


# --------------------------------------------------------------------------- the commands


def test_run_writes_the_snapshot_and_compare_finds_no_difference(cli, tmp_path: Path) -> None:
    script = _write(tmp_path, "trains.py", TRAINS)
    written = tmp_path / "sim.pickle"
    done = cli(["run", "--gpu", "4090", "--snapshot", written, script], tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"memory snapshot written to {written}" in done.stdout
    assert snapshots.load(written)["simulated"]["gpu"] == "NVIDIA GeForce RTX 4090"
    done = cli(["compare", written, "--gpu", "4090", "--", script], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "the snapshot (estimated, simulated) beside" in done.stdout
    assert "no difference: the same peaks" in done.stdout
    done = cli(["compare", written, "--gpu", "3090", "--", script], tmp_path)
    assert done.returncode == 0 and "no difference" in done.stdout  # the same allocator


def test_a_hostile_snapshot_stops_compare_before_the_script(cli, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.pickle"
    evil.write_bytes(pickle.dumps(_Planted(marker)))
    script = _write(tmp_path, "trains.py", f"open({str(tmp_path / 'script-ran')!r}, 'w')\n")
    assert_refused(cli, tmp_path, ["compare", evil, "--", script],
                   "is not a memory snapshot: it names", "system")
    assert not marker.exists() and not (tmp_path / "script-ran").exists()


@pytest.mark.parametrize("args, needle", [
    (["run", "--device", "cpu", "--snapshot", "s.pickle", "x.py"], "CUDA caching allocator"),
    (["run", "--snapshot", "no/such/s.pickle", "x.py"], "--snapshot: no folder"),
    (["compare", "s.pickle", "x.py", "--batch", "2"], "unrecognized arguments"),
    (["compare", "missing.pickle", "--", "x.py"], "no memory snapshot at missing.pickle"),
])
def test_mistakes_are_one_line(cli, tmp_path: Path, args: list, needle: str) -> None:
    _write(tmp_path, "x.py", "")
    assert_refused(cli, tmp_path, args, needle)


def test_compare_s_script_is_what_follows_the_dashes() -> None:
    assert _after_dashes(["compare", "s", "--gpu", "x", "--", "t.py", "--", "-m"]) == (
        ["compare", "s", "--gpu", "x"], ["t.py", "--", "-m"])
    assert _after_dashes(["run", "t.py", "--", "a"]) == (["run", "t.py", "--", "a"], None)
    assert _after_dashes(["compare", "s", "t.py"]) == (["compare", "s", "t.py"], None)
