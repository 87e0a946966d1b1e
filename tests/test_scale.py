"""Memory at scale: the LLaMA model, the sharding study (FSDP2 and DDP on a fake process group),
the torchrun script's cuda path, and the scale page rendered from fixture studies."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from markupsafe import Markup
from torch._subclasses.fake_tensor import FakeTensorMode

from generator.site import render

from generator import results
from generator.errors import ModelError
from generator.measure.models import MODELS
from generator.measure.models import resolve_model
from generator.site.pages import scale
from generator.measure.studies import Study
from generator.measure.studies import sharding
from generator.jobs.suite import load_suite
from generator.site.templating import environment
from generator.units import gib

from conftest import REPO_ROOT, cli_env

FIXTURES = Path(__file__).parent / "fixtures" / "scale"
TINY = {"model": "llama-tiny", "batch_size": 2, "seq_len": 16, "device": "cpu",
        "world_sizes": [1, 2, 4, 8]}
STATE = ("parameters", "gradients", "optimizer_state")


# -- the model -------------------------------------------------------------------------------
def test_llama_7b_has_llamas_parameter_count_and_the_zoos_structure():
    with FakeTensorMode():  # 25 GiB of fp32 weights: never for real here
        model = resolve_model("llama-7b").build().model
    assert sum(p.numel() for p in model.parameters()) == 6_738_415_616
    assert [name for name, _ in model.named_children()] == \
        ["embeddings", "layers", "final_norm", "lm_head"]
    assert len(model.layers) == 32
    assert model.lm_head.weight is not model.embeddings.token_embeddings.weight  # untied
    assert not any(name.endswith("bias") for name, _ in model.named_parameters())
    assert MODELS["llama-7b"].architecture == {"layers": 32, "hidden": 4096, "heads": 32,
                                               "intermediate": 11008, "vocab": 32000,
                                               "attention": "sdpa"}


def test_llama_7b_refuses_to_materialise_on_the_cpu():
    with pytest.raises(ModelError, match="estimate"):
        resolve_model("llama-7b").build()


def test_llama_tiny_trains_for_real():
    workload = resolve_model("llama-tiny").build()
    inputs, target = workload.make_batch(2, 16, "cpu")
    loss = workload.loss_fn(workload.model(*inputs), target)
    loss.backward()
    assert torch.isfinite(loss)
    assert all(p.grad is not None for p in workload.model.parameters())


# -- the study -------------------------------------------------------------------------------
SCRIPT = REPO_ROOT / "scripts" / "torchrun_sharding.py"
ALLOCATOR_CHECK = {"model": "llama-tiny", "batch_size": 2, "seq_len": 32, "precision": "amp-bf16"}


@pytest.fixture(scope="module")
def background(tmp_path_factory) -> Iterator[dict[str, Any]]:
    """The two checks that need processes of their own, started together so that they run
    while this process estimates (tiny_rows)."""
    folder = tmp_path_factory.mktemp("torchrun")
    env = cli_env()
    started = {
        # a fresh process: the profiler's running total spans a process's sessions
        "allocator": subprocess.Popen(
            [sys.executable, "-c", "import json; from generator.measure.studies.sharding import "
             f"allocator_check; print(json.dumps(allocator_check({ALLOCATOR_CHECK!r}, "
             "'fsdp2', 4)))"], cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True),
        "torchrun": subprocess.Popen(
            [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
             str(SCRIPT), "--device", "cpu", "--model", TINY["model"], "--batch-size",
             str(TINY["batch_size"]), "--seq-len", str(TINY["seq_len"]), "--results",
             str(folder)], cwd=folder, env={**env, "OMP_NUM_THREADS": "1"},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
        "folder": folder}
    yield started
    for name in ("allocator", "torchrun"):
        if started[name].poll() is None:
            started[name].kill()
        started[name].communicate()


def _finish(process: subprocess.Popen) -> str:
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err[-3000:]
    return out


@pytest.fixture(scope="module")
def tiny_rows(background) -> dict[tuple[str, int], dict]:
    data = sharding.run(TINY)
    return {(r["strategy"], r["world_size"]): r for r in data["rows"]}


def _state(row: dict, *cats: str) -> int:
    return sum(row["category_max_bytes"][c] for c in cats)


@pytest.mark.slow
@pytest.mark.parametrize("world_size", [2, 4, 8])
def test_fsdp_parameters_and_optimizer_state_fall_as_one_over_n(tiny_rows, world_size):
    whole = _state(tiny_rows["fsdp2", 1], "parameters", "optimizer_state")
    shard = _state(tiny_rows["fsdp2", world_size], "parameters", "optimizer_state")
    assert shard == pytest.approx(whole / world_size, rel=0.05)
    grads = _state(tiny_rows["fsdp2", world_size], "gradients")
    assert grads == pytest.approx(_state(tiny_rows["fsdp2", 1], "gradients") / world_size,
                                  rel=0.05)


@pytest.mark.slow
def test_ddp_keeps_a_full_replica_on_every_rank(tiny_rows):
    one = tiny_rows["ddp", 1]
    for n in (2, 4, 8):
        row = tiny_rows["ddp", n]
        assert row["category_max_bytes"]["parameters"] == one["category_max_bytes"]["parameters"]
        assert row["peak_bytes"] == one["peak_bytes"]
    # DDP's buckets hold the gradients a second time (gradient_as_bucket_view=False)
    assert one["category_max_bytes"]["comm_buffers"] == one["category_max_bytes"]["gradients"]


@pytest.mark.slow
def test_activations_do_not_shrink_with_sharding(tiny_rows):
    activations = {tiny_rows["fsdp2", n]["category_max_bytes"]["activations"] for n in (1, 2, 4, 8)}
    assert len(activations) == 1


def test_study_parameters_are_checked():
    assert sharding.problems({"model": "llama-tiny", "batch_size": 1, "seq_len": 8}) == []
    found = sharding.problems({"model": "resnet50", "batch_size": 0, "seq_len": 8,
                               "world_sizes": [0], "bogus": 1})
    assert any("bogus" in p for p in found)
    assert any("batch_size" in p for p in found)
    assert any("world_sizes" in p for p in found)
    found = sharding.problems({"model": "resnet50", "batch_size": 1, "seq_len": 64})
    assert any("transformer" in p for p in found)
    assert sharding.problems({"model": "llama-tiny", "batch_size": 1, "seq_len": 8,
                              "strategies": ["ddp"], "world_sizes": {"ddp": [2]}})
    assert sharding.plan(sharding.settings(
        {"world_sizes": {"ddp": [8, 1], "fsdp2": [64]}})) == [("fsdp2", 64), ("ddp", 1), ("ddp", 8)]


def test_the_built_in_suite_runs_the_study_cheaply():
    """A few points each (GPT-2 small 2 s, LLaMA-7B 7 s of CPU time a point here), from 1
    to 64 GPUs: the whole 7B sweep is an optional suite."""
    studies = {j.name: j for j in load_suite() if isinstance(j, Study) and j.kind == "sharding"}
    assert {"sharding-gpt2-small", "sharding-llama-7b"} <= set(studies)
    plan = sharding.plan(sharding.settings(studies["sharding-llama-7b"].params))
    assert len(plan) <= 3 and ("fsdp2", 8) in plan
    gpt2 = sharding.plan(sharding.settings(studies["sharding-gpt2-small"].params))
    assert len(gpt2) <= 6 and {1, 64} <= {n for _, n in gpt2}
    optional = REPO_ROOT / "generator/suites/optional/sharding-llama-7b-sweep.toml"
    assert [j.name for j in load_suite(optional)] == ["sharding-llama-7b-sweep"]


@pytest.mark.slow
def test_tracker_counts_a_ranks_storages_as_the_allocator_does(background):
    """Real tensors on this CPU, FSDP2 on 4 fake ranks: gathered weights freed by
    resize_(0), DTensor shards, reduce-scattered gradients all counted as the allocator sees
    them."""
    found = json.loads(_finish(background["allocator"]).strip().splitlines()[-1])
    assert found["tracker"] == pytest.approx(found["allocator"], rel=1e-4)


# -- the cuda path ---------------------------------------------------------------------------


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message of a machine "
                    "without CUDA GPUs")
def test_torchrun_script_fails_fast_without_gpus(tmp_path):
    out = subprocess.run([sys.executable, str(SCRIPT), "--model", "gpt2-small", "--batch-size",
                          "8", "--seq-len", "1024", "--results", str(tmp_path)],
                         capture_output=True, text=True, timeout=120, env=cli_env())
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "no" in out.stderr and "CUDA" in out.stderr
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_torchrun_script_on_cpu_processes_matches_the_estimate(background, tiny_rows):
    """Its dry run: two real processes, gloo, the real DDP and fully_shard. Per rank they
    hold what the estimate (one process, fake process group, DDP's buckets reproduced)
    says, category by category; except that gloo's reduce-scatter makes a transient copy of
    its input, which NCCL, the backend the estimate stands for, does not."""
    _finish(background["torchrun"])
    [path] = background["folder"].glob("studies/*/sharding-llama-tiny.json")
    real = results.load_study(path)
    assert real["study"]["backend"] == "cpu"
    assert sharding.settings(real["study"]["params"]) == \
        {**sharding.settings(TINY), "world_sizes": {"fsdp2": [1, 2], "ddp": [1, 2]},
         "strategies": ["fsdp2", "ddp"]}
    assert len(real["data"]["rows"]) == 4
    for row in real["data"]["rows"]:
        twin = tiny_rows[row["strategy"], row["world_size"]]
        if row["strategy"] == "ddp" or row["world_size"] == 1:
            assert row["live_at_peak_bytes"] == twin["live_at_peak_bytes"], row["strategy"]
            continue
        real_max, estimated_max = row["category_max_bytes"], twin["category_max_bytes"]
        for cat in STATE + ("activations", "comm_buffers"):
            assert real_max[cat] == estimated_max[cat], cat
        assert real_max["temporaries"] >= estimated_max["temporaries"]


# -- the page --------------------------------------------------------------------------------
def page(results_dir: Path, lang: str) -> str:
    """The scale page from the studies in `results_dir`, as render.render writes it."""
    ctx = scale.context([], results.load_studies(results_dir))
    figures = {k: Markup(v) for k, v in scale.figures(ctx, lang).items()}
    return environment().get_template(f"{lang}/scale.md.j2").render(
        sections={"scale": ctx}, figures=figures, tables=scale.tables(ctx, lang), lang=lang)


@pytest.fixture(scope="module")
def context() -> dict:
    return scale.context([], results.load_studies(FIXTURES))


def test_the_sweep_and_the_built_in_points_make_one_group(context):
    main = context["main"]
    assert main["model"] == "llama-7b" and main["world_sizes"] == [1, 2, 4, 8, 16, 32, 64]
    assert [g["model"] for g in context["others"]] == ["gpt2-small"]
    shrink = {s["category"]: s for s in main["shrink"]}
    for cat in STATE:
        assert shrink[cat]["factor"] == pytest.approx(64, rel=0.01)
    assert shrink["activations"]["factor"] == pytest.approx(1.0)


def test_plan_reads_the_fewest_gpus_that_fit(context):
    for plan in context["main"]["plan"]:
        budget = plan["gpu_gib"] * 2**30
        fits = [r for r in context["main"]["fsdp"] if scale.needed_bytes(r["peak_bytes"]) <= budget]
        assert plan["fsdp"] is fits[0]
        assert not plan["ddp_fits"]  # 16 bytes a parameter: 100 GiB before any activation


def test_the_page_prints_the_fixture_numbers(context):
    main = context["main"]
    for lang in ("zh", "en"):
        text = page(FIXTURES, lang)
        assert f"**{gib(main['ddp_peak'])} GiB**" in text
        for row in main["fsdp"]:
            assert f"**{gib(row['peak_bytes'])}**" in text
        assert "{{" not in text and "{%" not in text


def test_page_numbers_follow_the_results(tmp_path):
    """Double one rank's activations in a fixture: the page must change with it."""
    changed = tmp_path / "results"
    shutil.copytree(FIXTURES, changed)
    path = changed / "studies/estimate/sharding-llama-7b-sweep.json"
    data = json.loads(path.read_text())
    [row] = [r for r in data["data"]["rows"] if (r["strategy"], r["world_size"]) == ("fsdp2", 16)]
    before = row["peak_bytes"]
    extra = row["live_at_peak_bytes"]["activations"]
    for field in ("live_at_peak_bytes", "category_max_bytes"):
        row[field]["activations"] += extra
    row["peak_bytes"] += extra
    path.write_text(json.dumps(data))
    for lang in ("zh", "en"):
        old, new = page(FIXTURES, lang), page(changed, lang)
        assert f"{gib(before)} GiB" in old and f"{gib(before)} GiB" not in new
        assert f"**{gib(before + extra)}**" in new


def test_a_gpu_measurement_is_set_beside_the_estimate(tmp_path):
    """A cuda result (here made from the estimate: a fixture, not a measurement) gets its own
    chart and the comparison table."""
    shutil.copytree(FIXTURES, tmp_path / "r")
    source = json.loads((FIXTURES / "studies/estimate/sharding-gpt2-small.json").read_text())
    source["study"]["backend"] = "cuda"
    source["environment"].update(machine_id="nvidia-test-gpu", device_name="NVIDIA Test GPU")
    for row in source["data"]["rows"]:
        row["ground_truth"] = {"peak_bytes": row["peak_bytes"] * 2, "max_reserved_bytes": 0}
    target = tmp_path / "r/studies/nvidia-test-gpu/sharding-gpt2-small.json"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(source))
    ctx = scale.context([], results.load_studies(tmp_path / "r"))
    [measured] = ctx["measured"]
    assert {c["error"] for c in measured["comparison"]} == {-0.5}
    for lang in ("zh", "en"):
        text = page(tmp_path / "r", lang)
        assert "NVIDIA Test GPU" in text and "-50.0 %" in text


