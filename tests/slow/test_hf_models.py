"""Hugging Face models (`hf:<source>`) on fake tensors: each bad input as one line, parity
with the built-in BERT and GPT-2, where a config is found, the task heads and their batches,
and the `models` listing. Real runs and a whole build: slow/test_hf_runs.py.

Nothing here may reach the network, nor read the machine's own Hugging Face cache: every
test runs offline with an empty HF_HOME of its own (the `offline` fixture: hf_offline.py).
Families beyond dense text models (experts, convolutional vision): test_hf_families.py.
"""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers", reason="hf: models need transformers (pip install -e '.[hf]')")

import huggingface_hub  # comes with transformers
import torch
from conftest import assert_refused
from hf_offline import estimate_args, go_offline, write_config
from huggingface_hub import constants
from torch._subclasses.fake_tensor import FakeTensorMode

from generator.experiment import Experiment
from generator.measure.models import resolve_model
from generator.measure.run import measure_to_result

SHIPPED = Path(__file__).resolve().parents[2] / "generator" / "measure" / "models" / "hf_configs"
TINY_GPT2 = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_layer": 2,
             "n_embd": 64, "n_head": 2, "vocab_size": 1000, "n_positions": 128,
             "bos_token_id": 0, "eos_token_id": 0}
TINY_VIT = {"model_type": "vit", "architectures": ["ViTForImageClassification"],
            "image_size": 32, "patch_size": 8, "hidden_size": 32, "num_hidden_layers": 2,
            "num_attention_heads": 2, "intermediate_size": 64}
