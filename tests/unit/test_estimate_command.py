"""The `estimate` command's questions beyond one estimate, run in this process: the largest
batch that fits (--largest-batch), the levers (--levers), and --json. Here the estimate is
a made-up one whose figures are known (a fixed part and a part per sample), so that the
command's logic and words are checked in milliseconds; tests/slow/test_estimate_questions.py
holds the same questions against real estimates."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from generator.plan.fit import DOES_NOT_FIT
from generator.errors import ConfigError
from generator.experiment import Experiment
from generator.results.shapes import CATEGORIES

MIB = 2**20


def made_up_peak(exp: Experiment) -> int:
    """1 MiB fixed, 100 KiB a sample (less with checkpointing or micro-batches)."""
    per_sample = 100 * 1024 // (2 if exp.checkpointing else 1)
    return MIB + per_sample * exp.batch_size // exp.micro_batches


@pytest.fixture
def made_up(monkeypatch: pytest.MonkeyPatch) -> list[Experiment]:
    """measure_to_result replaced by made_up_peak on the CPU (tensors alone); the masked
    logits are refused, as a model without that option would. Returns the experiments
    asked for."""
    asked: list[Experiment] = []

    def measure(exp: Experiment) -> dict:
        asked.append(exp)
        if exp.logits == "masked":
            raise ConfigError("logits = 'masked' works with masked-LM models")
        peak = made_up_peak(exp)
        categories = {c: 0 for c in CATEGORIES} | {"activations": peak}
        return {"key": exp.key, "experiment": exp.to_dict(), "backend": exp.backend,
                "error": None, "parameter_count": 1000,
                "trainable_parameter_count": 1000, "attention": exp.attention,
                "peak_bytes": peak, "live_at_peak_bytes": categories,
                "category_max_bytes": categories, "allocator": None, "notes": [],
                "inputs": "tokens"}
    monkeypatch.setattr("generator.measure.run.measure_to_result", measure)
    return asked


CPU = ["tiny", "-s", "16", "--device", "cpu"]


def test_largest_batch_says_each_batch_then_the_edge(cli, project: Path, made_up) -> None:
    # 1 MiB + 100 KiB × b/2 <= 3 MiB (a micro-batch at a time): b <= 40.96, in steps of two
    proc = cli(["estimate", *CPU, "--micro-batches", "2", "--gpu-memory", "3MiB",
                "--largest-batch"], project)
    assert proc.returncode == 0, proc.stderr
    assert "the largest batch that fits in 3.00 MiB" in proc.stdout
    assert "a batch fits when the peak of the step's tensors is within 3.00 MiB" in proc.stdout
    rows = re.findall(r"^ +([\d,]+) +[\d,.]+ MiB  (fits|does not fit)$", proc.stdout,
                      re.MULTILINE)
    assert len(rows) == len(made_up)  # each batch estimated once, its estimate shown again
    assert all((int(b) <= 40) == (verdict == "fits") for b, verdict in rows)
    assert "largest batch that fits in 3.00 MiB: 40 (batch 42 does not)" in proc.stdout
    assert "tiny · batch 40 · seq 16 · fp32 · adamw · gradient accumulation" in proc.stdout
    assert made_up[0].batch_size == 2  # the first batch tried: one per micro-batch


def test_largest_batch_starts_from_the_batch_given(cli, project: Path, made_up) -> None:
    proc = cli(["estimate", *CPU, "-b", "64", "--gpu-memory", "3MiB", "--largest-batch"],
               project)
    assert proc.returncode == 0, proc.stderr
    assert made_up[0].batch_size == 64
    assert "largest batch that fits in 3.00 MiB: 20 (batch 21 does not)" in proc.stdout


def test_largest_batch_when_none_fits(cli, project: Path) -> None:
    """Modelling CUDA a batch needs its reserved peak and a CUDA context: 1 KiB holds none.
    (A real estimate: one is enough.)"""
    proc = cli(["estimate", "tiny", "-s", "16", "--gpu-memory", "1KiB", "--largest-batch"],
               project)
    assert proc.returncode == DOES_NOT_FIT, proc.stderr  # the answer is a batch that does not
    assert "no batch fits in 1.00 KiB: batch 1 needs" in proc.stdout
    assert "reserved peak plus a CUDA context" in proc.stdout
    assert "tiny · batch 1 · seq 16" in proc.stdout and "fits in 1.00 KiB: no" in proc.stdout


def test_levers_each_on_top_of_the_step_then_together(cli, project: Path, made_up) -> None:
    proc = cli(["estimate", *CPU, "-b", "8", "--gpu-memory", "1.5MiB", "--levers"], project)
    assert proc.returncode == DOES_NOT_FIT, proc.stderr  # the step asked for does not fit
    base = made_up_peak(made_up[0])
    assert "levers, each alone on top of this step (peak of the step's tensors and its " \
           "change, whether it then fits):" in proc.stdout
    ckpt = made_up_peak(Experiment(model="tiny", batch_size=8, seq_len=16, checkpointing=True))
    assert (f"  activation checkpointing: tensors {ckpt / MIB:,.1f} MiB "
            f"({(ckpt - base) / MIB:+,.1f} MiB, {(ckpt - base) / base:+.1%}) · yes\n"
            "      cost: backward runs each block's forward again") in proc.stdout
    assert "  AMP bf16: tensors 1.8 MiB (+0.0 MiB, +0.0%) · no\n" in proc.stdout  # no saving
    refused = "  logits at masked positions only: not estimated: logits = 'masked' works"
    assert refused in proc.stdout
    assert proc.stdout.index(refused) > proc.stdout.index("gradient accumulation, 4 micro")
    # the best of each kind that saved memory: four micro-batches, not two
    together = made_up[-1]
    assert (together.checkpointing, together.micro_batches) == (True, 4)
    assert "  together: activation checkpointing + gradient accumulation, 4 micro-batches " \
           "of 2: " in proc.stdout


def test_json_is_one_object_with_the_rows(cli, project: Path, made_up) -> None:
    proc = cli(["estimate", *CPU, "-b", "8", "--gpu-memory", "1.5MiB", "--levers", "--json"],
               project)
    assert proc.returncode == DOES_NOT_FIT, proc.stderr
    answer = json.loads(proc.stdout)  # nothing else on stdout
    base = made_up_peak(made_up[0])
    assert answer["result"]["peak_bytes"] == base
    assert answer["fits"] == {"word": "no", "fits": False, "needed_bytes": base,
                              "spare_bytes": 3 * MIB // 2 - base, "memory_bytes": 3 * MIB // 2,
                              "reason": f"{(base - 3 * MIB // 2) / 1024:.2f} KiB short "
                                        "(the tensors alone)", "gpu": None}
    rows = {row["lever"]: row for row in answer["levers"]}
    assert rows["checkpointing"]["title"] == "activation checkpointing"
    assert rows["checkpointing"]["peak_change_bytes"] == -8 * 50 * 1024
    assert rows["checkpointing"]["reserved_change_bytes"] is None  # the CPU: no allocator
    assert rows["masked-logits"]["refused"].startswith("logits = 'masked'")
    assert answer["together"]["levers"] == ["checkpointing", "accumulation-x4"]

    proc = cli(["estimate", *CPU, "--gpu-memory", "3MiB", "--largest-batch", "--json"], project)
    assert proc.returncode == 0, proc.stderr  # a batch fits: the answer is one that does
    search = json.loads(proc.stdout)
    assert (search["largest_batch"], search["capped"]) == (20, False)
    tried = {row["batch_size"]: row["fits"] for row in search["tried"]}
    assert tried[20] and not tried[21]
    assert search["result"]["experiment"]["batch_size"] == 20


def test_json_of_one_estimate_is_the_stored_result(cli, project: Path) -> None:
    """A real estimate: --json gives what the results store keeps."""
    from generator.measure.run import measure_to_result

    proc = cli(["estimate", "tiny", "-b", "2", "-s", "16", "--gpu-memory", "1KiB", "--json"],
               project)
    assert proc.returncode == DOES_NOT_FIT, proc.stderr
    answer = json.loads(proc.stdout)
    same = measure_to_result(Experiment(model="tiny", batch_size=2, seq_len=16))
    assert answer["result"]["key"] == same["key"] == "tiny-b2-s16-fp32-adamw-estimate"
    assert answer["result"]["peak_bytes"] == same["peak_bytes"]
    assert answer["result"]["allocator"] == same["allocator"]
    assert (answer["fits"]["memory_bytes"], answer["fits"]["word"]) == (1024, "no")
    assert answer["fits"]["needed_bytes"] == \
        same["allocator"]["peak_reserved_bytes"] + same["allocator"]["context_bytes"][1]


@pytest.mark.parametrize("command, said", [
    (["estimate", "tiny", "-b", "2", "--seq-len", "16"], "interrupted"),
    (["measure"], "interrupted: results measured so far are kept; run again to finish")])
def test_ctrl_c_says_what_is_kept(cli, tmp_path, monkeypatch, command: list, said: str) -> None:
    """An estimate stores nothing, so Ctrl-C there claims nothing kept; measure keeps what it
    stored."""
    from generator.cli import commands

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(commands, command[0], interrupted)
    run = cli(command, tmp_path)
    assert (run.returncode, run.stderr.strip()) == (130, said)


def test_the_tables_columns_widen_for_huge_sizes_instead_of_running_together() -> None:
    """A size of 2⁶³ bytes is wider than the usual column: its column widens and the next
    stays apart (they ran together: '…0 MiB8,796,…'), the figures right-aligned."""
    from generator.cli.estimate import columns, mib

    huge, small = mib(2**63 - 1), mib(3 * 2**20)
    lines = columns([("category", "live at peak", "own maximum"),
                     ("activations", huge, huge), ("parameters", small, small)])
    assert len({len(line) for line in lines}) == 1  # right-aligned to one edge
    assert lines[1].split() == ["activations", *huge.split(), *huge.split()]
    assert f"{huge}  {huge}" in lines[1]
    assert lines[2].endswith(f"  {small}") and lines[2].startswith("parameters ")
    calls = columns([("allocated peak", huge, "torch.cuda.max_memory_allocated()"),
                     ("reserved peak", small, "torch.cuda.max_memory_reserved()")],
                    indent=2, words_last=True)
    assert calls[0].index("torch") == calls[1].index("torch")
    assert f"{huge}   torch" in calls[0]
