"""A result's file is named by its experiment's key: two experiments never share one, or each
run would overwrite the other's result while both are reported measured. Keys are lower-case
(a case-insensitive file system folds case) and plain (letters, digits, '.', '_', '-')."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from generator import results
from generator.experiment import Experiment
from generator.experiment.experiment import _shipped_hf_names, key_name
from generator.measure.models.hf_config import shipped_ids

SAFE_KEY = re.compile(r"[a-z0-9][a-z0-9._-]*")


def key(**fields) -> str:
    return Experiment(**{"model": "tiny", "batch_size": 2, "seq_len": 16, **fields}).key


@pytest.mark.parametrize("models", [
    ("hf:/c/small.json", "hf:/c/Small.json"),   # case
    ("hf:./a/b", "hf:./a_b", "hf:./a:b", "hf:./a__b"),  # what the fold turns into '_'
    ("pkg.mod:build", "pkg.mod_build", "pkg/mod:build"),
    ("hf:gpt2", "hf:GPT2", "hf:gpt2-", "hf:gpt2."),
], ids=["case", "punctuation", "factories", "hub-ids"])
def test_names_that_fold_alike_keep_keys_apart(models: tuple[str, ...]) -> None:
    keys = [key(model=model) for model in models]
    assert len(set(keys)) == len(keys), keys
    assert all(SAFE_KEY.fullmatch(k) for k in keys), keys


def test_plain_and_shipped_names_read_as_they_did() -> None:
    """The zoo's names and the shipped Hub ids stay readable (and committed results keep
    their files): no digest after them."""
    assert key() == "tiny-b2-s16-fp32-adamw-estimate"
    assert key_name("hf:meta-llama/Llama-3.1-8B") == "hf_meta-llama_llama-3.1-8b"
    assert key_name("hf:/c/small.json").startswith("hf_c_small.json_")


def test_the_shipped_hub_ids_fold_apart() -> None:
    """key_name folds them without a digest: no two may fold alike, and none may look like
    a folded name with its digest."""
    assert _shipped_hf_names() == {f"hf:{hub_id}" for hub_id in shipped_ids()}
    folded = [key_name(name) for name in _shipped_hf_names()]
    assert len(set(folded)) == len(folded)
    assert not any(re.search(r"_[0-9a-f]{10}$", name) for name in folded)


@pytest.mark.parametrize(("fields", "other"), [
    ({"weight_decay": 0.01}, {"weight_decay": 0.01000001}),
    ({"lora_rank": 4, "lora_dropout": 0.1}, {"lora_rank": 4, "lora_dropout": 0.1000001}),
    ({"weight_decay": 1e20}, {"weight_decay": 1.0000001e20}),
], ids=["weight-decay", "lora-dropout", "large"])
def test_step_options_that_print_alike_keep_keys_apart(fields, other) -> None:
    assert key(**fields) != key(**other)
    assert SAFE_KEY.fullmatch(key(**fields)) and SAFE_KEY.fullmatch(key(**other))


def test_a_class_name_that_is_a_unicode_identifier_gives_a_plain_key() -> None:
    """Class names fold case in the key, as they have since the first results were stored
    (ckpt-llamamlp_llamarmsnorm): two that differ only in case share a key, which the suite
    refuses within one run (jobs/load.py) and measuring refuses across runs (runner.py)."""
    assert SAFE_KEY.fullmatch(key(checkpoint_classes=("Ärger",)))


def test_numbers_in_keys_read_as_they_did() -> None:
    assert key(weight_decay=0.0001).endswith("-wd-0.0001")
    assert key(weight_decay=1e-5).endswith("-wd-1e-05")


def test_every_committed_result_loads_under_its_own_key() -> None:
    """Every committed result holds what load checks (types, the relations of its figures in
    invariants.py, a study's data in study_data.py), and its key is its experiment's key and
    its file's name: a change to Experiment.key would strand them."""
    folder = REPO_ROOT / "docs" / "data"
    found = results.load_all_with_paths(folder)
    assert len(found) > 1000
    for path, result in found:
        assert result["key"] == Experiment.from_dict(result["experiment"]).key, path
    assert {s["study"]["kind"] for s in results.load_studies(folder)} >= {
        "torch_facts", "underflow", "training_curves"}
