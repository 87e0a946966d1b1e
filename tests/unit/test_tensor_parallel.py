"""Tensor parallelism (training/tensor_parallel.py) on PyTorch's fake process group: each
split Linear keeps 1/tp of its rows or columns, a step runs on the shards (real tensors and
fake ones, FSDP2 over TP on a 2-D mesh too), and the models that cannot be split say why.
That the split model computes the unsplit one's loss needs two real processes:
slow/test_tensor_parallel_numerics.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.distributed.tensor import DTensor

from generator.measure.models import resolve_model
from generator.measure.models.gpt2 import GPT2Config, build_gpt2
from generator.measure.training.tensor_parallel import (
    apply_tensor_parallel,
    meshes_outside_fake_mode,
    tp_problems,
)

CPU = torch.device("cpu")
SMALL_GPT2 = GPT2Config(vocab_size=500, hidden_size=32, num_layers=2, num_heads=4,
                        intermediate_size=64, max_position_embeddings=64)


def tiny_hf_llama(**overrides):
    """A two-layer Llama from a config (GQA: 4 heads, 2 key/value heads), tied head."""
    from transformers import AutoModelForCausalLM, LlamaConfig

    config = LlamaConfig(**{"vocab_size": 128, "hidden_size": 64, "intermediate_size": 128,
                            "num_hidden_layers": 2, "num_attention_heads": 4,
                            "num_key_value_heads": 2, "tie_word_embeddings": True,
                            "max_position_embeddings": 64, **overrides})
    model = AutoModelForCausalLM.from_config(config)
    model.train()
    return model


def builtin(name: str) -> nn.Module:
    return build_gpt2(SMALL_GPT2).model if name == "gpt2-small-config" \
        else resolve_model(name).build().model


MODELS = {"llama-tiny": lambda: builtin("llama-tiny"),
          "gpt2-small-config": lambda: builtin("gpt2-small-config"),
          "hf-llama-tiny": tiny_hf_llama}


@pytest.fixture
def world() -> Iterator[None]:
    """Rank 0 of 4 on the fake process group (collectives accepted, nothing moved)."""
    from torch.testing._internal.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=4)
    try:
        yield
    finally:
        dist.destroy_process_group()


def tp_mesh(tp: int = 2):
    from torch.distributed.device_mesh import init_device_mesh

    return init_device_mesh("cpu", (tp,), mesh_dim_names=("tp",))


def step(model: nn.Module, batch: int = 2, seq: int = 8) -> torch.Tensor:
    """Forward and backward on random ids; the logits."""
    vocab = model.config.vocab_size
    ids = torch.randint(0, vocab, (batch, seq))
    if hasattr(model, "model"):  # a Hugging Face model: its own loss
        output = model(input_ids=ids, labels=ids)
        output.loss.backward()
        return output.logits
    logits = model(ids)
    nn.functional.cross_entropy(logits.flatten(0, 1), ids.flatten()).backward()
    return logits


@pytest.mark.parametrize("name", list(MODELS))
def test_each_split_linear_keeps_a_half_and_a_step_runs(world, name: str) -> None:
    model = MODELS[name]()
    full = {n: tuple(m.weight.shape) for n, m in model.named_modules()
            if isinstance(m, nn.Linear)}  # a tied head's weight too
    assert tp_problems(model, 2) == []
    apply_tensor_parallel(model, tp_mesh(2))
    split = 0
    for module_name, module in model.named_modules():
        if not isinstance(module, nn.Linear) or not isinstance(module.weight, DTensor) \
                or all(p.is_replicate() for p in module.weight.placements):
            continue  # whole: a replicated DTensor (tensor_parallel._replicate_the_rest)
        split += 1
        rows, cols = full[module_name]
        local = tuple(module.weight.to_local().shape)
        assert local in ((rows // 2, cols), (rows, cols // 2)), module_name
    assert split >= 2 * 4  # every block's attention and MLP Linears at least
    logits = step(model)
    assert logits.shape == (2, 8, model.config.vocab_size)
    assert not isinstance(logits, DTensor)  # the head's output is gathered (or whole)
    for param_name, param in model.named_parameters():
        assert param.grad is not None, param_name
        # every parameter a DTensor, split or replicated: foreach optimizers refuse a mix
        assert isinstance(param, DTensor), param_name
    torch.optim.AdamW(model.parameters(), foreach=True).step()


def test_a_tied_head_stays_tied_to_the_vocabulary_parallel_embeddings(world) -> None:
    model = tiny_hf_llama()
    apply_tensor_parallel(model, tp_mesh(2))
    assert model.lm_head.weight is model.model.embed_tokens.weight
    assert model.lm_head.weight.to_local().shape == (64, 64)  # 128 / 2 words


def test_the_builtin_attention_computes_its_local_heads(world) -> None:
    model = builtin("llama-tiny")
    apply_tensor_parallel(model, tp_mesh(2))
    assert {block.attention.num_heads for block in model.layers} == {2}


def test_fused_qkv_rows_are_regrouped_per_rank() -> None:
    """[q; k; v] rows become [q_0; k_0; v_0; q_1; k_1; v_1]: rank r's contiguous half holds
    its own heads' queries, keys and values."""
    attention = build_gpt2(SMALL_GPT2).model.layers[0].attention  # hidden 32
    with torch.no_grad():
        attention.qkv.bias.copy_(torch.arange(96.0))
    attention.split_heads(2)
    assert (attention.num_heads, attention.hidden_size) == (2, 16)
    bias = attention.qkv.bias.tolist()
    q, k, v = range(0, 32), range(32, 64), range(64, 96)
    assert bias[:48] == [*q[:16], *k[:16], *v[:16]]
    assert bias[48:] == [*q[16:], *k[16:], *v[16:]]


