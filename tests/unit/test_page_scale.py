"""The scale page from fixture step results (tests/fixtures/scale: GPT-2 small on one GPU, DDP
and FSDP2 under autocast on 2 to 64 GPUs, FSDP2's bf16/fp32 policy on 2 and 64; each a rank
estimated by the one engine): the groups and lines, the verdicts by the one rule, the fewest
GPUs, the numbers printed and following the results, and the charts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES as ALL_FIXTURES
from page_checks import check_svg, page_markdown, site_inputs

from generator.results.step import StepMemory
from generator.site.pages import scale
from generator.units import gib

FIXTURES = ALL_FIXTURES / "scale"
STATE = ("parameters", "gradients", "optimizer_state")


@pytest.fixture(scope="module")
def context() -> dict:
    return scale.context(*site_inputs(FIXTURES))


def page(results_dir: Path, lang: str) -> str:
    return page_markdown(scale, scale.context(*site_inputs(results_dir)), lang)


def test_one_group_with_a_line_per_strategy_and_regime(context):
    [main] = context["groups"]
    assert main["model"] == "gpt2-small" and main["precision"] == "amp-bf16"
    assert [line["id"] for line in main["lines"]] == ["single", "ddp", "fsdp2",
                                                      "fsdp2-mp-bf16/fp32"]
    by = {line["id"]: line for line in main["lines"]}
    # the lines of the group's regime start from the step on one GPU; the policy's does not
    assert [r["world_size"] for r in by["fsdp2"]["series"]] == [1, 2, 8, 64]
    assert [r["world_size"] for r in by["fsdp2-mp-bf16/fp32"]["series"]] == [2, 64]
    assert by["fsdp2-mp-bf16/fp32"]["words"].en == "FSDP2, bf16/fp32 policy"
    shrink = {s["category"]: s for s in main["shrink"]}
    for cat in STATE:
        assert shrink[cat]["factor"] == pytest.approx(64, rel=0.01)
    assert shrink["activations"]["factor"] == pytest.approx(1.0)
    assert shrink["autocast_copies"]["factor"] == pytest.approx(1.0)


def test_own_results_are_the_ranks_and_the_suite_only_steps():
    results, _ = site_inputs(FIXTURES)
    owned = scale.own_results(results)
    ranks = {r["key"] for r in results if r["experiment"]["parallel"] != "none"}
    # the one-GPU step is also in another suite: the other pages see it too
    assert owned == ranks


def test_verdicts_are_estimate_fits(context):
    """Every verdict on the page is the one rule's (Estimate.fits), on each GPU of the plan."""
    main = context["main"]
    for item in main["verdicts"]:
        step = StepMemory.from_dict(item["row"]["result"])
        for gpu, verdict in zip(context["plan_gpus"], item["verdicts"]):
            assert verdict == step.fits(gpu.name)


def test_fewest_gpus_read_from_the_estimated_points(context):
    main = context["main"]
    for plan in main["plan"]:
        for cell in plan["lines"]:
            rows = cell["line"]["series"] or cell["line"]["rows"]
            fits = [r for r in rows if scale.verdict(r, plan["gpu"]).fits]
            assert cell["fewest"] is (fits[0] if fits else None)
            if cell["fewest"] is not None and cell["too_few"] is not None:
                assert not scale.verdict(cell["too_few"], plan["gpu"]).fits
                # the fewest for sure only where half as many were estimated too few
                assert cell["exact"] == (2 * cell["too_few"]["world_size"]
                                         == cell["fewest"]["world_size"])


def test_the_page_prints_the_fixture_numbers(context):
    main = context["main"]
    for lang in ("zh", "en"):
        text = page(FIXTURES, lang)
        for row in main["rows"]:
            assert f"**{gib(row['reserved_bytes'])}**" in text
        assert "figures/scale-lines-gpt2-small" in text and "figures/scale-gpt2-small" in text
        assert {"en": "stops falling", "zh": "不再下降"}[lang] in text
        assert {"en": "none comes from a run on a GPU", "zh": "没有一个是实际运行得到的"}[lang] in text
        assert {"en": "measured on", "zh": "实测"}[lang] not in text
        assert "NCCL" in text and "nccl/issues/864" in text


def test_page_numbers_follow_the_results(tmp_path):
    """Double one rank's activations and its reserved peak: the page must change with it."""
    changed = tmp_path / "results"
    shutil.copytree(FIXTURES, changed)
    path = changed / "estimate/gpt2-small-b8-s1024-amp-bf16-adamw-estimate-8gpus-fsdp2.json"
    data = json.loads(path.read_text())
    before = data["allocator"]["peak_reserved_bytes"]
    data["allocator"]["peak_reserved_bytes"] = before * 2
    path.write_text(json.dumps(data))
    for lang in ("zh", "en"):
        old, new = page(FIXTURES, lang), page(changed, lang)
        assert f"**{gib(before)}**" in old and f"**{gib(before)}**" not in new
        assert f"**{gib(before * 2)}**" in new


def test_no_multi_gpu_results_no_numbers():
    assert scale.context([], []) is None
    for lang in ("zh", "en"):
        text = page_markdown(scale, None, lang)
        assert "python -m generator build" not in text  # no maintainer instructions
        assert {"zh": "还没有发布", "en": "published"}[lang] in text


def test_charts_are_accessible_deterministic_and_prefixed(context):
    for lang in ("zh", "en"):
        first, second = scale.figures(context, lang), scale.figures(context, lang)
        assert first == second and len(first) == 2
        for name, svg in first.items():
            check_svg(svg, f"chart-{name}-{lang}")


def test_the_offload_sentence_reads_its_rows():
    from generator.site.pages.scale import sentences

    gib_ = 2**30
    state = {"parameters": 2 * gib_, "gradients": gib_, "optimizer_state": 4 * gib_}

    def row(n: int, reserved: int, live: dict, host: int | None = None) -> dict:
        return {"world_size": n, "reserved_bytes": reserved, "live_at_peak_bytes": live,
                "result": {"parallel": {"host_bytes": host}}}

    fsdp = [row(2, 10 * gib_, state), row(8, 5 * gib_, state)]
    offload = [row(2, 4 * gib_, {}, host=9 * gib_), row(8, 4 * gib_, {}, host=3 * gib_)]
    words = sentences.cpu_offload(fsdp, offload)
    # on the fewest GPUs both have: where offload takes the most off each GPU
    assert words.en.startswith("On 2 GPUs, FSDP2 with CPU offload reserves 4.00 GiB a GPU, "
                               "6.00 GiB less than without it (10.00 GiB)")
    assert "held 7.00 GiB" in words.en and "9.00 GiB a rank" in words.en
    assert "少 6.00 GiB" in words.zh and "每个 rank 占 9.00 GiB" in words.zh
    assert sentences.cpu_offload(fsdp, [row(4, gib_, {}, host=gib_)]) is None
