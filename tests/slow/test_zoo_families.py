"""The zoo's models beyond transformers, on fake tensors: the small CNN, the conv + LSTM
classifier and the GRU language model: their sizes, blocks, batches and refusals, and an
estimate of each, with checkpointing too. Real steps against the allocator:
slow/test_kernel_estimates.py and the cpu_validation suite."""

from __future__ import annotations

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from generator.errors import ConfigError
from generator.experiment import Experiment
from generator.measure.backends import measure
from generator.measure.models import MODELS, check_model
from generator.measure.tracking.tracker import top_level_blocks

CPU = torch.device("cpu")
FAMILIES = {"convnet-small": (1_166_506, ["stem", "layers.0", "layers.1", "layers.2", "head"]),
            "conv-lstm": (1_038_627, ["frontend", "layers.0", "layers.1", "head"]),
            "gru-lm": (10_448_656, ["embeddings", "layers.0", "layers.1", "lm_head"])}
SMALL = {"convnet-small": 16, "conv-lstm": 12, "gru-lm": 12}


@pytest.mark.parametrize("name", FAMILIES)
def test_size_and_blocks(name: str) -> None:
    with FakeTensorMode():
        model = MODELS[name].build().model
    parameters, blocks = FAMILIES[name]
    assert sum(p.numel() for p in model.parameters()) == parameters
    assert [n for n, _ in top_level_blocks(model)] == blocks
    assert MODELS[name].architecture is None and MODELS[name].max_seq_len is None


def test_batches() -> None:
    (images,), labels = MODELS["convnet-small"].build().make_batch(2, 16, CPU)
    assert images.shape == (2, 3, 16, 16) and labels.shape == (2,)
    (frames,), labels = MODELS["conv-lstm"].build().make_batch(2, 12, CPU)
    assert frames.shape == (2, 12, 40) and labels.max() < 35
    (ids,), target = MODELS["gru-lm"].build().make_batch(2, 12, CPU)
    assert ids.shape == (2, 12) and torch.equal(target, ids[:, 1:])


@pytest.mark.parametrize(("name", "seq_len"), [("convnet-small", 7), ("gru-lm", 1)])
def test_too_short_is_refused(name: str, seq_len: int) -> None:
    with pytest.raises(ConfigError, match="shorter"):
        check_model(Experiment(model=name, batch_size=2, seq_len=seq_len))


@pytest.mark.parametrize("name", FAMILIES)
def test_estimates_run_and_checkpointing_saves_activations(name: str) -> None:
    plain, checkpointed = (measure(Experiment(model=name, batch_size=2, seq_len=SMALL[name],
                                              device="cpu", checkpointing=c))
                           for c in (False, True))
    for result in (plain, checkpointed):
        assert result["peak_bytes"] == sum(result["live_at_peak_bytes"].values())
    assert set(FAMILIES[name][1]) - {"lm_head", "head"} <= set(plain["module_activation_bytes"])
    assert checkpointed["category_max_bytes"]["activations"] < \
        plain["category_max_bytes"]["activations"]
