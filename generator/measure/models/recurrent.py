"""Recurrent models, built from code: a convolutional front end + LSTM classifier, and a GRU
language model. They bring what transformers and CNNs lack: PyTorch's fused RNN kernels,
whose memory the estimate models in generator/measure/emulation/onednn_lstm.py (on the CPU an
LSTM runs oneDNN's kernel, which keeps a workspace for backward; a GRU runs step by step).

`seq_len` is the sequence length: audio frames for `conv-lstm`, tokens for `gru-lm`. Each
recurrent layer is its own block in `layers` (an `nn.ModuleList`), so the tracker attributes
activations per layer and `checkpoint_layers` recomputes each layer in backward.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
from torch import nn

from generator.measure.models.gpt2 import lm_loss
from generator.measure.models.resnet import classification_loss
from generator.measure.models.transformer_parts import seeded_generator
from generator.measure.training.workload import Workload

#: Seed of every batch, so that two runs see identical inputs.
BATCH_SEED = 0


@dataclass(frozen=True)
class ConvLSTMConfig:
    """A keyword-spotting style classifier; defaults are `conv-lstm` (1.0M parameters)."""

    features: int = 40
    """Values per input frame (e.g. 40 log-mel bands)."""
    conv_channels: int = 128
    """Channels of the two 1-D convolutions of the front end (kernel 5, same length)."""
    hidden_size: int = 256
    """Hidden size of each LSTM layer."""
    num_layers: int = 2
    """LSTM layers, one block each."""
    num_classes: int = 35
    """Outputs of the classifier (Speech Commands' 35 words)."""


@dataclass(frozen=True)
class GRULMConfig:
    """A word-level GRU language model; defaults are `gru-lm` (10.4M parameters)."""

    vocab_size: int = 10000
    """Words of the vocabulary (Penn Treebank's 10,000)."""
    embedding_size: int = 256
    """Size of a word embedding, the first GRU layer's input."""
    hidden_size: int = 512
    """Hidden size of each GRU layer."""
    num_layers: int = 2
    """GRU layers, one block each."""


CONV_LSTM = ConvLSTMConfig()
GRU_LM = GRULMConfig()


class Recurrent(nn.Module):
    """One single-layer LSTM or GRU over (batch, time, features), returning its outputs only
    (a block of `layers` passes one tensor on; the final state is not used)."""

    def __init__(self, cell: type[nn.RNNBase], input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.rnn = cell(input_size, hidden_size, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.rnn(x)[0]


class ConvFrontEnd(nn.Module):
    """Two Conv1d(kernel 5, padding 2) + BatchNorm + ReLU over time; (B, T, F) -> (B, T, C)."""

    def __init__(self, config: ConvLSTMConfig) -> None:
        super().__init__()
        c = config.conv_channels
        self.body = nn.Sequential(
            nn.Conv1d(config.features, c, kernel_size=5, padding=2, bias=False),
            nn.BatchNorm1d(c), nn.ReLU(inplace=True),
            nn.Conv1d(c, c, kernel_size=5, padding=2, bias=False),
            nn.BatchNorm1d(c), nn.ReLU(inplace=True))

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        return self.body(frames.transpose(1, 2)).transpose(1, 2)


class MeanPoolHead(nn.Module):
    """The mean of the outputs over time -> a fully connected layer to the class logits."""

    def __init__(self, in_features: int, num_classes: int) -> None:
        super().__init__()
        self.fc = nn.Linear(in_features, num_classes)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.fc(hidden.mean(dim=1))


class ConvLSTM(nn.Module):
    """`model(frames)` -> logits (batch, num_classes); frames are (batch, seq_len, features)."""

    def __init__(self, config: ConvLSTMConfig) -> None:
        super().__init__()
        self.frontend = ConvFrontEnd(config)
        sizes = [config.conv_channels] + [config.hidden_size] * config.num_layers
        self.layers = nn.ModuleList(Recurrent(nn.LSTM, a, b) for a, b in zip(sizes, sizes[1:]))
        self.head = MeanPoolHead(config.hidden_size, config.num_classes)

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        hidden = self.frontend(frames)
        for layer in self.layers:
            hidden = layer(hidden)
        return self.head(hidden)


class GRULanguageModel(nn.Module):
    """`model(ids)` -> next-word logits (batch, seq_len, vocab); ids are (batch, seq_len)."""

    def __init__(self, config: GRULMConfig) -> None:
        super().__init__()
        self.embeddings = nn.Embedding(config.vocab_size, config.embedding_size)
        sizes = [config.embedding_size] + [config.hidden_size] * config.num_layers
        self.layers = nn.ModuleList(Recurrent(nn.GRU, a, b) for a, b in zip(sizes, sizes[1:]))
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        hidden = self.embeddings(ids)
        for layer in self.layers:
            hidden = layer(hidden)
        return self.lm_head(hidden)


def make_frames_batch(config: ConvLSTMConfig, batch_size: int, seq_len: int,
                      device: torch.device | str) -> tuple[tuple[torch.Tensor], torch.Tensor]:
    """`batch_size` sequences of seq_len standard-normal frames (like normalised log-mel
    features) and random class labels, from a seeded CPU generator."""
    generator = seeded_generator(BATCH_SEED)
    frames = torch.randn((batch_size, seq_len, config.features), generator=generator,
                         dtype=torch.float32, device="cpu")
    labels = torch.randint(0, config.num_classes, (batch_size,), generator=generator,
                           dtype=torch.int64, device="cpu")
    return (frames.to(device),), labels.to(device)


def make_words_batch(config: GRULMConfig, batch_size: int, seq_len: int,
                     device: torch.device | str) -> tuple[tuple[torch.Tensor], torch.Tensor]:
    """Random word ids; the target is the same ids shifted left by one (next word)."""
    if seq_len < 2:
        raise ValueError(f"next-word prediction needs seq_len >= 2; got {seq_len}")
    ids = torch.randint(0, config.vocab_size, (batch_size, seq_len),
                        generator=seeded_generator(BATCH_SEED), dtype=torch.int64, device="cpu")
    return (ids.to(device),), ids[:, 1:].to(device)


def build_conv_lstm(config: ConvLSTMConfig = CONV_LSTM) -> Workload:
    """The conv + LSTM classification workload in training mode, on the current default
    device / fake mode."""
    model = ConvLSTM(config)
    model.train()
    return Workload(model=model, make_batch=partial(make_frames_batch, config),
                    loss_fn=classification_loss)


def build_gru_lm(config: GRULMConfig = GRU_LM) -> Workload:
    """The GRU language-model workload in training mode, on the current default device /
    fake mode."""
    model = GRULanguageModel(config)
    model.train()
    return Workload(model=model, make_batch=partial(make_words_batch, config), loss_fn=lm_loss)
