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

from generator.results.api_types import StepMemory
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
            if cell["fewest"] is not None and cell["below"] is not None:
                assert cell["below_verdict"] == scale.verdict(cell["below"], plan["gpu"])
                assert not cell["below_verdict"].fits


# -- the fewest GPUs: scale.fewest and tables.fewest_cell ------------------------------------
def _verdict(word: str, need: float):
    from generator.plan.fit import Verdict

    return Verdict(word, word == "yes", int(need * 2**30), 0, 0, "")


def _fewest(points: dict[int, tuple[str, float]]) -> dict:
    rows = [{"world_size": n} for n in sorted(points)]
    return scale.fewest(rows, lambda r: _verdict(*points[r["world_size"]]))


def test_fewest_cell_uses_the_verdicts_own_word_for_the_count_below():
    from generator.site.pages.scale.tables import fewest_cell

    for word, en, zh in (("only just", "on 2: only just", "2 卡时勉强"),
                         ("maybe", "on 2: may fit", "2 卡时可能放得下"),
                         ("no", "on 2: does not fit", "2 卡时放不下")):
        cell = _fewest({2: (word, 90), 4: ("yes", 54.61)})
        assert cell["fewest"]["world_size"] == 4 and cell["unestimated"] is None
        assert fewest_cell(cell, "en") == f"**4** (needs 54.61 GiB; {en})"
        assert zh in fewest_cell(cell, "zh")
        assert "too few" not in fewest_cell(cell, "en")


def test_fewest_cell_says_which_counts_were_not_estimated():
    from generator.site.pages.scale.tables import fewest_cell

    # the line starts at 2 GPUs: 1 was not estimated, whatever the plain step on one GPU says
    first = _fewest({2: ("yes", 34.23), 4: ("yes", 32)})
    assert first["below"] is None and first["unestimated"] == (1, 1)
    assert fewest_cell(first, "en") == "**2** (needs 34.23 GiB; 1 not estimated)"
    assert "1 卡没有估算" in fewest_cell(first, "zh")
    late = _fewest({16: ("yes", 20.55), 64: ("yes", 17)})
    assert fewest_cell(late, "en") == "**16** (needs 20.55 GiB; 1 to 8 not estimated)"
    gap = _fewest({8: ("only just", 29.52), 64: ("yes", 18.7)})
    assert fewest_cell(gap, "en") == ("**64** (needs 18.70 GiB; on 8: only just; 16 to 32 not "
                                      "estimated)")
    one = _fewest({1: ("yes", 22.74), 2: ("yes", 24)})
    assert fewest_cell(one, "en") == "**1** (needs 22.74 GiB)"


def test_fewest_cell_where_no_count_fits_names_the_verdict_on_the_most():
    from generator.site.pages.scale.tables import fewest_cell

    cell = _fewest({2: ("no", 79), 8: ("only just", 29.77)})
    assert cell["fewest"] is None
    assert fewest_cell(cell, "en") == ("no count estimated fits (on 8: only just, needs 29.77 "
                                       "GiB)")
    assert "8 卡时勉强" in fewest_cell(cell, "zh")


def test_a_line_starts_from_one_gpu_only_where_that_step_is_its_strategy():
    plain = {"parallel": "fsdp2", "precision": "amp-bf16", "fsdp_mixed_precision": "none",
             "cpu_offload": False, "shard_size": 0, "tp_size": 0}
    assert scale.starts_from_one_gpu(plain, "amp-bf16")
    assert scale.starts_from_one_gpu({**plain, "parallel": "tp"}, "amp-bf16")
    assert not scale.starts_from_one_gpu({**plain, "cpu_offload": True}, "amp-bf16")
    assert not scale.starts_from_one_gpu({**plain, "parallel": "fsdp2-tp"}, "amp-bf16")
    assert not scale.starts_from_one_gpu({**plain, "fsdp_mixed_precision": "bf16/fp32"},
                                         "amp-bf16")
    assert not scale.starts_from_one_gpu(plain, "fp32")


def test_the_reserved_column_names_the_gpu_it_replays():
    from generator.site.pages.scale.tables import reserved_head

    def row(gpu):
        return {"result": {"allocator": {"gpu": gpu}}}

    assert scale.replayed_for([row("NVIDIA H100 80GB HBM3")] * 2) == "H100 80GB HBM3"
    assert scale.replayed_for([row("NVIDIA H100 80GB HBM3"), row("NVIDIA A100-SXM4-40GB")]) \
        is None
    assert scale.replayed_for([{"result": {}}]) is None
    assert reserved_head("H100 80GB HBM3", "en") == "Reserved peak (H100 80GB HBM3 replay)"
    assert reserved_head(None, "zh") == "已预留峰值"


def test_the_page_prints_the_fixture_numbers(context):
    main = context["main"]
    for lang in ("zh", "en"):
        text = page(FIXTURES, lang)
        for row in main["rows"]:
            assert f"**{gib(row['reserved_bytes'])}**" in text
        assert "figures/scale-lines-gpt2-small" in text and "figures/scale-gpt2-small" in text
        assert {"en": "hardly falls at all", "zh": "几乎不降"}[lang] in text
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
                "peak_bytes": sum(live.values()) + gib_,
                "result": {"parallel": {"host_bytes": host}}}

    fsdp = [row(2, 10 * gib_, state), row(8, 5 * gib_, state)]
    offload = [row(2, 4 * gib_, {}, host=9 * gib_), row(8, 4 * gib_, {}, host=3 * gib_)]
    words = sentences.cpu_offload(fsdp, offload)
    # on the fewest GPUs both have: where offload takes the most off each GPU; on the tensors'
    # peak, the reserved peaks beside
    assert words.en.startswith("On 2 GPUs, FSDP2 with CPU offload leaves a GPU 1.00 GiB of "
                               "tensors at their peak, 7.00 GiB less than without it (8.00 GiB; "
                               "reserved: 4.00 against 10.00 GiB)")
    assert "held 7.00 GiB" in words.en and "9.00 GiB a rank" in words.en
    assert "少 7.00 GiB" in words.zh and "每个 rank 占 9.00 GiB" in words.zh
    more = sentences.cpu_offload([row(2, 10 * gib_, {})], [row(2, 4 * gib_, state, host=gib_)])
    assert "7.00 GiB more than without it" in more.en and "多 7.00 GiB" in more.zh
    assert sentences.cpu_offload(fsdp, [row(4, gib_, {}, host=gib_)]) is None
