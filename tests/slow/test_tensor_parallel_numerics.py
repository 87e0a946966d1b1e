"""A model split by tensor parallelism computes what the whole model computes: two real
processes (gloo, CPU), the same seeded weights, the loss and the gradients' norm of the split
model against an unsplit copy taken before the split."""

from __future__ import annotations

import copy
import math

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

TP = 2


def _build(name: str) -> nn.Module:
    torch.manual_seed(0)  # the same weights on every rank (the split scatters rank 0's anyway)
    if name == "llama-tiny":
        from generator.measure.models import resolve_model
        return resolve_model("llama-tiny").build().model
    if name == "gpt2-small-config":
        from generator.measure.models.gpt2 import GPT2Config, build_gpt2
        return build_gpt2(GPT2Config(vocab_size=500, hidden_size=32, num_layers=2, num_heads=4,
                                     intermediate_size=64, max_position_embeddings=64,
                                     embedding_dropout=0.0, attention_dropout=0.0,
                                     residual_dropout=0.0)).model
    from transformers import AutoModelForCausalLM, LlamaConfig, Qwen2Config
    config = Qwen2Config if name == "hf-qwen2-tiny" else LlamaConfig  # Qwen2: q/k/v biases
    model = AutoModelForCausalLM.from_config(config(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True,
        max_position_embeddings=64))
    model.train()
    return model


def _loss_and_grad_norm(model: nn.Module, ids: torch.Tensor) -> tuple[float, float]:
    from torch.distributed.tensor import DTensor

    if hasattr(model, "model"):  # Hugging Face: its own shifted loss
        loss = model(input_ids=ids, labels=ids).loss
    else:
        logits = model(ids)[:, :-1]
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten())
    loss.backward()
    # GPT-2's qkv rows are permuted by the split: a norm does not see the order.
    square = sum(float((p.grad.full_tensor() if isinstance(p.grad, DTensor) else p.grad)
                       .double().pow(2).sum()) for p in model.parameters())
    return float(loss), math.sqrt(square)


def _rank(rank: int, init_file: str, names: list[str]) -> None:
    from torch.distributed.device_mesh import init_device_mesh

    from generator.measure.training.tensor_parallel import apply_tensor_parallel, tp_problems

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=TP)
    try:
        mesh = init_device_mesh("cpu", (TP,), mesh_dim_names=("tp",))
        for name in names:
            model = _build(name)
            whole = copy.deepcopy(model)  # the full weights, before the split
            assert tp_problems(model, TP) == [], name
            apply_tensor_parallel(model, mesh)
            ids = torch.randint(0, model.config.vocab_size, (2, 16),
                                generator=torch.Generator().manual_seed(1))  # same on both
            expected_loss, expected_norm = _loss_and_grad_norm(whole, ids)
            loss, norm = _loss_and_grad_norm(model, ids)
            assert abs(loss - expected_loss) < 1e-5, (name, rank, loss, expected_loss)
            assert abs(norm - expected_norm) < 1e-5 * max(1.0, expected_norm), \
                (name, rank, norm, expected_norm)
    finally:
        dist.destroy_process_group()


@pytest.mark.slow
def test_split_models_compute_the_whole_models_loss_and_gradients(tmp_path) -> None:
    mp.spawn(_rank, args=(str(tmp_path / "init"),
                          ["llama-tiny", "gpt2-small-config", "hf-llama-tiny",
                           "hf-qwen2-tiny"]),
             nprocs=TP, join=True)
