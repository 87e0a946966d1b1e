"""The scale page says why, under tensor parallelism, a GPU holds more gradient than parameter
bytes (site/pages/scale/tensor_parallel.tp_gradients): transformers' plan splits the token
embeddings by vocabulary (embedding_rowwise), yet DTensor computes their gradient whole,
replicated, from token ids that every rank holds whole. Two real processes (gloo, CPU) show it
on a tiny Hugging Face LLaMA split by the project's own code
(generator/measure/training/tensor_parallel.py): each rank's embedding weight is a Shard(0)
DTensor of half the vocabulary, its gradient a Replicate DTensor of all of it, while the split
linear layers' gradients keep their weights' layout."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

TP = 2
VOCAB, HIDDEN = 256, 64


def _rank(rank: int, init_file: str) -> None:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Replicate, Shard
    from transformers import AutoModelForCausalLM, LlamaConfig

    from generator.measure.training.tensor_parallel import apply_tensor_parallel

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=TP)
    try:
        mesh = init_device_mesh("cpu", (TP,), mesh_dim_names=("tp",))
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_config(LlamaConfig(
            vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=False,
            max_position_embeddings=64))
        model.train()
        apply_tensor_parallel(model, mesh)
        ids = torch.randint(0, VOCAB, (2, 16), generator=torch.Generator().manual_seed(1))
        model(input_ids=ids, labels=ids).loss.backward()

        weight = model.model.embed_tokens.weight
        assert isinstance(weight, DTensor) and weight.placements == (Shard(0),)
        assert weight.to_local().shape == (VOCAB // TP, HIDDEN)
        grad = weight.grad
        assert isinstance(grad, DTensor) and grad.placements == (Replicate(),)
        local = grad.to_local()
        assert local.shape == (VOCAB, HIDDEN)
        assert local.untyped_storage().nbytes() == VOCAB * HIDDEN * 4  # the whole vocabulary
        # a split linear layer's gradient keeps its weight's layout and size
        q = model.model.layers[0].self_attn.q_proj.weight
        assert q.grad.placements == q.placements
        assert q.grad.to_local().untyped_storage().nbytes() == \
            q.to_local().untyped_storage().nbytes()
    finally:
        dist.destroy_process_group()


@pytest.mark.slow
def test_a_vocabulary_split_embedding_keeps_a_whole_gradient_on_each_rank(tmp_path) -> None:
    mp.spawn(_rank, args=(str(tmp_path / "init"),), nprocs=TP, join=True)
