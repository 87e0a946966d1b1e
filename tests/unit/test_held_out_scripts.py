"""The held-out sources as written (generator/validate/held_out_scripts.py and
generator/results/held_out_as_written.py): each point's command as built and as recorded,
the comparison rule of each source, the once-only recording; and the simulated GPU's
profiler, which the notebook's training runs inside. Nothing is run: the commands are the
slow test's."""

from __future__ import annotations

import copy
import json
import shlex
from importlib.util import find_spec
from pathlib import Path

import pytest
import torch
from torch.profiler import ProfilerActivity

import generator as g
from generator import validate
from generator.cli.main import _checks
from generator.results import reference_runs
from generator.results.held_out_as_written import command_line
from generator.validate import held_out_scripts as h

MIB = 2**20
RECORDED = h.load()
#: The file as committed before any point ran (each "estimate": null).
DATA = {**RECORDED, "sources": [{**source, "points": [{**raw, "estimate": None}
                                                      for raw in source["points"]]}
                                for source in RECORDED["sources"]]}
POINTS = h.points(DATA)


def test_every_held_out_point_has_one_command_and_at_most_one_estimate() -> None:
    assert sorted(p.id for p in POINTS) == sorted(p.id for p in reference_runs.held_out())
    assert len(POINTS) == 13
    for point in h.points(RECORDED):  # committed null before any ran, then recorded once
        assert point.estimate is None or (len(point.estimate["commit"]) == 40
                                           and point.estimate["exit_status"] in (0, 3))


@pytest.mark.parametrize("point", POINTS, ids=lambda p: p.id)
def test_the_recorded_command_is_the_one_that_runs(point: h.Point) -> None:
    assert point.command == command_line(point)
    words = shlex.split(point.command)
    assert words[:3] == ["python", "-m", "generator"] and words[3:] == h.arguments(point)
    assert words[words.index("--gpu") + 1] == point.gpu
    assert words[words.index("--steps") + 1] == "all"  # the figure is printed at the end
    assert words[words.index("--json") + 1] == f"as-written-{point.id}.json"
    module = words[words.index("-m", 3) + 1]
    assert module.startswith("generator.validate.as_written.") and find_spec(module)


@pytest.mark.parametrize("point", POINTS, ids=lambda p: p.id)
def test_the_arguments_say_the_points_setting(point: h.Point) -> None:
    """Each point's arguments against its held_out.json configuration."""
    held = {p.id: p for p in reference_runs.held_out()}[point.id]
    args = list(point.args)
    if point.source == "hf-guide":
        batch = int(args[args.index("--per-device-train-batch-size") + 1])
        accumulate = int(args[args.index("--gradient-accumulation-steps") + 1]) \
            if "--gradient-accumulation-steps" in args else 1
        assert (batch * accumulate, accumulate) == (held.batch_size, held.micro_batches)
        assert ("--fp16" in args) == (held.precision == "amp-fp16")
        assert ("--gradient-checkpointing" in args) == held.checkpointing
        assert ("--adam8bit" in args) == ("8bit" in held.optimizer)
    elif point.source == "scherrmann-notebook":
        assert args[args.index("--batch-size") + 1] == str(held.batch_size)
        assert args[args.index("--seq-len") + 1] == str(held.seq_len)
    else:
        fabric = {"32-true": "fp32", "16-mixed": "amp-fp16", "bf16-mixed": "amp-bf16",
                  "16-true": "fp16", "bf16-true": "bf16"}
        assert fabric[args[args.index("--precision") + 1]] == held.precision


def test_each_source_compares_what_it_printed_with_its_figure() -> None:
    rules = {p.source: (p.rule.report, p.rule.unit, p.context_bytes) for p in POINTS}
    assert rules == {"hf-guide": ("reserved_bytes", "MiB", 1343 * MIB),
                     "scherrmann-notebook": ("allocated_bytes", "MiB", 0),
                     "raschka-mixed-precision": ("reserved_bytes", "GB", 0)}


@pytest.mark.parametrize(("source", "printed", "expected"), [
    ("hf-guide", "GPU memory occupied: 420 MB.\nTime: 1.00\nGPU memory occupied: 14949 MB.\n",
     14949 * MIB),
    ("scherrmann-notebook", "Actual maximum allocated memory by tensors: 10562.79 MiB\n",
     round(10562.79 * MIB)),
    ("raschka-mixed-precision", "Memory used: 5.37 GB\nTest accuracy 50.00%\n", 5_370_000_000),
])
def test_the_figure_printed_is_read_as_the_source_prints_it(source: str, printed: str,
                                                             expected: int) -> None:
    rule = next(p.rule for p in POINTS if p.source == source)
    assert rule.read(printed) == expected  # the last one printed
    assert rule.read("the script stopped before its figure\n") is None


