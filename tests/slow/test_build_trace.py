"""A model built on the GPU (`built_on_device`): what building frees stays in the caching
allocator's cache when training starts (build_trace.py, allocator_replay.py). The published H100
runs build their models that way; a model loaded elsewhere and moved arrives as its
parameters alone, the default."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from generator.errors import ConfigError
from generator.experiment import Experiment, option_words
from generator.measure.tracking import build_trace
from generator.results.notes import note, text

MIB = 2**20


class TiedHead(nn.Module):
    """An embedding and an output layer whose weight tying replaces, as transformers ties."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(100, 32)
        self.head = nn.Linear(32, 100, bias=False)
        self.head.weight = self.embed.weight


def test_building_records_the_weight_that_tying_replaced_as_freed() -> None:
    with build_trace.traced(True) as building:
        model = TiedHead()
    lives = building.lives
    assert [life.nbytes for life in lives] == [100 * 32 * 4, 100 * 32 * 4]
    kept, replaced = lives
    assert kept.died is None and replaced.died is not None
    assert kept.key == id(model.embed.weight.untyped_storage())
    del model  # after the block, deaths belong to the steps' trackers, not the building's
    assert kept.died is None


def test_under_fake_tensors_only_the_modelled_devices_storages_count() -> None:
    """An estimate computes small constants for real while the model is built
    (fake_build.py); those real tensors live on the estimating machine, not on the GPU."""
    from torch._subclasses.fake_tensor import FakeTensorMode, unset_fake_temporarily

    with FakeTensorMode(), build_trace.traced(True) as building:
        fake = torch.zeros(64)
        with unset_fake_temporarily():
            real = torch.zeros(1000)
        del real
    assert [life.nbytes for life in building.lives] == [64 * 4]
    assert building.lives[0].key == id(fake.untyped_storage())


def test_nothing_is_traced_for_a_model_that_arrives_built() -> None:
    with build_trace.traced(False) as building:
        TiedHead()
    assert building is None


def test_a_16_bit_build_never_holds_fp32_weights_and_the_default_comes_back() -> None:
    with build_trace.traced(True) as building, build_trace.built_in(torch.float16):
        model = TiedHead()
    assert model.embed.weight.dtype == torch.float16 and torch.get_default_dtype() == torch.float32
    assert {life.nbytes for life in building.lives} == {100 * 32 * 2}


def test_the_option_names_the_step_and_needs_a_cuda_step() -> None:
    exp = Experiment(model="tiny", batch_size=2, seq_len=16, built_on_device=True)
    assert exp.key.endswith("-on-device") and "built on the GPU" in exp.label
    assert option_words(exp.to_dict()) == ["model built on the GPU"]
    assert option_words(exp.to_dict(), "zh") == ["模型直接在 GPU 上构建"]
    assert Experiment.from_dict(exp.to_dict()) == exp
    for where in ({"device": "cpu"}, {"backend": "cpu"}):
        with pytest.raises(ConfigError, match="built_on_device .* needs a CUDA step"):
            Experiment(model="tiny", batch_size=2, seq_len=16, built_on_device=True, **where)
    with pytest.raises(ConfigError, match="built_on_device must be true or false"):
        Experiment(model="tiny", batch_size=2, seq_len=16, built_on_device="yes")


def test_the_note_reads_in_both_languages() -> None:
    said = note("built_on_device", freed_bytes=2000 * MIB)
    assert "building it freed 1.95 GiB" in text(said)
    zh = text(said, "zh")
    assert "1.95 GiB" in zh and "权重绑定" in zh


transformers = pytest.importorskip("transformers", reason="hf: models need transformers "
                                   "(pip install -e '.[hf]')")
from hf_offline import go_offline, write_config  # noqa: E402

#: Tied input and output embeddings: 1000 × 64 weights that building makes twice.
TINY_GPT2 = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_layer": 2,
             "n_head": 2, "n_embd": 64, "vocab_size": 1000, "n_positions": 128}


@pytest.fixture(scope="module")
def estimate(tmp_path_factory: pytest.TempPathFactory):
    config = write_config(tmp_path_factory.mktemp("built") / "config.json", TINY_GPT2)

    @functools.cache
    def estimated(**kw: Any) -> dict[str, Any]:
        from generator.measure.backends import measure

        return measure(Experiment(model=f"hf:{config.parent}", batch_size=2, seq_len=16, **kw))
    return estimated


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return go_offline(monkeypatch, tmp_path / "hf-home")


@pytest.mark.parametrize("precision, itemsize", [("fp32", 4), ("fp16", 2)])
def test_a_model_built_on_the_gpu_starts_with_its_untied_head_cached(
        estimate, precision: str, itemsize: int) -> None:
    """GPT-2's output layer is built, then tied to the input embedding: its own weight is
    what the allocator holds free when the first step starts, in the dtype the model is
    built in (fp16 from the start: no fp32 weights to free). The step's tensors are the same
    either way; only where they land can change."""
    moved = estimate(precision=precision)
    built = estimate(precision=precision, built_on_device=True)
    assert built["allocator"]["freed_while_building_bytes"] == 1000 * 64 * itemsize
    assert "freed_while_building_bytes" not in moved["allocator"]
    assert built["peak_bytes"] == moved["peak_bytes"]
    assert built["allocator"]["peak_allocated_bytes"] == moved["allocator"]["peak_allocated_bytes"]
    assert {"id": "built_on_device", "values": {
        "freed_bytes": built["allocator"]["freed_while_building_bytes"]}} in built["notes"]