# OpenAI GPT has no SDPA attention in transformers 5.23 (its _supports_sdpa is False).
TINY_OPENAI_GPT = {"model_type": "openai-gpt", "architectures": ["OpenAIGPTLMHeadModel"],
                   "n_layer": 2, "n_embd": 64, "n_head": 2, "vocab_size": 1000,
                   "n_positions": 128}


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Every test offline, with an empty Hugging Face cache; returns HF_HOME."""
    return go_offline(monkeypatch, tmp_path / "hf-home")


@functools.cache
def estimate(model: str, seq_len: int = 128, **options: Any) -> dict[str, Any]:
    """One estimate (fake tensors, batch 2), kept: several tests compare the same steps."""
    result = measure_to_result(Experiment(model=model, batch_size=2, seq_len=seq_len, **options))
    assert result["error"] is None, result["error_detail"]
    return result


# --------------------------------------------------------------------------- bad input


def test_an_unknown_hub_id_offline_says_where_it_looked(cli, project: Path) -> None:
    line = assert_refused(cli, project, estimate_args("hf:no-such-org/no-such-model"),
                          "no-such-org/no-such-model", "config.json", "offline")
    # each place of the search order, so the user knows what to provide
    assert "cache" in line and "shipped" in line and "path" in line


def test_the_hubs_retries_without_a_network_are_not_shown(
        cli, project: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """huggingface_hub logs each of its retries (six lines and 23 s without a network), which
    Python prints on stderr: the user gets the one line, which says why."""
    import logging

    def unreachable(*args: Any, **kwargs: Any) -> None:
        logging.getLogger("huggingface_hub.utils._http").warning(
            "'[Errno -2] Name or service not known' thrown while requesting HEAD …")
        raise OSError("no network")

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", unreachable)
    assert_refused(cli, project, estimate_args("hf:no-such-org/no-such-model"),
                   "the Hub could not give it", "no network")
    assert not [r for r in caplog.records if r.name.startswith("huggingface_hub")]


@pytest.mark.parametrize(("make", "needles"), [
    (lambda d: d, ("no config.json",)),  # a folder without one
    (lambda d: d / "missing.json", ("no such file",)),
    (lambda d: write_config(d / "config.json", "{not json"), ("not valid JSON",)),
    (lambda d: write_config(d / "config.json", {"n_layer": 2}), ("no model_type",)),
    (lambda d: write_config(d / "config.json", {"model_type": "no-such-type"}),
     ("no-such-type", "unknown to transformers")),
    (lambda d: write_config(d / "config.json", {"model_type": "bert", "architectures": [
        "BertForNextSentencePrediction"]}), ("BertForNextSentencePrediction", "hf_task")),
    (lambda d: write_config(d / "config.json", {"model_type": "bert"}),
     ("no supported task head", "hf_task")),
], ids=["folder", "missing", "not-json", "no-model-type", "unknown-type", "nsp-head", "no-heads"])
def test_a_bad_config_is_one_line(cli, project: Path, tmp_path: Path, make, needles) -> None:
    (tmp_path / "cfg").mkdir()
    source = make(tmp_path / "cfg")
    assert_refused(cli, project, estimate_args(f"hf:{source}"), *needles)


def test_a_task_the_model_lacks(cli, project: Path) -> None:
    line = assert_refused(cli, project, estimate_args("hf:gpt2", "--hf-task",
                                                      "image-classification"),
                          "image-classification", "hf:gpt2")
    # the tasks it does have, which --hf-task could name instead (not contrastive: every
    # model has AutoModel's bare class, GPT-2's is no CLIP)
    assert "it has: causal-lm, sequence-classification (--hf-task)" in line


def test_a_sequence_longer_than_the_positions(cli, project: Path) -> None:
    assert_refused(cli, project, estimate_args("hf:gpt2", seq_len=1025), "1025", "1024")


def test_sdpa_for_a_model_without_it(cli, project: Path, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from transformers import OpenAIGPTLMHeadModel

    # Should a later transformers give OpenAI GPT SDPA, the refusal is still exercised.
    monkeypatch.setattr(OpenAIGPTLMHeadModel, "_supports_sdpa", False)
    config = write_config(tmp_path / "openai-gpt.json", TINY_OPENAI_GPT)
    assert_refused(cli, project, estimate_args(f"hf:{config}", "--attention", "sdpa"),
                   "sdpa", "OpenAIGPTLMHeadModel", "eager")


def test_estimate_says_which_attention_ran(cli, project: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path / "gpt2.json", TINY_GPT2)
    chosen = cli(estimate_args(f"hf:{config}"), project)
    assert chosen.returncode == 0, chosen.stderr
    assert "parameters · SDPA attention (transformers' choice)" in chosen.stdout
    eager = cli(estimate_args(f"hf:{config}", "--attention", "eager"), project)
    assert "parameters · eager attention\n" in eager.stdout and "choice" not in eager.stdout
    assert "· batch 2 · seq 128 · fp32 · adamw · eager attention —" in eager.stdout


def test_hf_task_is_refused_for_a_built_in_model(cli, project: Path) -> None:
    assert_refused(cli, project, estimate_args("gpt2-small", "--hf-task", "causal-lm"),
                   "hf_task", "gpt2-small")


def test_a_bad_hf_model_in_a_suite_is_refused_before_anything_runs(cli, project: Path) -> None:
    (project / "hf.toml").write_text('[[experiment]]\nmodel = "hf:no-such-org/no-such-model"'
                                     '\nbatch_size = 2\nseq_len = 16\n', encoding="utf-8")
    assert_refused(cli, project, ["build", "--config", "hf.toml"], "hf.toml",
                   "no-such-org/no-such-model")


def test_without_transformers_hf_models_say_how_to_install(cli, project: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)  # `import transformers` fails
    assert_refused(cli, project, estimate_args("hf:gpt2"), "transformers", "pip install")
    # the built-in models never needed it
    proc = cli(["estimate", "tiny", "--batch-size", 1, "--seq-len", 8], project)
    assert proc.returncode == 0, proc.stderr


# --------------------------------------------------------------------------- parity


@pytest.mark.parametrize("precision", ["fp32", "amp-bf16"])
@pytest.mark.parametrize(("built_in", "hf_name"), [("bert-base", "hf:bert-base-uncased"),
                                                   ("gpt2-small", "hf:gpt2")])
def test_hf_models_match_the_built_in_ones(built_in: str, hf_name: str, precision: str) -> None:
    ours = estimate(built_in, precision=precision)  # eager: the built-in ones' own
    theirs = estimate(hf_name, precision=precision, attention="eager")
    assert theirs["parameter_count"] == ours["parameter_count"]
    assert theirs["peak_bytes"] == pytest.approx(ours["peak_bytes"], rel=0.01)
    # At batch 2 the peak is the optimizer step's, which every model of this size shares:
    # the blocks' activations are where two different forward passes would show. (Their
    # losses differ under CUDA autocast: the built-in GPT-2 takes cross-entropy of the 16-bit
    # logits, as transformers 4.x did, whose log_softmax then stays 16-bit; transformers 5
    # upcasts the logits first. Each is what its own code keeps on CUDA.)
    blocks = [sum(v for k, v in r["module_activation_bytes"].items() if k.startswith("layers"))
              for r in (ours, theirs)]
    assert blocks[1] == pytest.approx(blocks[0], rel=0.01)


# --------------------------------------------------------------------------- resolution


def test_a_local_path_wins_over_the_shipped_config(project: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    config = write_config(project / "gpt2" / "config.json", TINY_GPT2)
    monkeypatch.chdir(project)  # so that "gpt2" names the folder as well as the Hub id
    for source in ("gpt2", "./gpt2", str(config.parent), str(config)):
        spec = resolve_model(f"hf:{source}")
        assert (spec.architecture["layers"], spec.max_seq_len) == (2, 128), source


def test_the_cache_wins_over_the_shipped_config(offline: Path) -> None:
    repo = offline / "hub" / "models--openai-community--gpt2"
    config = write_config(repo / "snapshots" / "0123abcd" / "config.json", TINY_GPT2)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd", encoding="utf-8")
    # the layout huggingface_hub itself reads, so the test's cache is a real one
    assert huggingface_hub.try_to_load_from_cache("openai-community/gpt2",
                                                  "config.json") == str(config)
    spec = resolve_model("hf:openai-community/gpt2")
    assert (spec.architecture["layers"], spec.max_seq_len) == (2, 128)
    assert "cache" in spec.description


def test_shipped_aliases_name_the_same_config() -> None:
    short, full = resolve_model("hf:gpt2"), resolve_model("hf:openai-community/gpt2")
    for spec in (short, full):
        assert "shipped" in spec.description
        assert (spec.architecture["layers"], spec.architecture["hidden"]) == (12, 768)
        assert spec.max_seq_len == 1024
        with FakeTensorMode():
            params = sum(p.numel() for p in spec.build().model.parameters())
        assert params == 124_439_808


def test_every_shipped_config_resolves() -> None:
    names = [p.stem.replace("--", "/") for p in sorted(SHIPPED.glob("*.json"))]
    assert len(names) >= 10
    for name in names:
        assert "shipped" in resolve_model(f"hf:{name}").description, name


# Counted on the meta device by transformers' own classes; Llama-3.1-8B's is the stored
# parameter count its Hub safetensors metadata gives (SOURCES.md).
SHIPPED_PARAMETERS = {
    "meta-llama/Llama-3.1-8B": 8_030_261_248, "meta-llama/Llama-3.2-3B": 3_212_749_824,
    "meta-llama/Llama-3.2-1B": 1_235_814_400, "Qwen/Qwen2.5-0.5B": 494_032_768,
    "Qwen/Qwen2.5-1.5B": 1_543_714_304, "Qwen/Qwen2.5-3B": 3_085_938_688,
    "Qwen/Qwen2.5-7B": 7_615_616_512, "mistralai/Mistral-7B-v0.3": 7_248_023_552,
    "google/gemma-2-2b": 2_614_341_888, "microsoft/phi-2": 2_779_683_840,
    # the Mixture-of-Experts one; its Hub weight file, 2,669,283,096 bytes of bf16, agrees
    "ibm-granite/granite-3.0-1b-a400m-instruct": 1_334_628_352,
}


def test_every_shipped_config_builds_with_its_parameter_count() -> None:
    from generator.measure.models.hf import shipped_summary

    counts = {row["id"]: row["parameters"] for row in shipped_summary()}
    assert set(counts) == {p.stem.replace("--", "/") for p in SHIPPED.glob("*.json")}
    assert {name: counts[name] for name in SHIPPED_PARAMETERS} == SHIPPED_PARAMETERS


# --------------------------------------------------------------------------- tasks and batches


@pytest.mark.parametrize(("source", "options", "head", "seq_len", "labels", "blocks"), [
    ("gpt2", {}, "GPT2LMHeadModel", 16, (2, 16), {"layers.11"}),
    ("bert-base-uncased", {}, "BertForMaskedLM", 16, (2, 16), {"layers.11"}),
    ("t5-base", {}, "T5ForConditionalGeneration", 16, (2, 16), {"encoder.11", "decoder.11"}),
    ("bert-base-uncased", {"hf_task": "sequence-classification"},
     "BertForSequenceClassification", 16, (2,), {"layers.11"}),
    ("vit", {}, "ViTForImageClassification", 32, (2,), {"layers.1"}),
], ids=["causal-lm", "masked-lm", "seq2seq-lm", "sequence-classification", "image-classification"])
def test_task_heads_and_their_batches(tmp_path: Path, source: str, options: dict[str, str],
                                      head: str, seq_len: int, labels: tuple[int, ...],
                                      blocks: set[str]) -> None:
    if source == "vit":
        source = str(write_config(tmp_path / "vit" / "config.json", TINY_VIT))
    name = f"hf:{source}"
    with FakeTensorMode():
        workload = resolve_model(name).build(**options)
        inputs, _ = workload.make_batch(2, seq_len, torch.device("cpu"))
    assert type(workload.model).__name__ == head
    assert workload.model.training
    assert tuple(inputs["labels"].shape) == labels
    if "pixel_values" in inputs:  # seq_len is the image side
        assert tuple(inputs["pixel_values"].shape) == (2, 3, seq_len, seq_len)
    else:
        assert tuple(inputs["input_ids"].shape) == (2, seq_len)
    result = estimate(name, seq_len, **options)
    assert blocks <= set(result["module_activation_bytes"])
    assert result["category_max_bytes"]["activations"] > 0


def test_checkpointing_lowers_the_activations() -> None:
    plain = estimate("hf:gpt2")["category_max_bytes"]["activations"]
    checkpointed = estimate("hf:gpt2", checkpointing=True)["category_max_bytes"]["activations"]
    assert checkpointed < 0.5 * plain  # one block input kept per block, not its insides


@pytest.mark.parametrize(("model", "classes", "share"),
                         [("hf:gpt2", ("GPT2Block",), 0.5), ("hf:gpt2", ("GPT2Attention",), 1),
                          ("hf:t5-base", ("T5Block",), 0.5)])
def test_checkpointing_attention_by_class_runs_without_the_cache(model, classes, share) -> None:
    """An attention layer recomputed in backward would add its keys and values to the cache a
    second time (attention then sees twice the sequence): the model runs without the cache,
    as under Hugging Face's own checkpointing, T5's decoder stack (a config of its own) too,
    and keeps less than the plain step."""
    plain = estimate(model)["category_max_bytes"]["activations"]
    by_class = estimate(model, checkpoint_classes=classes)
    assert by_class["category_max_bytes"]["activations"] < share * plain


def test_sdpa_runs_and_keeps_no_attention_matrix() -> None:
    eager = estimate("hf:gpt2", attention="eager")["category_max_bytes"]["activations"]
    sdpa = estimate("hf:gpt2", attention="sdpa")["category_max_bytes"]["activations"]
    # eager keeps scores, probabilities and a dropout mask of (2, 12, 128, 128) per layer
    assert sdpa < eager - 12 * 2 * 12 * 128 * 128 * 4


def test_left_to_the_model_attention_is_what_transformers_picks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As from_pretrained builds it for users: GPT-2 with sdpa, OpenAI GPT (no SDPA in
    transformers) eager; the result says which ran, and the figures are that attention's."""
    from transformers import OpenAIGPTLMHeadModel

    monkeypatch.setattr(OpenAIGPTLMHeadModel, "_supports_sdpa", False)  # as in 5.23
    gpt2 = f"hf:{write_config(tmp_path / 'gpt2.json', TINY_GPT2)}"
    chosen = estimate(gpt2)
    assert chosen["experiment"]["attention"] == "auto" and chosen["attention"] == "sdpa"
    assert chosen["architecture"]["attention"] == "sdpa"
    sdpa = estimate(gpt2, attention="sdpa")
    assert chosen["peak_bytes"] == sdpa["peak_bytes"]
    assert chosen["module_activation_bytes"] == sdpa["module_activation_bytes"]
    assert estimate(gpt2, attention="eager")["peak_bytes"] > sdpa["peak_bytes"]
    config = write_config(tmp_path / "openai-gpt.json", TINY_OPENAI_GPT)
    assert estimate(f"hf:{config}")["attention"] == "eager"


