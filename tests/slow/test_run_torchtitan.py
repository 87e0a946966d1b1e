"""torchtitan's own trainer (`python -m torchtitan.train`, through
generator/validate/as_written/torchtitan_train.py and its shipped tokenizer and data set)
run by `python -m generator run --gpus 2` as rank 0 of a two-GPU FSDP2 job: its device mesh,
fully_shard with its mixed-precision policy, its selective activation checkpointing, its
meta-device initialization and its dataloader, on the simulated GPU, to its end. Its tiny
`debugmodel` flavor: the 8B runs are the held-out points' (held_out_torchtitan.json)."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import pytest
from conftest import run_cli

from generator.validate import held_out_torchtitan

VERSION = "0.2.2"  # the version the held-out commands run (as_written/torchtitan_train.py)


def _installed() -> str | None:
    try:
        return metadata.version("torchtitan")
    except metadata.PackageNotFoundError:
        return None


pytestmark = pytest.mark.skipif(
    _installed() != VERSION,
    reason=f"torchtitan {VERSION} is not installed (found: {_installed()}); it is no "
           "dependency of the test extra: `pip install -e '.[torchtitan]'`")


def test_torchtitan_s_trainer_runs_as_rank_zero_of_two_simulated_gpus(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_cli(["run", "--gpu", "H100", "--gpus", "2", "--steps", "all", "--json", report,
                    "-m", held_out_torchtitan.load()["module"], "--model.flavor", "debugmodel",
                    "--training.local_batch_size", "2", "--training.seq_len", "256",
                    "--activation_checkpoint.mode", "selective",
                    "--activation_checkpoint.selective_ac_option", "op",
                    "--training.steps", "3"], tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "rank 0 of 2, each figure one GPU's" in done.stdout
    data = json.loads(report.read_text())
    # one step each: the optimizers' container steps each model part's optimizer
    assert data["gpus"] == 2 and len(data["steps"]) == 3 and data["verdict"] == "yes"
