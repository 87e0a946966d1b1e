"""Hugging Face model families beyond dense text models, on fake tensors: Mixture-of-Experts
(grouped_mm, fake_kernel_gaps.py), convolutional vision models (drop-path rates read while
they are built, fake_build.py; a stem for embeddings), checkpointing where the model has
none of its own, and a model of no task built here. Against real CPU runs:
slow/test_hf_runs.py. Offline, as test_hf_models.py (hf_offline.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers", reason="hf: models need transformers (pip install -e '.[hf]')")

from conftest import assert_refused
from hf_offline import estimate_args, go_offline, write_config

from generator.experiment import Experiment
from generator.measure.run import measure_to_result

# Mixture of experts: transformers 5 runs the experts with torch's grouped_mm
TINY_MIXTRAL = {"model_type": "mixtral", "architectures": ["MixtralForCausalLM"],
                "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
                "max_position_embeddings": 256, "num_local_experts": 4,
                "num_experts_per_tok": 2}
# Vision models whose build reads drop-path rates from torch.linspace (ConvNeXt) and whose
# stem is no token embedding (ConvNeXt, ResNet)
TINY_CONVNEXT = {"model_type": "convnext", "architectures": ["ConvNextForImageClassification"],
                 "image_size": 32, "hidden_sizes": [16, 32], "depths": [1, 2], "num_stages": 2,
                 "drop_path_rate": 0.1}
TINY_RESNET = {"model_type": "resnet", "architectures": ["ResNetForImageClassification"],
               "embedding_size": 16, "hidden_sizes": [16, 32], "depths": [1, 1]}


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Every test offline, with an empty Hugging Face cache; returns HF_HOME."""
    return go_offline(monkeypatch, tmp_path / "hf-home")


@pytest.mark.parametrize(("precision", "device"), [
    ("fp32", "cuda"), ("amp-fp16", "cuda"), ("bf16", "cuda"), ("fp32", "cpu")])
def test_mixture_of_experts_in_every_precision(tmp_path: Path, precision: str,
                                               device: str) -> None:
    """grouped_mm's meta kernel takes bfloat16 only; the real kernels take float32 and
    float16 too (fake_kernel_gaps.py), so an fp32 or AMP estimate of Mixtral runs."""
    source = write_config(tmp_path / "mixtral" / "config.json", TINY_MIXTRAL)
    result = measure_to_result(Experiment(model=f"hf:{source.parent}", batch_size=2,
                                          seq_len=32, precision=precision, device=device))
    assert result["error"] is None, result["error_detail"]
    expert_weights = 2 * 4 * 3 * 64 * 128  # layers x experts x (gate, up, down) x sizes
    assert result["parameter_count"] > expert_weights


@pytest.mark.parametrize("config", [TINY_CONVNEXT, TINY_RESNET], ids=["convnext", "resnet"])
def test_convolutional_vision_models(tmp_path: Path, config: dict[str, Any]) -> None:
    """ConvNeXt reads its drop-path rates with .tolist() while it is built (fake_build.py);
    neither has token embeddings: their stem counts as the embeddings."""
    source = write_config(tmp_path / config["model_type"] / "config.json", config)
    result = measure_to_result(Experiment(model=f"hf:{source.parent}", batch_size=2,
                                          seq_len=32, precision="amp-bf16"))
    assert result["error"] is None, result["error_detail"]
    assert {"embeddings", "layers.0", "layers.1", "head"} <= set(result["module_activation_bytes"])


def test_checkpointing_a_model_without_its_own_names_the_classes_to_recompute(
        cli, project: Path, tmp_path: Path) -> None:
    source = write_config(tmp_path / "resnet" / "config.json", TINY_RESNET)
    line = assert_refused(cli, project, estimate_args(f"hf:{source.parent}", "--checkpointing",
                                                      seq_len=32),
                          "ResNetForImageClassification", "--checkpoint-classes ResNetStage")
    assert "failed in the training step" not in line  # the user's choice, not the model's bug


def test_a_model_of_no_task_built_here(cli, project: Path, tmp_path: Path) -> None:
    source = write_config(tmp_path / "w2v" / "config.json", {
        "model_type": "wav2vec2", "architectures": ["Wav2Vec2ForSequenceClassification"]})
    assert_refused(cli, project, estimate_args(f"hf:{source}"), "wav2vec2",
                   "fits none of the tasks built here", "audio")