# --------------------------------------------------------------------------- the listing


def test_models_lists_the_shipped_configs(cli, tmp_path: Path) -> None:
    proc = cli(["models"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    for path in SHIPPED.glob("*.json"):
        assert path.stem.replace("--", "/") in proc.stdout, path.stem
    # GPT-2's line gives its parameters, layers and hidden size
    lines = [line for line in proc.stdout.splitlines()
             if re.search(r"gpt2(?![\w-])", line)]
    assert len(lines) == 1, proc.stdout
    assert re.search(r"124[,.]4|124M|124 ?M", lines[0]), lines[0]
    assert re.search(r"\b12\b", lines[0]) and re.search(r"\b768\b", lines[0]), lines[0]
    assert "None" not in proc.stdout, proc.stdout


def test_the_listing_describes_each_stack() -> None:
    from generator.measure.models.hf import load_config, stacks_words

    def words(hub_id: str) -> str:
        return stacks_words(load_config("hf:" + hub_id)[0])

    # CLIP's towers have configs of their own; T5's decoder has its own depth
    assert words("openai/clip-vit-large-patch14-336") == (
        "vision 24 layers, hidden 1024; text 12 layers, hidden 768")
    assert words("t5-large") == "24+24 layers (encoder+decoder), hidden 1024"
    assert words("gpt2") == "12 layers, hidden 768"
