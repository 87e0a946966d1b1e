"""Pieces shared by the BERT and GPT-2 models: self-attention, the MLP, and weight init.

The modules are written out by hand (no `nn.MultiheadAttention`, no `nn.TransformerEncoderLayer`)
so that every activation autograd keeps is one we chose, in the order Hugging Face's
implementations produce them; the profiler's per-block numbers are then comparable with what
a user of `transformers` would measure.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

#: The attention implementations a config may name.
ATTENTION_IMPLS: tuple[str, ...] = ("eager", "sdpa")


def check_attention(value: str) -> None:
    """Raise ValueError unless `value` is a known attention implementation (used by configs)."""
    if value not in ATTENTION_IMPLS:
        allowed = ", ".join(repr(a) for a in ATTENTION_IMPLS)
        raise ValueError(f"attention must be one of {allowed}; got {value!r}")


def check_heads(hidden_size: int, num_heads: int) -> None:
    """Raise ValueError unless the hidden size splits evenly into heads."""
    if num_heads <= 0 or hidden_size % num_heads != 0:
        raise ValueError(
            f"hidden_size ({hidden_size}) must be a multiple of num_heads ({num_heads})"
        )


class SelfAttention(nn.Module):
    """Multi-head self-attention followed by its output projection and residual dropout.

    `fused_qkv` chooses one (hidden -> 3*hidden) projection, as GPT-2 does, or three separate
    query/key/value Linears, as BERT does; the parameter count is identical but the module
    names (and so a per-module breakdown) match the original models.
    """

    def __init__(
        self,
        hidden_size: int,
        num_heads: int,
        attention_dropout: float,
        output_dropout: float,
        attention: str = "eager",
        causal: bool = False,
        fused_qkv: bool = False,
    ) -> None:
        super().__init__()
        check_heads(hidden_size, num_heads)
        check_attention(attention)
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.attention = attention
        self.causal = causal
        self.fused_qkv = fused_qkv
        if fused_qkv:
            self.qkv = nn.Linear(hidden_size, 3 * hidden_size)
        else:
            self.query = nn.Linear(hidden_size, hidden_size)
            self.key = nn.Linear(hidden_size, hidden_size)
            self.value = nn.Linear(hidden_size, hidden_size)
        self.attention_dropout = nn.Dropout(attention_dropout)
        self.output = nn.Linear(hidden_size, hidden_size)
        self.output_dropout = nn.Dropout(output_dropout)

    @torch.no_grad()
    def split_heads(self, tp_size: int) -> None:
        """Under tensor parallelism each rank computes its own heads: a 1/tp_size share of the
        head count and of the hidden size the forward reshapes with.

        A fused projection puts all queries, then all keys, then all values on its output
        rows, [q; k; v]; a plain Shard(0) would give rank 0 every query and half the keys. Its
        rows are permuted, head groups first, to [q_0; k_0; v_0; q_1; k_1; v_1; ...], so that
        rank r's contiguous shard is its own heads' q, k and v, in the order the forward's
        `.split(hidden_size)` (with the local hidden size) expects. The permuted weight is
        still the same function of the input; a checkpoint written from it must undo the
        permutation."""
        if self.fused_qkv:
            for param_name in ("weight", "bias"):
                param = getattr(self.qkv, param_name)
                if param is None:
                    continue
                rest = param.shape[1:]
                grouped = param.reshape(3, tp_size, -1, *rest).transpose(0, 1).reshape(
                    param.shape)
                setattr(self.qkv, param_name, nn.Parameter(grouped.contiguous(),
                                                           requires_grad=param.requires_grad))
        self.num_heads //= tp_size
        self.hidden_size //= tp_size

    def _split_heads(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = x.shape
        return x.view(batch, seq, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = hidden.shape
        if self.fused_qkv:
            q, k, v = self.qkv(hidden).split(self.hidden_size, dim=-1)
        else:
            q, k, v = self.query(hidden), self.key(hidden), self.value(hidden)
        q, k, v = self._split_heads(q), self._split_heads(k), self._split_heads(v)

        if self.attention == "sdpa":
            # The dropout module's p is the single source of truth, so eval() disables it
            # here too (SDPA has no training flag of its own).
            p = self.attention_dropout.p if self.training else 0.0
            context = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=self.causal)
        else:
            # Eager keeps the (batch, heads, seq, seq) scores, softmax output and dropout mask
            # alive for backward: the s^2 terms of Korthikanti et al. (2022), eq. 2.
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
            if self.causal:
                # Built from shapes only, so it works under FakeTensorMode and on any device.
                keep = torch.ones(seq, seq, dtype=torch.bool, device=scores.device).tril()
                scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
            probs = self.attention_dropout(torch.softmax(scores, dim=-1))
            context = torch.matmul(probs, v)

        context = context.transpose(1, 2).reshape(batch, seq, self.hidden_size)
        return self.output_dropout(self.output(context))


class MLP(nn.Module):
    """The position-wise feed-forward network: Linear -> GELU -> Linear -> dropout."""

    def __init__(
        self, hidden_size: int, intermediate_size: int, dropout: float, gelu: str = "none"
    ) -> None:
        super().__init__()
        self.up = nn.Linear(hidden_size, intermediate_size)
        # "none" is the exact erf GELU (BERT); "tanh" PyTorch's fused tanh approximation;
        # "new" the same approximation written out, as GPT-2 and Hugging Face compute it.
        self.activation = NewGELU() if gelu == "new" else nn.GELU(approximate=gelu)
        self.down = nn.Linear(intermediate_size, hidden_size)
        self.dropout = nn.Dropout(dropout)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.down(self.activation(self.up(hidden))))


class NewGELU(nn.Module):
    """GPT-2's GELU, op by op, as Hugging Face's `gelu_new` (transformers/activations.py,
    NewGELUActivation): autograd keeps the input, its cube and the tanh for backward, several
    times the memory of PyTorch's fused `gelu(approximate="tanh")`, which keeps the input only."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi)
                                           * (x + 0.044715 * torch.pow(x, 3.0))))


@torch.no_grad()
def init_weights(module: nn.Module, std: float) -> None:
    """Hugging Face's `_init_weights`: normal(0, std) weights, zero biases, LayerNorm 1/0.

    Applied with `model.apply`; a tied weight is simply initialised twice, which is harmless.
    """
    if isinstance(module, nn.Linear):
        module.weight.normal_(mean=0.0, std=std)
        if module.bias is not None:
            module.bias.zero_()
    elif isinstance(module, nn.Embedding):
        module.weight.normal_(mean=0.0, std=std)
        if module.padding_idx is not None:
            module.weight[module.padding_idx].zero_()
    elif isinstance(module, nn.LayerNorm):
        module.weight.fill_(1.0)
        module.bias.zero_()


def seeded_generator(seed: int) -> torch.Generator:
    """A CPU generator with a fixed seed.

    Always on the CPU, whatever the default device: the same seed then gives the same batch
    on every machine, and the tensors are moved to the target device afterwards.
    """
    generator = torch.Generator(device="cpu")
    generator.manual_seed(seed)
    return generator


def check_seq_len(seq_len: int, max_positions: int, model: str) -> None:
    """Raise ValueError for a sequence longer than the position embeddings allow.

    Without this an out-of-range position id fails deep inside an embedding lookup with a
    message that names neither the model nor the limit.
    """
    if seq_len > max_positions:
        raise ValueError(
            f"{model} accepts sequences of at most {max_positions} tokens; got {seq_len}"
        )
