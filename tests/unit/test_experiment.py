"""An experiment and its options, each declared once on `Experiment` (options.py): the flags
of `estimate`, the key and label, the words pages use, the plain step and the levers'
baseline all derive from the declarations; validation reports every problem at once."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from generator.errors import ConfigError
from generator.experiment import (
    Experiment,
    is_plain_step,
    option_words,
    options,
    step_defaults,
)
from generator.experiment.option import parse_size, resolved_optimizer_impl
from generator.site.lever_results import BASELINE as LEVER_BASELINE

TINY = {"model": "tiny", "batch_size": 2, "seq_len": 16}
CJK = re.compile(r"[\u4e00-\u9fff]")


def test_every_declared_option_is_a_flag_of_estimate(cli, tmp_path: Path) -> None:
    proc = cli(["estimate", "--help"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    flags = set(re.findall(r"--[a-z-]+", proc.stdout))
    declared = options()
    assert declared and list(declared) == [f.name for f in fields(Experiment)
                                           if f.name in declared]
    for name, opt in declared.items():
        flag = "--" + name.replace("_", "-")
        assert (flag in flags) == (opt.cli or name == "model"), flag
        if opt.cli:
            assert opt.help.split(" (")[0][:20] in " ".join(proc.stdout.split()), name


def test_choices_hold_their_defaults() -> None:
    defaults = {f.name: f.default for f in fields(Experiment)}
    for name, opt in options().items():
        if opt.choices is not None:
            assert defaults[name] in opt.choices or defaults[name] == "", name
            assert len(set(opt.choices)) == len(opt.choices), name


def test_the_plain_step_is_every_step_option_at_its_default() -> None:
    plain = Experiment(**TINY)
    defaults = step_defaults(TINY["model"])
    assert set(defaults) == {n for n, o in options().items() if o.step_option}
    assert all(getattr(plain, name) == value for name, value in defaults.items())
    assert is_plain_step(plain.to_dict()) and plain.step_options() == []
    assert option_words(plain.to_dict()) == []
    changed = Experiment(**TINY, checkpointing=True, attention="sdpa")
    assert not is_plain_step(changed.to_dict())
    en, zh = option_words(changed.to_dict(), "en"), option_words(changed.to_dict(), "zh")
    assert len(en) == len(zh) == 2 and en[0] == "SDPA attention"  # declaration order: attention first
    assert not CJK.search(" ".join(en)) and CJK.search(zh[1])


def test_a_key_names_every_option_that_differs_from_a_plain_step() -> None:
    plain = Experiment(**TINY)
    assert plain.key == "tiny-b2-s16-fp32-adamw-estimate"
    assert Experiment(**TINY, device="cpu").key == plain.key + "-as-cpu"
    assert Experiment(**TINY, backend="cpu").key == "tiny-b2-s16-fp32-adamw-cpu"
    every = Experiment(**TINY, attention="sdpa", checkpointing=True, zero_grad="zeros",
                       optimizer_impl="fused", gpu_memory=2**20)
    tags = every.key.removeprefix(plain.key + "-").split("-")
    assert tags == ["sdpa", "ckpt", "grad", "zeros", "fused", "budget", "1mib"]
    seen: dict[str, tuple[str, str]] = {}
    for name, opt in options().items():  # every value of every choice, one at a time
        # loss scaling is a choice of amp-fp16 steps only, 4-bit weights of LoRA steps,
        # FSDP2's policy of FSDP2 steps, the checkpoint policy of checkpointed steps
        base = {**TINY, "precision": "amp-fp16"} if name == "loss_scaling" else \
            {**TINY, "lora_rank": 4} if name == "quantization" else \
            {**TINY, "parallel": "fsdp2"} if name == "fsdp_mixed_precision" else \
            {**TINY, "checkpointing": True} if name == "checkpoint_policy" else TINY
        for value in (opt.choices or ()) if name != "backend" else ():
            exp = Experiment(**{**base, name: value})
            plain_again = getattr(exp, name) == getattr(Experiment(**base), name)
            assert (exp.key == Experiment(**base).key) == plain_again, (name, value)
            assert plain_again or exp.key not in seen, (name, value, seen.get(exp.key))
            seen[exp.key] = (name, value)
    assert Experiment.from_dict(every.to_dict()) == every


def test_a_label_reads_as_words() -> None:
    label = Experiment(**TINY, checkpointing=True, gpu_memory=24 * 2**30).label
    parts = ["tiny", "batch 2", "seq 16", "fp32", "adamw", "checkpointing", "estimate (cuda)",
             "in 24 GiB"]
    assert [label.index(part) for part in parts] == sorted(label.index(p) for p in parts)
    assert Experiment(**TINY, backend="cpu").label.endswith(" on cpu")


def test_attention_is_the_models_own_unless_chosen() -> None:
    """Hugging Face models get what transformers picks ("auto", made when it builds the
    model), built-in ones eager; either is the plain step, and keys do not name it."""
    hf = Experiment(model="hf:gpt2", batch_size=1, seq_len=8)
    assert hf.attention == "auto" and is_plain_step(hf.to_dict())
    assert hf.key == "hf_gpt2-b1-s8-fp32-adamw-estimate"
    eager = Experiment(model="hf:gpt2", batch_size=1, seq_len=8, attention="eager")
    assert eager.key.endswith("-eager") and option_words(eager.to_dict()) == ["eager attention"]
    built_in = Experiment(**TINY, attention="auto")
    assert built_in.attention == "eager" and built_in == Experiment(**TINY)
    assert Experiment.from_dict(hf.to_dict()) == hf
    with pytest.raises(ConfigError, match="unknown attention 'flash'"):
        Experiment(**TINY, attention="flash")


def test_the_levers_baseline_is_the_article_step_with_cudas_kernels() -> None:
    assert LEVER_BASELINE["precision"] == "fp32" and LEVER_BASELINE["checkpointing"] is False
    assert LEVER_BASELINE["optimizer_impl"] == resolved_optimizer_impl("auto", "cuda")
    assert resolved_optimizer_impl("auto", "cpu") == "for-loop"
    assert resolved_optimizer_impl("fused", "cpu") == "fused"
    for name, value in LEVER_BASELINE.items():
        assert name in step_defaults("bert-base") or name in ("precision", "optimizer"), name
        opt = options()[name]
        assert opt.choices is None or value in opt.choices, name


def test_validation_reports_every_problem_at_once() -> None:
    with pytest.raises(ConfigError) as caught:
        Experiment(model=" ", batch_size=0, seq_len=True, precision="fp8", optimizer="lion",
                   checkpointing="yes", gpu_memory=-1)
    message = str(caught.value)
    for needle in ("model", "batch_size", "seq_len", "fp8", "lion", "checkpointing",
                   "gpu_memory"):
        assert needle in message, needle
    with pytest.raises(ConfigError, match="contradicts"):
        Experiment(**TINY, backend="cpu", device="cuda")
    with pytest.raises(ConfigError, match="2⁶³"):
        Experiment(**{**TINY, "batch_size": 2**63})
    with pytest.raises(ConfigError, match="allocation_trace needs the estimate backend"):
        Experiment(**TINY, device="cpu", allocation_trace=True)
    with pytest.raises(ConfigError, match="allocation_trace must be true or false"):
        Experiment(**TINY, allocation_trace="yes")


def test_a_trace_is_its_own_result_but_the_same_step() -> None:
    plain, traced = Experiment(**TINY), Experiment(**TINY, allocation_trace=True)
    assert traced.key == plain.key + "-trace"
    assert traced.step_options() == plain.step_options()


def test_from_dict_refuses_unknown_and_missing_fields_and_reads_sizes() -> None:
    with pytest.raises(ConfigError, match="unknown experiment field.*learning_rate"):
        Experiment.from_dict({**TINY, "learning_rate": 0.1})
    with pytest.raises(ConfigError, match="missing seq_len"):
        Experiment.from_dict({"model": "tiny", "batch_size": 2})
    assert Experiment.from_dict({**TINY, "gpu_memory": "1MiB"}).gpu_memory == 2**20


@pytest.mark.parametrize(("text", "nbytes"), [
    ("24GiB", 24 * 2**30), ("80GB", 80 * 10**9), ("1.5 MiB", 3 * 2**19), ("512kib", 2**19),
    ("2", 2 * 2**30), ("100B", 100), ("1TB", 10**12),
])
def test_sizes_in_every_unit(text: str, nbytes: int) -> None:
    assert parse_size(text) == nbytes


@pytest.mark.parametrize(("text", "needle"), [("24XB", "unknown memory unit 'XB'"),
                                              ("-1GiB", "cannot read"), ("0GiB", "positive"),
                                              ("", "cannot read"), ("GiB", "cannot read")])
def test_unreadable_sizes(text: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        parse_size(text)