@pytest.mark.parametrize("name", ["llama-tiny", "hf-llama-tiny"])
def test_four_heads_do_not_split_over_three_ranks(name: str) -> None:
    problems = tp_problems(MODELS[name](), 3)
    assert problems[0] == "4 attention heads do not split evenly over 3 ranks"
    assert all("\n" not in line for line in problems)


def test_the_key_value_heads_are_checked_apart_from_the_queries() -> None:
    problems = tp_problems(tiny_hf_llama(), 4)  # 4 heads split, 2 key/value heads do not
    assert problems == ["2 key/value heads do not split evenly over 4 ranks"]


def test_the_vocabulary_and_the_mlp_must_split_where_the_plan_splits_them() -> None:
    problems = tp_problems(tiny_hf_llama(vocab_size=130, intermediate_size=130), 4)
    assert "the vocabulary (130) does not split evenly over 4 ranks" in problems
    assert "the MLP intermediate size (130) does not split evenly over 4 ranks" in problems


def test_models_without_a_plan_are_named() -> None:
    from transformers import AutoModelForCausalLM
    from transformers import GPT2Config as HFGPT2Config

    hf_gpt2 = AutoModelForCausalLM.from_config(HFGPT2Config(n_layer=1, n_embd=32, n_head=4,
                                                            vocab_size=100, bos_token_id=0,
                                                            eos_token_id=0))
    assert tp_problems(hf_gpt2, 2) == [
        "GPT2LMHeadModel cannot be split by tensor parallelism: transformers gives it no "
        "tensor-parallel plan (no base_model_tp_plan)"]
    bert = resolve_model("tiny").build().model
    assert tp_problems(bert, 2) == [
        "BertForMaskedLM cannot be split by tensor parallelism: no tensor-parallel plan is "
        "written for it here"]


def test_apply_refuses_what_tp_problems_refuses(world) -> None:
    from torch.distributed.device_mesh import init_device_mesh

    with pytest.raises(ValueError, match="4 attention heads"):
        apply_tensor_parallel(builtin("llama-tiny"), init_device_mesh("cpu", (3,)))


@pytest.mark.filterwarnings("ignore:FSDP2-wrapped module")  # FSDP2's note on HF outputs
@pytest.mark.parametrize("name", ["llama-tiny", "hf-llama-tiny"])
def test_fsdp2_over_tp_on_fake_tensors(world, name: str) -> None:
    """As the estimate runs it: fake weights, TP on mesh["tp"], then FSDP2 on mesh["dp"]."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    with FakeTensorMode(), meshes_outside_fake_mode():
        model = MODELS[name]()
        apply_tensor_parallel(model, mesh["tp"])
        layers = model.model.layers if hasattr(model, "model") else model.layers
        for block in layers:
            fully_shard(block, mesh=mesh["dp"])
        fully_shard(model, mesh=mesh["dp"])
        logits = step(model)
    assert type(logits).__name__ == "FakeTensor"
    q_proj = layers[0].self_attn.q_proj if hasattr(model, "model") \
        else layers[0].attention.q_proj
    assert q_proj.weight.to_local().shape == (16, 64)  # 64 rows / tp 2 / dp 2


class _OwnPlan(nn.Module):
    """A model the tool has never seen: it declares its plan, and TP follows it."""

    tp_plan = {"layers.*.up": "colwise", "layers.*.down": "rowwise"}

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.ModuleDict({"up": nn.Linear(8, 16),
                                                   "down": nn.Linear(16, 8)})
                                    for _ in range(2))


def test_a_model_declares_its_own_plan(world) -> None:
    model = _OwnPlan()
    assert tp_problems(model, 2) == []
    apply_tensor_parallel(model, tp_mesh(2))
    assert model.layers[1].up.weight.to_local().shape == (8, 8)  # 16 rows / 2
    assert model.layers[1].down.weight.to_local().shape == (8, 8)  # 16 columns / 2


def test_tensor_parallelism_imports_no_model() -> None:
    """The plans live with the models (their `tp_plan`), not in tensor_parallel.py."""
    import ast
    import inspect

    from generator.measure.training import tensor_parallel

    tree = ast.parse(inspect.getsource(tensor_parallel))
    imported = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert not [name for name in imported if name and name.startswith("generator.measure.models")]
