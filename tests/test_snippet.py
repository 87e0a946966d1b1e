"""The AMP code the site shows runs, on the CPU, and learns."""

import math
import runpy
from pathlib import Path

import torch

SNIPPET = Path(__file__).resolve().parent.parent / "templates" / "article" / "amp_training.py"


def test_published_snippet_runs_and_learns(capsys):
    namespace = runpy.run_path(str(SNIPPET))
    assert "loss after 20 steps" in capsys.readouterr().out
    loss = namespace["loss"].item()
    assert math.isfinite(loss) and loss < math.log(10)  # below chance after 20 steps


def test_snippet_uses_the_current_api():
    code = SNIPPET.read_text()
    assert "torch.amp.autocast(" in code and "torch.amp.GradScaler(" in code
    assert "torch.cuda.amp" not in code


def test_snippet_works_with_fp16_loss_scaling_too(monkeypatch, capsys):
    # The GPU path (fp16 + an enabled GradScaler), exercised on the CPU.
    code = SNIPPET.read_text().replace(
        "dtype = torch.float16 if device == \"cuda\" else torch.bfloat16", "dtype = torch.float16")
    namespace: dict = {}
    exec(compile(code, str(SNIPPET), "exec"), namespace)
    assert namespace["scaler"].is_enabled()
    assert torch.isfinite(namespace["loss"]).item()