def test_no_study_no_numbers(tmp_path):
    assert scale.context([], []) is None
    for lang in ("zh", "en"):
        text = environment().get_template(f"{lang}/scale.md.j2").render(
            sections={"scale": None}, figures={}, tables={}, lang=lang)
        assert "python -m generator build" in text


def test_charts_are_accessible_deterministic_and_prefixed(context):
    for lang in ("zh", "en"):
        first, second = scale.figures(context, lang), scale.figures(context, lang)
        assert first == second
        for name, svg in first.items():
            root = ET.fromstring(svg)
            assert root.get("role") == "img" and root.get("id") == f"chart-{name}-{lang}"
            assert root.find("{http://www.w3.org/2000/svg}title") is not None
            assert "currentColor" in svg and "#010203" not in svg.lower()


@pytest.mark.slow
def test_the_site_renders_the_scale_page(tmp_path):
    render.render(FIXTURES, tmp_path / "docs")
    for lang in ("zh", "en"):
        text = (tmp_path / "docs" / lang / "scale.md").read_text(encoding="utf-8")
        assert text.startswith("---\nhide:") and "figures/scale-llama-7b" in text
        assert (tmp_path / "docs" / lang / "figures").glob("scale-*.svg")
    assert "scale.md" in render.page_names()
    assert os.path.getsize(tmp_path / "docs/en/scale.md") > 2000
