"""GPT-2 with its language-model head, built from code.

The architecture is Hugging Face's `GPT2LMHeadModel` (pre-LN blocks, GPT-2's tanh GELU
written out op by op as Hugging Face's `gelu_new` computes it, a final LayerNorm, an LM head
without bias tied to the token embeddings), so `gpt2-small` has its 124,439,808 parameters.
The top-level children are `embeddings`, `layers`, `final_norm` and `lm_head` so the
profiler can attribute memory per block.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn

from generator.measure.models.transformer_parts import (
    MLP,
    SelfAttention,
    check_attention,
    check_heads,
    check_seq_len,
    init_weights,
    seeded_generator,
)
from generator.measure.training.workload import Workload

#: Seed of every batch, so that two runs see identical inputs.
BATCH_SEED = 0


@dataclass(frozen=True)
class GPT2Config:
    """The hyper-parameters of a GPT-2; defaults are GPT-2 small."""

    vocab_size: int = 50257
    hidden_size: int = 768
    num_layers: int = 12
    num_heads: int = 12
    intermediate_size: int = 3072
    max_position_embeddings: int = 1024
    layer_norm_eps: float = 1e-5
    embedding_dropout: float = 0.1
    attention_dropout: float = 0.1
    residual_dropout: float = 0.1
    init_std: float = 0.02
    attention: str = "eager"

    def __post_init__(self) -> None:
        check_attention(self.attention)
        check_heads(self.hidden_size, self.num_heads)


GPT2_SMALL = GPT2Config()


class GPT2Embeddings(nn.Module):
    """Token + position embeddings, then dropout (GPT-2 has no embedding LayerNorm)."""

    def __init__(self, config: GPT2Config) -> None:
        super().__init__()
        self.max_positions = config.max_position_embeddings
        self.token_embeddings = nn.Embedding(config.vocab_size, config.hidden_size)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.dropout = nn.Dropout(config.embedding_dropout)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        seq_len = input_ids.shape[1]
        check_seq_len(seq_len, self.max_positions, "GPT-2")
        # Per call on the input's device, not a buffer: see BertEmbeddings.forward.
        positions = torch.arange(seq_len, device=input_ids.device)
        return self.dropout(self.token_embeddings(input_ids) + self.position_embeddings(positions))


class GPT2Block(nn.Module):
    """A pre-LN decoder block: x = x + attn(LN(x)); x = x + mlp(LN(x))."""

    def __init__(self, config: GPT2Config) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.attention = SelfAttention(
            config.hidden_size,
            config.num_heads,
            attention_dropout=config.attention_dropout,
            output_dropout=config.residual_dropout,
            attention=config.attention,
            causal=True,
            fused_qkv=True,
        )
        self.mlp_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.mlp = MLP(
            config.hidden_size, config.intermediate_size, config.residual_dropout, gelu="new"
        )

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        hidden = hidden + self.attention(self.attention_norm(hidden))
        return hidden + self.mlp(self.mlp_norm(hidden))


class GPT2LMHeadModel(nn.Module):
    """`model(input_ids)` -> logits of shape (batch, seq, vocab)."""

    #: Its tensor-parallel plan (Megatron's, in transformers' style names; read by
    #: training/tensor_parallel.py). The head is tied to the token embeddings and GPT-2's
    #: vocabulary (50257) is odd: both stay whole. The fused qkv is regrouped per rank first
    #: (SelfAttention.split_heads).
    tp_plan: ClassVar[dict[str, str]] = {
        "layers.*.attention.qkv": "colwise", "layers.*.attention.output": "rowwise",
        "layers.*.mlp.up": "colwise", "layers.*.mlp.down": "rowwise"}

    def __init__(self, config: GPT2Config) -> None:
        super().__init__()
        self.config = config
        self.embeddings = GPT2Embeddings(config)
        self.layers = nn.ModuleList(GPT2Block(config) for _ in range(config.num_layers))
        self.final_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.apply(partial(init_weights, std=config.init_std))
        # GPT-2's residual-projection scaling (Radford et al. 2019, sec. 2.3), as Hugging Face
        # does: keeps the residual stream's variance from growing with depth.
        residual_std = config.init_std / math.sqrt(2 * config.num_layers)
        with torch.no_grad():
            for block in self.layers:
                block.attention.output.weight.normal_(mean=0.0, std=residual_std)
                block.mlp.down.weight.normal_(mean=0.0, std=residual_std)
        # Same Parameter object, so parameters() counts it once and both uses share a grad.
        self.lm_head.weight = self.embeddings.token_embeddings.weight

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        hidden = self.embeddings(input_ids)
        for layer in self.layers:
            hidden = layer(hidden)
        return self.lm_head(self.final_norm(hidden))


def make_lm_batch(
    config: GPT2Config, batch_size: int, seq_len: int, device: torch.device | str
) -> tuple[tuple[torch.Tensor], torch.Tensor]:
    """Random token ids; the target is the same ids shifted left by one (next token)."""
    check_seq_len(seq_len, config.max_position_embeddings, "GPT-2")
    if seq_len < 2:
        raise ValueError(f"GPT-2 next-token prediction needs seq_len >= 2; got {seq_len}")
    generator = seeded_generator(BATCH_SEED)
    input_ids = torch.randint(
        0,
        config.vocab_size,
        (batch_size, seq_len),
        generator=generator,
        dtype=torch.int64,
        device="cpu",
    )
    return (input_ids.to(device),), input_ids[:, 1:].to(device)


def lm_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of logits[:, :-1] against ids[:, 1:].

    The slice makes the logits non-contiguous, so `reshape` copies them, exactly as Hugging
    Face's `.contiguous()` does: that copy is part of GPT-2's real peak memory.
    """
    shifted = logits[:, :-1, :]
    return F.cross_entropy(shifted.reshape(-1, shifted.shape[-1]), target.reshape(-1))


def build_gpt2(config: GPT2Config = GPT2_SMALL) -> Workload:
    """A GPT-2 LM workload in training mode, on the current default device / fake mode."""
    model = GPT2LMHeadModel(config)
    model.train()
    return Workload(model=model, make_batch=partial(make_lm_batch, config), loss_fn=lm_loss)
