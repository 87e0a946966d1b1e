"""BERT with its masked-language-model head, built from code.

The architecture is Hugging Face's `BertForMaskedLM` (post-LN blocks, exact GELU, a decoder
tied to the word embeddings, no pooler), so `bert-base` has its 109,514,298 parameters. The
top-level children are `embeddings`, `layers` and `mlm_head` so the profiler can attribute
memory per block; `transformers` nests everything under a single `bert` child instead.
"""

from __future__ import annotations

from dataclasses import dataclass
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

#: Label value the loss ignores (Hugging Face's convention).
IGNORE_INDEX = -100
#: Fraction of positions that carry an MLM label, as in Devlin et al. (2019).
MASK_FRACTION = 0.15
#: Seed of every batch, so that two runs see identical inputs.
BATCH_SEED = 0


@dataclass(frozen=True)
class BertConfig:
    """The hyper-parameters of a BERT; defaults are BERT-base."""

    vocab_size: int = 30522
    hidden_size: int = 768
    num_layers: int = 12
    num_heads: int = 12
    intermediate_size: int = 3072
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    hidden_dropout: float = 0.1
    attention_dropout: float = 0.1
    pad_token_id: int = 0
    init_std: float = 0.02
    attention: str = "eager"
    logits: str = "all"
    """all: the MLM head runs at every position (Hugging Face's BertForMaskedLM); masked: only
    at the masked ones, as NVIDIA's and MosaicML's BERT pre-training do."""

    def __post_init__(self) -> None:
        check_attention(self.attention)
        check_heads(self.hidden_size, self.num_heads)


BERT_BASE = BertConfig()
BERT_TINY = BertConfig(
    vocab_size=1000,
    hidden_size=64,
    num_layers=2,
    num_heads=4,
    intermediate_size=256,
    max_position_embeddings=128,
)


class BertEmbeddings(nn.Module):
    """Word + position + token-type embeddings, then LayerNorm and dropout."""

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.max_positions = config.max_position_embeddings
        self.word_embeddings = nn.Embedding(
            config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id
        )
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout)

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        seq_len = input_ids.shape[1]
        check_seq_len(seq_len, self.max_positions, "BERT")
        # Created per call on the input's device rather than a buffer, so the model builds
        # under any default device or fake mode without a device-pinned tensor.
        positions = torch.arange(seq_len, device=input_ids.device)
        embedded = (
            self.word_embeddings(input_ids)
            + self.position_embeddings(positions)
            + self.token_type_embeddings(token_type_ids)
        )
        return self.dropout(self.norm(embedded))


class BertLayer(nn.Module):
    """A post-LN encoder block: x = LN(x + attn(x)); x = LN(x + mlp(x))."""

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.attention = SelfAttention(
            config.hidden_size,
            config.num_heads,
            attention_dropout=config.attention_dropout,
            output_dropout=config.hidden_dropout,
            attention=config.attention,
        )
        self.attention_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.mlp = MLP(config.hidden_size, config.intermediate_size, config.hidden_dropout)
        self.mlp_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        hidden = self.attention_norm(hidden + self.attention(hidden))
        return self.mlp_norm(hidden + self.mlp(hidden))


class BertMLMHead(nn.Module):
    """dense -> GELU -> LayerNorm -> decoder over the vocabulary (decoder weight tied later)."""

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.activation = nn.GELU()
        self.norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.norm(self.activation(self.dense(hidden))))


class BertForMaskedLM(nn.Module):
    """`model(input_ids, token_type_ids)` -> logits of shape (batch, seq, vocab)."""

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.layers = nn.ModuleList(BertLayer(config) for _ in range(config.num_layers))
        self.mlm_head = BertMLMHead(config)
        self.apply(partial(init_weights, std=config.init_std))
        # Same Parameter object, so parameters() counts it once and both uses share a grad.
        self.mlm_head.decoder.weight = self.embeddings.word_embeddings.weight

    def forward(
        self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None = None,
        masked_positions: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Logits (batch, seq, vocab); with `masked_positions` (indices into the flattened
        batch × seq positions) only theirs, (len(masked_positions), vocab)."""
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        hidden = self.embeddings(input_ids, token_type_ids)
        for layer in self.layers:
            hidden = layer(hidden)
        if masked_positions is not None:
            hidden = hidden.reshape(-1, hidden.shape[-1]).index_select(0, masked_positions)
        return self.mlm_head(hidden)


def make_mlm_batch(
    config: BertConfig, batch_size: int, seq_len: int, device: torch.device | str
) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
    """Random token ids, zero token types, and labels on 15 % of the positions (with
    `config.logits` "masked": those positions as a third input, and their labels alone).

    The number of labelled positions is exact (at least one), not a coin flip per position:
    a tiny batch with no label would make the loss NaN.
    """
    check_seq_len(seq_len, config.max_position_embeddings, "BERT")
    generator = seeded_generator(BATCH_SEED)
    shape = (batch_size, seq_len)
    input_ids = torch.randint(
        0, config.vocab_size, shape, generator=generator, dtype=torch.int64, device="cpu"
    )
    count = batch_size * seq_len
    n_labelled = max(1, round(MASK_FRACTION * count))
    chosen = torch.randperm(count, generator=generator, device="cpu")[:n_labelled]
    token_type_ids = torch.zeros(shape, dtype=torch.int64, device="cpu")
    if config.logits == "masked":  # the masked positions go in; only their labels come out
        positions = chosen.sort().values
        return ((input_ids.to(device), token_type_ids.to(device), positions.to(device)),
                input_ids.reshape(-1)[positions].to(device))
    labels = torch.full((count,), IGNORE_INDEX, dtype=torch.int64, device="cpu")
    labels[chosen] = input_ids.reshape(-1)[chosen]
    return (
        (input_ids.to(device), token_type_ids.to(device)),
        labels.view(shape).to(device),
    )


def mlm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Cross-entropy over the logits' positions, unlabelled ones ignored (as Hugging Face)."""
    return F.cross_entropy(
        logits.view(-1, logits.shape[-1]), labels.view(-1), ignore_index=IGNORE_INDEX
    )


def build_bert(config: BertConfig = BERT_BASE) -> Workload:
    """A BERT MLM workload in training mode, on the current default device / fake mode."""
    model = BertForMaskedLM(config)
    model.train()
    return Workload(model=model, make_batch=partial(make_mlm_batch, config), loss_fn=mlm_loss)
