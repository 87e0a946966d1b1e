"""Selective checkpointing by op (training/selective_checkpoint.py, torchtitan's policy at
9dec370): the option's refusals, what the policy keeps of a block (by op, on fake tensors
with the estimate's CUDA kernels), and a step that keeps less than no checkpointing and more
than full checkpointing, for the built-in LLaMA and for a Hugging Face one. Estimates of
tiny models: a few seconds each. Against real CPU runs: slow/test_selective_checkpoint_runs.py.
"""

from __future__ import annotations

from collections import Counter
from functools import partial
from pathlib import Path

import pytest
import torch

import generator as g
from generator.errors import ConfigError
from generator.experiment import Experiment

transformers = pytest.importorskip("transformers",
                                   reason="hf: models need transformers (pip install -e '.[hf]')")

from hf_offline import go_offline, write_config  # noqa: E402

TINY = {"model": "llama-tiny", "batch_size": 2, "seq_len": 16}
#: A two-layer Llama; heads of 16 (flash attention's limit is 256), vocabulary small.
TINY_HF_LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"],
                 "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                 "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 128,
                 "max_position_embeddings": 256, "tie_word_embeddings": False}
MM = torch.ops.aten.mm.default
FLASH = torch.ops.aten._scaled_dot_product_flash_attention.default
FLASH_ON_CPU = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return go_offline(monkeypatch, tmp_path / "hf-home")


@pytest.fixture
def hf_llama(tmp_path: Path) -> str:
    return f"hf:{write_config(tmp_path / 'llama' / 'config.json', TINY_HF_LLAMA).parent}"


@pytest.mark.parametrize("options, words", [
    ({"checkpoint_policy": "selective-op"},
     "checkpoint_policy 'selective-op' chooses what each checkpointed block keeps: it needs "
     "checkpointing"),
    ({"checkpoint_policy": "selective-op", "checkpoint_classes": ("LlamaMLP",)},
     "it needs checkpointing"),
    ({"checkpointing": True, "checkpoint_policy": "layer"},
     "unknown checkpoint_policy 'layer'; choose one of: full, selective-op"),
])
def test_the_policy_is_refused_in_one_line_without_checkpointing(options, words) -> None:
    with pytest.raises(ConfigError, match=words):
        Experiment(**TINY, **options)


def test_the_key_and_words_name_the_policy() -> None:
    full = Experiment(**TINY, checkpointing=True)
    selective = Experiment(**TINY, checkpointing=True, checkpoint_policy="selective-op")
    assert full.checkpoint_policy == "full"
    assert selective.key == full.key + "-sac-op"
    assert Experiment.from_dict(selective.to_dict()) == selective
    assert Experiment.from_dict({k: v for k, v in full.to_dict().items()
                                 if k != "checkpoint_policy"}) == full


