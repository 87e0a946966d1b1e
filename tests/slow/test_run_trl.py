"""TRL's SFTTrainer, unmodified (generator/examples/trl_sft.py): a LoRA fine-tune of
Llama-3.2-1B loaded by hub id from its configuration alone, on simulated GPUs, with and
without packing; a batch an RTX 3060 cannot hold ends with exit status 3; and a tiny model's
real run on this CPU against `run --device cpu` (script_runs.py), within 1 %."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from conftest import REPO_ROOT, run_cli
from script_runs import assert_cpu_agrees, run_on_a_gpu

from generator.plan.fit import DOES_NOT_FIT

SFT = REPO_ROOT / "generator" / "examples" / "trl_sft.py"
pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(p) is None for p in ("trl", "peft", "datasets")),
    reason="the example needs trl, peft and datasets (pip install -e '.[test]' has them)")


@pytest.mark.parametrize("packing", [False, True], ids=["padded", "packed"])
def test_sft_on_a_simulated_rtx_4090(packing: bool, tmp_path: Path) -> None:
    args = ("--steps", "3", *(("--packing",) if packing else ()))
    stdout, data = run_on_a_gpu(tmp_path, SFT, args)
    printed = float(stdout.split("max memory allocated: ")[1].split(" MiB")[0]) * 2**20
    assert abs(printed - data["allocated_bytes"]) < 0.1 * 2**20  # the script saw our figure
    steps = data["steps"]
    # the texts' lengths vary, so the steps' peaks do: the data is the loader's own
    assert len({step["allocated_bytes"] for step in steps}) > 1 or packing
    assert data["reserved_bytes"] < 8 * 2**30  # a 1B LoRA fine-tune in bf16


def test_a_batch_an_rtx_3060_cannot_hold_exits_3(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    # 64 texts of up to 4,096 tokens in one batch: 16 GiB of checkpointed layer inputs alone
    done = run_cli(["run", "--gpu", "RTX 3060", "--steps", "1", "--json", report, SFT,
                    "--batch-size", "64", "--max-length", "4096", "--steps", "1"], tmp_path)
    assert done.returncode == DOES_NOT_FIT, done.stderr
    assert json.loads(report.read_text())["verdict"] in ("only just", "no")


def test_sft_on_the_cpu_against_a_real_run(tmp_path: Path) -> None:
    """Within 1 %: the real run loads the checkpoint on the script's thread, as the
    simulation does (a pool thread's allocations are not in the profiler's peak), and the
    simulation counts the CPU generator's states that the checkpointed layers keep."""
    from transformers import LlamaConfig, LlamaForCausalLM

    tiny = tmp_path / "tiny-llama"
    LlamaForCausalLM(LlamaConfig(
        vocab_size=503, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
    )).save_pretrained(tiny)
    assert_cpu_agrees(tmp_path, SFT, ("--model", str(tiny), "--max-length", "128",
                                      "--steps", "3", "--batch-size", "2"))
