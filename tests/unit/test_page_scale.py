"""The scale page from fixture sharding studies (tests/fixtures/scale: GPT-2 small and LLaMA-7B
on 1 to 64 GPUs, estimated): the groups and the plan, the numbers printed and following the
studies, a GPU measurement beside the estimate, and the charts. The study's runs:
slow/test_sharding.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES as ALL_FIXTURES
from page_checks import check_svg, page_markdown, site_inputs

from generator.site.pages import scale
from generator.units import gib

FIXTURES = ALL_FIXTURES / "scale"
STATE = ("parameters", "gradients", "optimizer_state")


@pytest.fixture(scope="module")
def context() -> dict:
    return scale.context(*site_inputs(FIXTURES))


def page(results_dir: Path, lang: str) -> str:
    """The scale page from the studies in `results_dir`."""
    return page_markdown(scale, scale.context(*site_inputs(results_dir)), lang)


def test_the_sweep_and_the_built_in_points_make_one_group(context):
    main = context["main"]
    assert main["model"] == "llama-7b" and main["world_sizes"] == [1, 2, 4, 8, 16, 32, 64]
    assert [g["model"] for g in context["others"]] == ["gpt2-small"]
    shrink = {s["category"]: s for s in main["shrink"]}
    for cat in STATE:
        assert shrink[cat]["factor"] == pytest.approx(64, rel=0.01)
    assert shrink["activations"]["factor"] == pytest.approx(1.0)


def test_plan_reads_the_fewest_gpus_that_fit(context):
    """Per GPU and per FSDP2 regime (autocast: fsdp; bf16 policy: mp), the fewest GPU count
    that fits by the one rule, every smaller count not fitting."""
    main = context["main"]
    assert main["plan"] and main["mp"]
    for plan in main["plan"]:
        for key, rows in (("fsdp", main["fsdp"]), ("mp", main["mp"])):
            fits = [r for r in rows if scale.verdict(r, plan["gpu"]).fits]
            assert plan[key] is (fits[0] if fits else None)
        assert not plan["ddp_fits"]  # 16 bytes a parameter: 100 GiB before any activation


def test_the_page_prints_the_fixture_numbers(context):
    main = context["main"]
    for lang in ("zh", "en"):
        text = page(FIXTURES, lang)
        assert f"**{gib(main['ddp_peak'])} GiB**" in text
        for row in main["fsdp"]:
            assert f"**{gib(row['peak_bytes'])}**" in text
        assert not text.startswith("---") and "figures/scale-llama-7b" in text  # keeps the nav


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
    ctx = scale.context(*site_inputs(tmp_path / "r"))
    [measured] = ctx["measured"]
    assert {c["error"] for c in measured["comparison"]} == {-0.5}
    for lang in ("zh", "en"):
        text = page(tmp_path / "r", lang)
        assert "NVIDIA Test GPU" in text and "-50.0 %" in text


def test_no_study_no_numbers():
    assert scale.context([], []) is None
    for lang in ("zh", "en"):
        page = page_markdown(scale, None, lang)
        assert "python -m generator build" not in page  # no maintainer instructions
        assert {"zh": "还没有发布", "en": "published"}[lang] in page


def test_charts_are_accessible_deterministic_and_prefixed(context):
    for lang in ("zh", "en"):
        first, second = scale.figures(context, lang), scale.figures(context, lang)
        assert first == second
        assert first
        for name, svg in first.items():
            check_svg(svg, f"chart-{name}-{lang}")