def test_the_comparison_adds_the_context_the_source_read_where_it_printed_nvidia_smi() -> None:
    guide, notebook = (next(p for p in POINTS if p.source == s)
                       for s in ("hf-guide", "scherrmann-notebook"))
    report = {"allocated_bytes": 9000 * MIB, "reserved_bytes": 12000 * MIB}
    row = h.compare(guide, report, 12420 * MIB)
    assert row["estimated_bytes"] == (12000 + 1343) * MIB
    assert row["ratio"] == pytest.approx(13343 / 14949)
    assert row["printed_ratio"] == pytest.approx(12420 / 14949)
    row = h.compare(notebook, report, None)
    assert row["estimated_bytes"] == 9000 * MIB and row["printed_ratio"] is None
    assert row["ratio"] == pytest.approx(9000 / 10562.79, rel=1e-6)


def test_a_point_of_another_source_or_an_unknown_unit_is_refused() -> None:
    moved = copy.deepcopy(DATA)
    moved["sources"][1]["points"].append(moved["sources"][0]["points"][0])
    with pytest.raises(ValueError, match="is a point of hf-guide"):
        h.points(moved)
    bad = copy.deepcopy(DATA)
    bad["sources"][0]["compare"]["unit"] = "GiB"
    with pytest.raises(ValueError, match="unit 'GiB'"):
        h.points(bad)


def test_a_point_is_recorded_once_and_never_again() -> None:
    data = h.recorded(copy.deepcopy(DATA), POINTS[0].id, {"commit": "abc"})
    assert h.points(data)[0].estimate == {"commit": "abc"}
    with pytest.raises(ValueError, match="estimated already, at abc: never again"):
        h.recorded(data, POINTS[0].id, {"commit": "def"})
    with pytest.raises(ValueError, match="no point nothing"):
        h.recorded(data, "nothing", {})


def _estimate(point_id: str) -> dict:
    return {"ran_at": "now", "exit_status": 0, "printed_bytes": 100 * MIB,
            "report": {"allocated_bytes": 100 * MIB, "reserved_bytes": 110 * MIB}}


def test_validate_runs_the_pending_points_once_and_records_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = copy.deepcopy(DATA)
    data["sources"][0]["points"][0]["estimate"] = {"commit": "old", **_estimate("x")}
    path = tmp_path / h.AS_WRITTEN
    path.write_text(json.dumps(data), encoding="utf-8")
    ran = []

    def run(point, folder, **_):
        ran.append(point.id)
        if point.id == POINTS[-1].id:
            raise RuntimeError(f"{point.id}: exit status 1: boom")
        return _estimate(point.id)

    monkeypatch.setattr(h, "run", run)
    monkeypatch.setattr(h, "clean_commit", lambda root: "c0ffee")
    with pytest.raises(RuntimeError, match=r"(?s)1 as-written point.*boom"):
        h.estimate_pending(tmp_path / "work", path, say=lambda text: None)
    assert ran == [p.id for p in POINTS[1:]]  # the one estimated already never ran again
    found = {p.id: p.estimate for p in h.points(h.load(path))}
    assert found[POINTS[0].id]["commit"] == "old"
    assert all(found[p.id]["commit"] == "c0ffee" for p in POINTS[1:-1])
    assert found[POINTS[-1].id] is None  # a failed run records nothing
    ran.clear()
    monkeypatch.setattr(h, "run", lambda point, folder, **_: (ran.append(point.id),
                                                              _estimate(point.id))[1])
    rows = h.estimate_pending(tmp_path / "again", path, say=lambda text: None)
    assert ran == [POINTS[-1].id] and len(rows) == 13


def test_as_written_runs_only_when_named() -> None:
    assert "as-written" in validate.CHECKS and "as-written" not in validate.DEFAULT_CHECKS
    assert _checks("as-written") == ("as-written",)


def test_the_simulated_gpu_profiles_without_the_cuda_activity() -> None:
    """The notebook trains inside torch.profiler.profile(activities=[CPU, CUDA],
    with_stack=True): on the simulated GPU the CUDA activity and the Python stacks are left
    out, and the profiler is as it was after."""
    before = torch.profiler.profiler._KinetoProfile.__init__
    with g.simulated_gpu("RTX 3090"):
        with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                                    profile_memory=True, with_stack=True) as prof:
            torch.ones(4, device="cuda").sum()
        assert prof.activities == {ProfilerActivity.CPU} and prof.profile_memory
        assert not prof.with_stack
    assert torch.profiler.profiler._KinetoProfile.__init__ is before
