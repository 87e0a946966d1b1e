"""A LLaMA-style decoder with its (untied) language-model head, built from code.

The architecture is Hugging Face's `LlamaForCausalLM` (Touvron et al. 2023): pre-norm blocks
with RMSNorm, rotary position embeddings on queries and keys, a SwiGLU MLP, no biases, and an
LM head with its own weights. `llama-7b` has LLaMA-7B's 6,738,415,616 parameters. The top-level
children are `embeddings`, `layers`, `final_norm` and `lm_head`, as in bert.py and gpt2.py, so
the profiler attributes memory per block and sharding wraps each block.

A 7B model needs 25 GiB for its fp32 weights alone: build it under FakeTensorMode (the
`estimate` backend, the `sharding` study) or on a GPU, never on this machine's CPU for real;
`build_llama` refuses that.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn
from torch._guards import detect_fake_mode

from generator.errors import ModelError
from generator.measure.models.gpt2 import lm_loss
from generator.measure.models.transformer_parts import (
    check_attention,
    check_heads,
    check_seq_len,
    init_weights,
    seeded_generator,
)
from generator.measure.training.workload import Workload

#: Seed of every batch, so that two runs see identical inputs.
BATCH_SEED = 0
#: Largest model built for real on a CPU; bigger ones only under fake tensors or on a GPU.
MAX_REAL_CPU_BYTES = 8 * 2**30


@dataclass(frozen=True)
class LlamaConfig:
    """The hyper-parameters of a LLaMA; defaults are LLaMA-7B."""

    vocab_size: int = 32000
    hidden_size: int = 4096
    num_layers: int = 32
    num_heads: int = 32
    intermediate_size: int = 11008
    max_position_embeddings: int = 4096
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    init_std: float = 0.02
    attention: str = "sdpa"

    def __post_init__(self) -> None:
        check_attention(self.attention)
        check_heads(self.hidden_size, self.num_heads)
        if (self.hidden_size // self.num_heads) % 2:
            raise ValueError("rotary embeddings need an even head dimension")

    @property
    def parameter_count(self) -> int:
        """From the shapes alone, so a caller can size a model without building it."""
        h, i = self.hidden_size, self.intermediate_size
        block = 4 * h * h + 3 * h * i + 2 * h
        return self.num_layers * block + 2 * self.vocab_size * h + h


LLAMA_7B = LlamaConfig()
#: LLaMA's rule sizes the MLP: two thirds of 4 × hidden, rounded up to a multiple of 256
#: (11008 for 7B; 256 here, which also splits evenly across 1 to 8 shards).
LLAMA_TINY = LlamaConfig(vocab_size=1000, hidden_size=64, num_layers=2, num_heads=4,
                         intermediate_size=256, max_position_embeddings=128)


class RMSNorm(nn.Module):
    """Hugging Face's LlamaRMSNorm: normalise in fp32, scale in the input's dtype."""

    def __init__(self, hidden_size: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.eps = eps

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        dtype = hidden.dtype
        hidden = hidden.to(torch.float32)
        variance = hidden.pow(2).mean(-1, keepdim=True)
        hidden = hidden * torch.rsqrt(variance + self.eps)
        return self.weight * hidden.to(dtype)


def rotary_tables(seq_len: int, head_dim: int, theta: float, like: torch.Tensor
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of each position's rotation angles, (seq, head_dim), in `like`'s dtype.

    Computed per call on the input's device, not kept as a buffer, so the model builds under
    any default device or fake mode (as BertEmbeddings does with its positions)."""
    steps = torch.arange(0, head_dim, 2, dtype=torch.float32, device=like.device)
    inv_freq = 1.0 / (theta ** (steps / head_dim))
    angles = torch.outer(torch.arange(seq_len, dtype=torch.float32, device=like.device), inv_freq)
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos().to(like.dtype), angles.sin().to(like.dtype)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


class LlamaAttention(nn.Module):
    """Causal multi-head attention with rotary embeddings; q, k, v and output without bias."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.num_heads = config.num_heads
        self.head_dim = config.hidden_size // config.num_heads
        self.attention = config.attention
        hidden = config.hidden_size
        self.q_proj = nn.Linear(hidden, hidden, bias=False)
        self.k_proj = nn.Linear(hidden, hidden, bias=False)
        self.v_proj = nn.Linear(hidden, hidden, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)

    def split_heads(self, tp_size: int) -> None:
        """Under tensor parallelism each rank computes its own num_heads / tp_size heads."""
        self.num_heads //= tp_size

    def forward(self, hidden: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = hidden.shape
        q, k, v = (proj(hidden).view(batch, seq, self.num_heads, self.head_dim).transpose(1, 2)
                   for proj in (self.q_proj, self.k_proj, self.v_proj))
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        if self.attention == "sdpa":
            context = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
            keep = torch.ones(seq, seq, dtype=torch.bool, device=scores.device).tril()
            scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
            # Hugging Face's eager LLaMA takes the softmax in fp32, then casts back.
            probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
            context = torch.matmul(probs, v)
        # The heads' width, not the input's: under tensor parallelism a rank holds
        # num_heads / tp of them (split_heads sets the local count).
        return self.o_proj(context.transpose(1, 2).reshape(batch, seq,
                                                           self.num_heads * self.head_dim))


class SwiGLU(nn.Module):
    """down(silu(gate(x)) * up(x)) (Shazeer 2020), LLaMA's MLP."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(hidden)) * self.up_proj(hidden))


