"""`python -m generator run` on the shipped from_pretrained example
(generator/examples/from_pretrained_loop.py): a model of the shipped catalogue loaded by its
Hub id with no weights on this machine; an 8B model on a simulated H100 whose 16 GB of bf16
weights never reach host memory; and the check of truth: the same script run for real on
this CPU, from a tiny checkpoint written here, against `run --device cpu`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import REPO_ROOT, cli_env, run_cli
from torch.profiler import ProfilerActivity, profile, record_function

from generator.measure import quiet_profiler
from generator.measure.backends.cpu import allocator_peak_bytes
from generator.simulate.pretrained import ON_THE_SCRIPTS_THREAD
from generator.simulate.runner import Script

EXAMPLE = REPO_ROOT / "generator" / "examples" / "from_pretrained_loop.py"
WINDOW = "generator::script"
#: The process's own largest resident set, printed as it ends (Linux: kilobytes).
MEASURED = ("import resource, sys\nfrom generator.cli.main import main\ncode = main(sys.argv[1:])\n"
            "print('max rss kB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
            "file=sys.stderr)\nsys.exit(code)")


def test_the_example_loads_a_shipped_model_by_its_hub_id(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_cli(["run", "--gpu", "RTX 4090", "--json", report, EXAMPLE, "--steps", "2"],
                   tmp_path)
    assert done.returncode == 0, done.stderr
    assert "step 1: loss 0.0000" in done.stdout and "max memory allocated:" in done.stdout
    data = json.loads(report.read_text())
    assert len(data["steps"]) == 2 and data["verdict"] == "yes"
    # Qwen2.5-0.5B in bf16: weights, gradients and AdamW's two states, 2 bytes each
    assert data["allocated_bytes"] > 4 * 2 * 494_000_000


def test_an_8b_model_runs_without_its_weights_in_host_memory(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, "run", "--gpu", "H100", "--json", str(report),
         str(EXAMPLE), "--model", "meta-llama/Llama-3.1-8B", "--batch-size", "1",
         "--seq-len", "128", "--steps", "2"],
        cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=900,
        stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(report.read_text())
    weights = 2 * 8_030_261_248  # bf16
    assert data["allocated_bytes"] > 4 * weights  # weights, gradients, AdamW's states
    max_rss = int(done.stderr.split("max rss kB ")[1].split()[0]) * 1024
    assert max_rss < 4 * 10**9 < weights, max_rss


def test_the_simulation_of_the_cpu_against_a_real_run_on_it(tmp_path: Path,
                                                            monkeypatch) -> None:
    """Within 1 % (no constant tuned to it): a tiny Llama written with save_pretrained,
    loaded in bf16 by the example. transformers loads a checkpoint on a pool of threads,
    whose allocations the profiler's window on the script's thread does not see; the
    simulation loads it on the script's thread, so the real run does too."""
    from transformers import AutoModelForCausalLM, LlamaConfig

    config = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=128)
    AutoModelForCausalLM.from_config(config).save_pretrained(tmp_path / "tiny")
    args = ("--model", str(tmp_path / "tiny"), "--steps", "3", "--seq-len", "32",
            "--batch-size", "2")
    for name, value in ON_THE_SCRIPTS_THREAD.items():
        monkeypatch.setenv(name, value)
    with quiet_profiler(), profile(activities=[ProfilerActivity.CPU],
                                   profile_memory=True) as prof:
        with record_function(WINDOW):
            assert Script(str(EXAMPLE), args).run() == 0
    real = allocator_peak_bytes(prof, WINDOW)
    report = tmp_path / "report.json"
    done = run_cli(["run", "--device", "cpu", "--steps", "all", "--json", report, EXAMPLE,
                    *args], tmp_path)
    assert done.returncode == 0, done.stderr
    simulated = json.loads(report.read_text())["allocated_bytes"]
    assert abs(simulated - real) <= 0.01 * real, (simulated, real)
