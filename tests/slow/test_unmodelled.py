"""What an estimate knows it leaves out is said where its figures are read: cuDNN's reserve
space of recurrent layers on CUDA (no size rule to cite), in the result's notes, in both
languages, and below the `estimate` command's figures."""

from __future__ import annotations

import pytest
from torch import nn

from generator.measure.emulation.cpu_kernels import CUDNN_RESERVE_NOTE, unmodelled
from generator.results.notes import text


@pytest.mark.parametrize("layer", [nn.LSTM(4, 8), nn.GRU(4, 8), nn.RNN(4, 8)])
def test_recurrent_layers_on_cuda_are_said_to_miss_cudnns_reserve(layer: nn.Module) -> None:
    model = nn.Sequential(nn.Linear(4, 4), layer)
    assert unmodelled(model, "cuda") == [CUDNN_RESERVE_NOTE]
    assert unmodelled(model, "cpu") == []  # oneDNN's workspace is modelled there
    assert unmodelled(nn.Linear(4, 4), "cuda") == []


def test_the_note_reads_in_both_languages() -> None:
    assert CUDNN_RESERVE_NOTE["id"] == "not_modelled_cudnn_reserve"
    assert text(CUDNN_RESERVE_NOTE).startswith("not modelled: cuDNN's reserve space")
    assert text(CUDNN_RESERVE_NOTE, "zh").startswith("没有建模：循环层")


def test_the_estimate_command_prints_what_it_leaves_out(cli, tmp_path) -> None:
    recurrent = cli(["estimate", "gru-lm", "--batch-size", "2", "--seq-len", "8"], tmp_path)
    assert recurrent.returncode == 0
    assert text(CUDNN_RESERVE_NOTE) in recurrent.stdout
    on_cpu = cli(["estimate", "gru-lm", "--batch-size", "2", "--seq-len", "8",
                  "--device", "cpu"], tmp_path)
    assert on_cpu.returncode == 0 and "not modelled" not in on_cpu.stdout
