"""A parallel strategy is one record (generator/experiment/strategies.py), read by the
experiment's option and checks, the command line, the estimate and the scale page: one test
per field that is read, each showing that a reader follows the record."""

from __future__ import annotations

import dataclasses

import pytest

from generator.errors import ConfigError
from generator.experiment import Experiment, options
from generator.experiment.experiment import PARALLEL
from generator.experiment.option import group_size
from generator.experiment.strategies import NONE, STRATEGIES, parallel_help, sharding
from generator.measure.training import parallel
from generator.site.pages import scale
from generator.site.pages.scale.tables import STRATEGY_NAMES
from generator.words import Words


def step(**fields) -> Experiment:
    return Experiment(**{"model": "tiny", "batch_size": 2, "seq_len": 8, **fields})


def changed(monkeypatch: pytest.MonkeyPatch, name: str, **fields) -> None:
    """The record of `name` with `fields` changed, where every reader looks it up."""
    monkeypatch.setitem(STRATEGIES, name, dataclasses.replace(STRATEGIES[name], **fields))


def test_name_is_the_option_s_value_and_the_scale_page_s_line() -> None:
    assert PARALLEL == (NONE, *(s.name for s in STRATEGIES.values()))
    assert options()["parallel"].choices == PARALLEL
    assert scale.ORDER == ("single", *STRATEGIES)


def test_words_name_it_in_headings_and_on_the_scale_page(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name, strategy in STRATEGIES.items():
        assert STRATEGY_NAMES[name] == strategy.words
    changed(monkeypatch, "hsdp", words=Words("hybrid", "混合"))
    assert options()["parallel"].words("hsdp") == Words("hybrid", "混合")


def test_help_is_the_flag_s(monkeypatch: pytest.MonkeyPatch) -> None:
    assert options()["parallel"].help == parallel_help()
    assert "fsdp2-tp (TP within --tp-size GPUs, FSDP2 across)" in parallel_help()
    changed(monkeypatch, "ddp", help="one replica per GPU")
    assert "ddp (one replica per GPU)" in parallel_help()


def test_mesh_names_the_job_s_dimensions(monkeypatch: pytest.MonkeyPatch) -> None:
    exp = step(parallel="hsdp", gpus=16, shard_size=8)
    assert parallel.mesh_shape(exp) == {"replicate": 2, "shard": 8}
    assert parallel.communicators(exp) == 2
    changed(monkeypatch, "hsdp", mesh=("nodes", "gpus"))
    assert parallel.mesh_shape(exp) == {"nodes": 2, "gpus": 8}


def test_group_is_the_option_that_sizes_the_inner_groups(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert group_size(step(parallel="fsdp2-tp", gpus=16, tp_size=4)) == 4
    assert group_size(step(parallel="hsdp", gpus=4)) == 4  # default: one node, or all
    with pytest.raises(ConfigError, match="shard_size is the group size of parallel hsdp, "
                                          "not of 'fsdp2'"):
        step(parallel="fsdp2", gpus=16, shard_size=8)
    # a line with fixed groups starts at one group, not at one GPU
    line = {"parallel": "hsdp", "precision": "fp32"}
    assert not scale.starts_from_one_gpu(line, "fp32")
    changed(monkeypatch, "hsdp", group=None)
    assert scale.starts_from_one_gpu(line, "fp32")


def test_data_parallel_says_whose_options_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    assert sharding() == ["fsdp2", "hsdp", "fsdp2-tp"]
    with pytest.raises(ConfigError, match="cpu_offload is FSDP2's CPUOffloadPolicy: it needs "
                                          "parallel fsdp2, hsdp or fsdp2-tp, not 'ddp'"):
        step(parallel="ddp", gpus=2, cpu_offload=True)
    changed(monkeypatch, "ddp", data_parallel="shard")
    assert step(parallel="ddp", gpus=2, cpu_offload=True).cpu_offload


def test_tensor_parallel_sizes_the_tp_group(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parallel.tp_ranks(step(parallel="fsdp2-tp", gpus=16, tp_size=4)) == 4
    assert parallel.tp_ranks(step(parallel="tp", gpus=2)) == 2
    assert parallel.tp_ranks(step(parallel="hsdp", gpus=16, shard_size=4)) == 1
    changed(monkeypatch, "hsdp", tensor_parallel=True)
    assert parallel.tp_ranks(step(parallel="hsdp", gpus=16, shard_size=4)) == 4


def test_refuses_is_what_the_checks_refuse(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="LoRA is not modelled with tensor parallelism"):
        step(model="hf:gpt2", parallel="tp", gpus=2, lora_rank=8)
    assert step(parallel="ddp", gpus=2, lora_rank=8).lora_rank == 8
    changed(monkeypatch, "ddp", refuses={"lora_rank": "no adapters under DDP here"})
    with pytest.raises(ConfigError, match="no adapters under DDP here"):
        step(parallel="ddp", gpus=2, lora_rank=8)
