"""The Hugging Face configs shipped with the package (hf_configs/): each one is a transformers
config.json that transformers' own classes read (no remote code), has its provenance in
SOURCES.md, and every alias finds a shipped file. Parsing only, so fast; building each model
and counting its parameters: slow/test_hf_models.py."""

from __future__ import annotations

import json
import re

import pytest

from generator.measure.models.hf_config import ALIASES, SHIPPED, shipped_path

CONFIGS = sorted(SHIPPED.glob("*.json"))
SOURCES = (SHIPPED / "SOURCES.md").read_text(encoding="utf-8")
# The provenance table's rows: | file | Hub id | Hub config URL |
TABLE = re.findall(r"^\| (\S+\.json) \| ([^|]+) \| (https://huggingface\.co/\S+) \|$",
                   SOURCES, flags=re.MULTILINE)


def _hub_id(path) -> str:
    return path.stem.replace("--", "/")


def test_the_package_ships_the_models_people_fine_tune() -> None:
    ids = {_hub_id(path) for path in CONFIGS}
    assert {"meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.2-3B", "Qwen/Qwen2.5-7B",
            "mistralai/Mistral-7B-v0.3", "Qwen/Qwen2.5-0.5B", "google/gemma-2-2b"} <= ids


@pytest.mark.parametrize("path", CONFIGS, ids=lambda path: path.stem)
def test_each_config_is_a_config_json_without_remote_code(path) -> None:
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    assert isinstance(data, dict) and isinstance(data.get("model_type"), str)
    assert "auto_map" not in data  # the model must build from transformers' own classes
    assert text.endswith("}\n") and "\r" not in text  # the one stated difference: a final newline


@pytest.mark.parametrize("path", CONFIGS, ids=lambda path: path.stem)
def test_each_config_has_its_sources(path) -> None:
    rows = [row for row in TABLE if row[0] == path.name]
    assert len(rows) == 1, f"{path.name}: no single row in SOURCES.md's table"
    hub_id = _hub_id(path)
    assert hub_id in rows[0][1] and rows[0][2].endswith("/blob/main/config.json")
    # its own entry: a bullet under "Per model", or a section of its own
    assert f"- **{hub_id}**" in SOURCES or f"## One reconstructed config: {path.name}" in SOURCES


def test_the_table_names_no_missing_file() -> None:
    assert sorted(row[0] for row in TABLE) == sorted(path.name for path in CONFIGS)


@pytest.mark.parametrize(("short", "full"), sorted(ALIASES.items()))
def test_both_names_of_an_alias_find_the_same_shipped_file(short: str, full: str) -> None:
    found = shipped_path(short)
    assert found is not None and found == shipped_path(full)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda path: path.stem)
def test_transformers_reads_each_config(path) -> None:
    """Read from the file itself, as load_config reads a shipped config, without looking in
    this machine's Hugging Face cache first."""
    transformers = pytest.importorskip("transformers")
    from generator.measure.models.hf import task_of

    data = json.loads(path.read_text(encoding="utf-8"))
    config = transformers.CONFIG_MAPPING[data["model_type"]].from_dict(data)
    assert type(config).__module__.startswith("transformers.models.")
    task_of(config, _hub_id(path))  # its architectures name a head the tool builds


@pytest.mark.parametrize("deeper, words", [
    ({"num_hidden_layers": 10**9}, "num_hidden_layers 1,000,000,000 is more layers than the "
                                   "1,000 an estimate builds .* about 16 years"),
    ({"text_config": {"num_hidden_layers": 1001}}, r"text_config\.num_hidden_layers 1,001 .*"
                                                   "about 8 minutes"),
])
def test_a_config_too_deep_to_build_is_refused_before_it_is_read(tmp_path, deeper: dict,
                                                                 words: str) -> None:
    """A config.json whose depth no estimate could build in time is refused in one line that
    says what it would take, before transformers reads it (Qwen2's config makes a list per
    layer); the deepest shipped config is well inside the bound."""
    pytest.importorskip("transformers")
    from generator.errors import ModelError
    from generator.measure.models.hf import MOST_LAYERS, _layer_counts, load_config

    data = json.loads(shipped_path("Qwen/Qwen2.5-0.5B").read_text(encoding="utf-8"))
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**data, **deeper}), encoding="utf-8")
    with pytest.raises(ModelError, match=words):
        load_config(f"hf:{path}")
    deepest = max(max(_layer_counts(json.loads(p.read_text(encoding="utf-8"))).values())
                  for p in CONFIGS)
    assert deepest < MOST_LAYERS

