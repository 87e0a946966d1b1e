"""The precision studies run for real on small settings: the tiny model's gradients against
fp16's limits, and the same small model trained in each precision, deterministically."""

from __future__ import annotations

import json

import pytest

from generator.measure.studies import training_curves, underflow

SMALL = {"steps": 40, "batch_size": 16, "eval_size": 64, "max_points": 20}


def test_underflow_study_on_the_tiny_model() -> None:
    data = underflow.run({"model": "tiny", "batch_size": 2, "seq_len": 16})
    groups = {g["name"]: g for g in data["groups"]}
    assert {"parameters", "activations", "embeddings", "layernorm"} <= set(groups)
    layer_groups = [g for n, g in groups.items() if n not in ("parameters", "activations")]
    assert sum(g["values"] for g in layer_groups) == groups["parameters"]["values"]
    for group in groups.values():
        assert sum(group["log2_counts"]) == group["values"]
        for cast in group["casts"].values():
            assert 0 <= cast["zero_fraction"] + cast["subnormal_fraction"] <= 1
    json.dumps(data)  # a study's data is JSON as it is


def test_training_is_deterministic_and_learns() -> None:
    first, second = training_curves.run(SMALL), training_curves.run(SMALL)

    def strip(data: dict) -> list[dict]:
        return [{k: v for k, v in run.items() if k != "seconds"} for run in data["runs"]]

    assert strip(first) == strip(second)
    assert first["every"] == 2 and len(first["step"]) == 20 and first["step"][-1] == 40
    for run in first["runs"]:
        assert len(run["loss"]) == 20
        assert run["loss"][-1] < run["loss"][0] - 0.3, run["precision"]
    base, bf16, reference = first["runs"]
    assert (base["precision"], bf16["precision"], reference["reference"]) == \
        ("fp32", "amp-bf16", True)
    assert base["loss"][0] == pytest.approx(bf16["loss"][0], abs=0.02)  # same start
    assert reference["loss"] != base["loss"]  # another seed, other weights and batches