def kept_by_op(kv_heads: int, device: str = "cuda") -> tuple[Counter, Counter]:
    """One forward pass of the tiny Hugging Face Llama in bf16 on fake tensors, under the
    estimate's CUDA kernels, each block checkpointed with the op policy: the ops whose
    outputs were kept, and the mm kept by the width of their output."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    from generator.measure.emulation.cuda_kernels import CudaKernelPolicy
    from generator.measure.models.hf_masks import fake_masks_read_as_unpadded
    from generator.measure.training import selective_checkpoint
    from generator.measure.training.step import also_in_same_modes, cast_model

    kept: Counter = Counter()
    widths: Counter = Counter()
    config = transformers.LlamaConfig(**{**TINY_HF_LLAMA, "num_key_value_heads": kv_heads})
    with FakeTensorMode(), CudaKernelPolicy(), fake_masks_read_as_unpadded():
        model = transformers.AutoModelForCausalLM.from_config(config,
                                                              attn_implementation="sdpa")
        cast_model(model, torch.bfloat16)
        model.train()

        def keep(func, output) -> None:
            kept[func] += 1
            if func == MM:
                widths[output.shape[-1]] += 1

        contexts = also_in_same_modes(partial(selective_checkpoint.contexts, device, kept=keep))
        model.activation_checkpointing_enable(  # transformers 5's name
            activation_checkpointing_kwargs={"use_reentrant": False, "context_fn": contexts})
        ids = torch.randint(0, 128, (2, 32))
        model(input_ids=ids, labels=ids).loss.backward()
    return kept, widths


def test_the_policy_keeps_every_other_mm_and_the_flash_attention_of_each_block() -> None:
    # A LLaMA block's seven mm, in order: q, k, v, o, gate, up, down. Kept: q and down
    # (width 64), v (2 key/value heads of 16: 32), gate (128); recomputed: k, o, up.
    kept, widths = kept_by_op(kv_heads=4)  # no grouped-query attention: CUDA's flash kernel
    assert kept == {MM: 2 * 4, FLASH: 2}
    assert widths == {64: 2 * 3, 128: 2}  # v is as wide as q without GQA
    kept, widths = kept_by_op(kv_heads=2)  # GQA: the CPU's flash kernel stands in for CUDA's
    assert kept == {MM: 2 * 4, FLASH_ON_CPU: 2}
    assert widths == {64: 2 * 2, 32: 2, 128: 2}


def test_modelling_the_cpu_the_cpus_flash_kernel_is_recomputed() -> None:
    kept, _ = kept_by_op(kv_heads=2, device="cpu")
    assert kept == {MM: 2 * 4}


def test_the_policy_is_torchtitans_list() -> None:
    from generator.measure.training.selective_checkpoint import SAVE_LIST

    aten = torch.ops.aten
    assert SAVE_LIST == {aten.mm.default, aten._scaled_dot_product_efficient_attention.default,
                         aten._scaled_dot_product_flash_attention.default,
                         torch.ops._c10d_functional.reduce_scatter_tensor.default,
                         aten.abs.default, aten.max.default}


@pytest.mark.parametrize("model", ["llama-tiny", "hf"])
def test_a_selective_step_keeps_less_than_none_and_more_than_full(model, hf_llama) -> None:
    name = hf_llama if model == "hf" else "llama-tiny"

    def activations(**options) -> int:
        step = g.estimate(name, batch_size=2, seq_len=128, precision="amp-bf16", **options)
        return step.category_max["activations"]

    none = activations()
    full = activations(checkpointing=True)
    selective = activations(checkpointing=True, checkpoint_policy="selective-op")
    assert none > selective > full, (none, selective, full)


def test_a_checkpointed_hugging_face_step_builds_no_mask_for_packed_sequences(
        hf_llama) -> None:
    """Checkpointing turns transformers' cache off, and without one it reads the position
    ids for packed sequences; the model numbers each row itself, one sequence a row, so a
    real run builds no mask and runs the flash kernel: the estimate too (hf_masks.py)."""
    step = g.estimate(hf_llama, batch_size=2, seq_len=64, precision="amp-bf16",
                      checkpointing=True)
    assert "unpacked_positions" in {n.id for n in step.notes}
    assert "cuda_attention" in {n.id for n in step.notes}


def test_contexts_say_what_they_keep() -> None:
    from torch.utils.checkpoint import checkpoint

    from generator.measure.training.selective_checkpoint import contexts

    kept: Counter = Counter()
    layer = torch.nn.Sequential(torch.nn.Linear(8, 8, bias=False), torch.nn.ReLU(),
                                torch.nn.Linear(8, 8, bias=False),
                                torch.nn.Linear(8, 8, bias=False))
    x = torch.randn(4, 8, requires_grad=True)
    checkpoint(layer, x, use_reentrant=False, context_fn=partial(
        contexts, "cpu", kept=lambda op, output: kept.update([op]))).sum().backward()
    assert kept == {MM: 2}  # the first and third of three
