"""Real training steps on the CPU: the zoo's small models learn with finite gradients, and
the AMP code the explainer shows runs and learns (fp16 with an enabled GradScaler too)."""

from __future__ import annotations

import math
import runpy

import pytest
import torch
from conftest import REPO_ROOT

from generator.experiment import Experiment
from generator.measure.models import MODELS, resolve_model
from generator.measure.models.bert import BERT_TINY, BertConfig, build_bert
from generator.measure.models.gpt2 import GPT2Config, build_gpt2
from generator.measure.training.step import Trainer

CPU = torch.device("cpu")
SNIPPET = REPO_ROOT / "templates" / "article" / "amp_training.py"


def _step_with_grads(workload, batch_size: int, seq_len: int) -> torch.Tensor:
    inputs, target = workload.make_batch(batch_size, seq_len, CPU)
    loss = workload.loss_fn(workload.model(*inputs), target)
    assert torch.isfinite(loss)
    loss.backward()
    for name, param in workload.model.named_parameters():
        assert param.grad is not None, name
        assert torch.isfinite(param.grad).all(), name
    return loss


@pytest.mark.parametrize("attention", ["eager", "sdpa"])
def test_tiny_step_finite_loss_and_grads(attention: str) -> None:
    torch.manual_seed(0)
    _step_with_grads(build_bert(BertConfig(**{**BERT_TINY.__dict__, "attention": attention})),
                     2, 32)


def test_gpt2_small_config_step_on_cpu() -> None:
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=500, hidden_size=32, num_layers=2, num_heads=4,
                        intermediate_size=64, max_position_embeddings=64)
    _step_with_grads(build_gpt2(config), 2, 16)


def test_llama_tiny_trains_for_real() -> None:
    _step_with_grads(resolve_model("llama-tiny").build(), 2, 16)


def test_a_real_resnet_step_gives_a_finite_loss() -> None:
    torch.manual_seed(0)
    exp = Experiment(model="resnet50", batch_size=2, seq_len=32, backend="cpu", optimizer="sgd")
    trainer = Trainer.create(MODELS["resnet50"].build(), exp, device=CPU)
    first = trainer.step()
    assert math.isfinite(first) and first > 0
    assert trainer.optimizer.state  # the optimizer stepped
    assert math.isfinite(trainer.step())


# --------------------------------------------------------------------------- the published snippet


def test_published_snippet_runs_and_learns(capsys: pytest.CaptureFixture[str]) -> None:
    namespace = runpy.run_path(str(SNIPPET))
    assert "loss after 20 steps" in capsys.readouterr().out
    loss = namespace["loss"].item()
    assert math.isfinite(loss) and loss < math.log(10)  # below chance after 20 steps


def test_snippet_works_with_fp16_loss_scaling_too(capsys: pytest.CaptureFixture[str]) -> None:
    # The GPU path (fp16 + an enabled GradScaler), exercised on the CPU.
    choice = ('dtype = torch.bfloat16 if device == "cpu" or torch.cuda.is_bf16_supported() '
              'else torch.float16')
    code = SNIPPET.read_text(encoding="utf-8")
    assert choice in code
    namespace: dict = {}
    exec(compile(code.replace(choice, "dtype = torch.float16"), str(SNIPPET), "exec"), namespace)
    assert namespace["scaler"].is_enabled()
    assert torch.isfinite(namespace["loss"]).item()