class LlamaBlock(nn.Module):
    """x = x + attn(norm(x)); x = x + mlp(norm(x))."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.attention_norm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.attention = LlamaAttention(config)
        self.mlp_norm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.mlp = SwiGLU(config)

    def forward(self, hidden: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        hidden = hidden + self.attention(self.attention_norm(hidden), cos, sin)
        return hidden + self.mlp(self.mlp_norm(hidden))


class LlamaEmbeddings(nn.Module):
    """Token embeddings only: positions enter through the rotary tables."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.max_positions = config.max_position_embeddings
        self.token_embeddings = nn.Embedding(config.vocab_size, config.hidden_size)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        check_seq_len(input_ids.shape[1], self.max_positions, "LLaMA")
        return self.token_embeddings(input_ids)


class LlamaForCausalLM(nn.Module):
    """`model(input_ids)` -> logits of shape (batch, seq, vocab)."""

    #: Its tensor-parallel plan (Megatron's, in transformers' style names; read by
    #: training/tensor_parallel.py). The head is untied: vocabulary-parallel, its logits
    #: gathered for the loss. The embedding stays whole (a lookup, no matmul to split; small
    #: beside the head's grads).
    tp_plan: ClassVar[dict[str, str]] = {
        "layers.*.attention.q_proj": "colwise", "layers.*.attention.k_proj": "colwise",
        "layers.*.attention.v_proj": "colwise", "layers.*.attention.o_proj": "rowwise",
        "layers.*.mlp.gate_proj": "colwise", "layers.*.mlp.up_proj": "colwise",
        "layers.*.mlp.down_proj": "rowwise", "lm_head": "colwise_rep"}

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.config = config
        self.embeddings = LlamaEmbeddings(config)
        self.layers = nn.ModuleList(LlamaBlock(config) for _ in range(config.num_layers))
        self.final_norm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.apply(partial(init_weights, std=config.init_std))  # RMSNorm weights stay at 1

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        hidden = self.embeddings(input_ids)
        config = self.config
        cos, sin = rotary_tables(input_ids.shape[1], config.hidden_size // config.num_heads,
                                 config.rope_theta, hidden)
        for layer in self.layers:
            hidden = layer(hidden, cos, sin)
        return self.lm_head(self.final_norm(hidden))


def make_llama_batch(config: LlamaConfig, batch_size: int, seq_len: int,
                     device: torch.device | str) -> tuple[tuple[torch.Tensor], torch.Tensor]:
    """Random token ids; the target is the same ids shifted left by one (next token)."""
    check_seq_len(seq_len, config.max_position_embeddings, "LLaMA")
    if seq_len < 2:
        raise ValueError(f"LLaMA next-token prediction needs seq_len >= 2; got {seq_len}")
    ids = torch.randint(0, config.vocab_size, (batch_size, seq_len),
                        generator=seeded_generator(BATCH_SEED), dtype=torch.int64, device="cpu")
    return (ids.to(device),), ids[:, 1:].to(device)


def llama_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Hugging Face upcasts the logits to fp32 before the cross-entropy; that copy (batch ×
    seq × 32000 × 4 bytes) is part of a mixed-precision step's real peak."""
    return lm_loss(logits.float(), target)


def build_llama(config: LlamaConfig = LLAMA_7B) -> Workload:
    """A LLaMA LM workload in training mode, on the current default device / fake mode."""
    nbytes = 4 * config.parameter_count
    if nbytes > MAX_REAL_CPU_BYTES and detect_fake_mode() is None \
            and torch.get_default_device().type == "cpu":
        raise ModelError(f"this LLaMA would allocate {nbytes / 2**30:.1f} GiB of real fp32 "
                         "weights on the CPU; estimate it instead (backend = \"estimate\")")
    model = LlamaForCausalLM(config)
    model.train()
    return Workload(model=model, make_batch=partial(make_llama_batch, config),
                    loss_fn=llama_loss)
