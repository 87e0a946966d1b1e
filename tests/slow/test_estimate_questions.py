"""The `estimate` command's questions held against estimates made here independently: the
largest batch found is an edge the estimates agree with, a lever's row is that lever's own
estimate (in text and in --json). Tiny models, but a dozen estimates each: slow."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from generator.experiment import Experiment
from generator.measure.run import measure_to_result


@pytest.fixture(scope="module")
def checkpointed() -> dict:
    """Checkpointing's own estimate at the levers' size (batch 4, sequence 16), made once
    here for the text's lever line and the JSON's."""
    return measure_to_result(Experiment(model="tiny", batch_size=4, seq_len=16, device="cpu",
                                        checkpointing=True))


def test_largest_batch_is_an_edge_the_estimates_agree_with(cli, project: Path) -> None:
    """Tensors alone (--device cpu), two micro-batches: the answer and the batch after it,
    estimated again here, fall either side of the budget; the answer's estimate follows."""
    proc = cli(["estimate", "tiny", "-s", "16", "--device", "cpu", "--micro-batches", "2",
                "--gpu-memory", "16MiB", "--largest-batch"], project)
    assert proc.returncode == 0, proc.stderr
    found = re.search(r"^largest batch that fits in 16\.00 MiB: (\d+) \(batch (\d+) does not\)$",
                      proc.stdout, re.MULTILINE)
    assert found, proc.stdout
    largest, after = int(found.group(1)), int(found.group(2))
    assert largest % 2 == 0 and after == largest + 2
    assert f"tiny · batch {largest} · seq 16 · fp32" in proc.stdout
    assert "fits in 16.00 MiB: yes" in proc.stdout

    def peak(batch: int) -> int:
        return measure_to_result(Experiment(model="tiny", backend="estimate", batch_size=batch,
                                            seq_len=16, device="cpu",
                                            micro_batches=2))["peak_bytes"]
    assert peak(largest) <= 16 * 2**20 < peak(after)


def test_levers_are_estimated_on_top_of_the_step(cli, project: Path,
                                                 checkpointed: dict) -> None:
    """Each lever's line is that lever's own estimate on top of the step (checked here for
    checkpointing), levers that do not apply are absent (no allocator to expand on the
    CPU), and those that saved memory are tried together."""
    proc = cli(["estimate", "tiny", "-b", "4", "-s", "16", "--device", "cpu", "--levers"],
               project)
    assert proc.returncode == 0, proc.stderr
    found = re.search(r"^  activation checkpointing: tensors ([\d,.]+) MiB "
                      r"\(-[\d,.]+ MiB, -[\d.]+%\)$", proc.stdout, re.MULTILINE)
    assert found, proc.stdout
    alone = checkpointed["peak_bytes"]
    assert float(found.group(1).replace(",", "")) == pytest.approx(alone / 2**20, abs=0.05)
    assert "  SDPA attention: " in proc.stdout and "expandable" not in proc.stdout
    assert re.search(r"^  together: activation checkpointing \+ .+: tensors [\d,.]+ MiB \(-",
                     proc.stdout, re.MULTILINE), proc.stdout


def json_of(cli, project: Path, *args: str) -> dict:
    """The command's stdout, which must be one JSON object and nothing else."""
    proc = cli(["estimate", "tiny", *args, "--json"], project)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_json_of_the_search_and_the_levers_holds_their_figures(cli, project: Path,
                                                               checkpointed: dict) -> None:
    search = json_of(cli, project, "-s", "16", "--device", "cpu", "--gpu-memory", "16MiB",
                     "--largest-batch")
    assert search["largest_batch"] > 1 and not search["capped"]
    assert search["result"]["experiment"]["batch_size"] == search["largest_batch"]
    tried = {row["batch_size"]: row for row in search["tried"]}
    assert tried[search["largest_batch"]]["fits"] and not tried[search["largest_batch"] + 1]["fits"]
    assert tried[search["largest_batch"] + 1]["word"] == "no"  # the tensors alone: yes or no

    levers = json_of(cli, project, "-b", "4", "-s", "16", "--device", "cpu", "--levers")
    rows = {row["lever"]: row for row in levers["levers"]}
    ckpt = rows["checkpointing"]
    assert ckpt["title"] == "activation checkpointing" and ckpt["refused"] is None
    assert ckpt["changes"] == {"checkpointing": True}
    assert rows["accumulation-x4"]["changes"] == {"micro_batches": 4}
    alone = checkpointed
    assert ckpt["peak_bytes"] == alone["peak_bytes"] and ckpt["reserved_bytes"] is None
    assert ckpt["peak_change_bytes"] == alone["peak_bytes"] - levers["result"]["peak_bytes"]
    assert "checkpointing" in levers["together"]["levers"]
    assert levers["together"]["changes"]["checkpointing"] is True
