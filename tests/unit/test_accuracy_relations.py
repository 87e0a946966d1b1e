"""The accuracy page's relations, each on small made-up data, both ways: what the development
set does not cover, that a reserved peak bounds a step's need from above, held-out errors
against the development set's; and the held-out section itself: every point committed with
its command, estimated once at a recorded commit, printed with its source and ratio."""

from __future__ import annotations

import json

import pytest
from conftest import LANGS
from page_checks import page_markdown, prose

from generator.results import reference_runs
from generator.site.escaping import markdown as escape
from generator.site.pages import accuracy
from generator.site import held_out
from generator.site.pages.accuracy import relations
from generator.words import Words

_BASE = {"model": "hf:gpt2-large", "precision": "fp32", "optimizer": "adam"}


def test_development_gaps_names_what_no_run_uses() -> None:
    gaps = relations.development_gaps([_BASE, {**_BASE, "precision": "amp-fp16",
                                               "loss_scaling": "off"}])
    assert gaps == Words("bf16, a GradScaler, AdamW or BERT", "bf16、GradScaler、AdamW 或 BERT")
    # one covered: it leaves the list
    gaps = relations.development_gaps([_BASE, {**_BASE, "model": "hf:bert-large-uncased"}])
    assert "BERT" not in gaps.en and "AdamW" in gaps.en


def test_development_gaps_is_none_when_every_feature_is_used() -> None:
    runs = [{**_BASE, "precision": "amp-bf16"}, {**_BASE, "precision": "amp-fp16"},
            {**_BASE, "optimizer": "adamw", "model": "bert-base"}]
    assert relations.development_gaps(runs) is None
    assert relations.development_gaps(runs[:2] + [{**_BASE, "optimizer": "adamw"}]) == \
        Words("BERT", "BERT")


def _run(active: int, reserved: int, name: str = "run") -> dict:
    return {"real_active": active, "real_reserved": reserved, "label": Words(name, name)}


def test_reserved_bound_holds_where_allocated_never_exceeds_reserved() -> None:
    words = relations.reserved_bound([_run(90, 100), _run(100, 100)])
    assert "upper bound" in words.en and "上限" in words.zh and "all 2 runs" in words.en
    assert "the one run" in relations.reserved_bound([_run(1, 1)]).en


def test_reserved_bound_names_the_runs_where_it_does_not() -> None:
    words = relations.reserved_bound([_run(90, 100), _run(120, 100, "odd one")])
    assert "upper bound" not in words.en and "odd one" in words.en and "1 of 2" in words.en
    assert "上限" in words.zh and "odd one" in words.zh and "自相矛盾" in words.zh


def test_versus_development_says_worse_or_no_worse() -> None:
    worse = relations.versus_development({"worst": 0.14}, {"worst": 0.067})
    assert "by more than" in worse.en and "14.0 %" in worse.en and "误差比开发集大" in worse.zh
    better = relations.versus_development({"worst": 0.05}, {"worst": 0.067})
    assert "no more than" in better.en and "不比开发集大" in better.zh


def _source(figure: str = "nvidia-smi", **kw) -> reference_runs.HeldOutSource:
    fields = {"id": f"s-{figure}", "label": Words("Guide", "指南"), "title": "Guide",
              "url": "https://example.org/guide", "gpu": "Tesla V100-SXM2-16GB",
              "figure": figure, "context_bytes": 1000 * 2**20 if figure == "nvidia-smi" else 0,
              "date": "2022-01-11", "model_name": "BERT-large", "versions_stated": False,
              "versions": {"torch": ("1.10",), "transformers": ("4.15", "4.16")},
              "notes": Words("Notes.", "说明。")}
    return reference_runs.HeldOutSource(**{**fields, **kw})


def _point(published_mib: int, reserved_mib: int | None, source=None,
           allocated_mib: int | None = None, **kw) -> reference_runs.HeldOutPoint:
    estimated = reserved_mib is not None
    fields = {"id": "p", "source": source or _source(), "quote": "q", "training_arguments": "a",
              "batch_size": 4, "micro_batches": 4, "precision": "amp-fp16",
              "optimizer": "AdamW", "checkpointing": True,
              "published_bytes": published_mib * 2**20,
              "command": "python -m generator estimate hf:bert-large-uncased -b 4 -s 256 --gpu L4",
              "commit": "abcdef0123456789" if estimated else None,
              "estimated": {"reserved": reserved_mib * 2**20,
                            "allocated": (allocated_mib or reserved_mib) * 2**20}
              if estimated else None,
              "versions": {"torch": "2.13.0", "transformers": "5.23.0"}}
    return reference_runs.HeldOutPoint(**{**fields, **kw})


def test_held_out_rows_compare_reserved_plus_context_and_skip_unestimated_points() -> None:
    found = held_out.rows([_point(5000, 4000), _point(5000, None)])
    assert len(found) == 1 and found[0]["ratio"] == pytest.approx(1.0)
    assert "BERT-large · batch 1 × 4 micro-batches · sequence 256" in found[0]["label"].en
    summary = held_out.summary(held_out.rows([_point(5000, 3500), _point(4000, 3400)]))
    assert summary["errors"]["worst"] == pytest.approx(0.1) and summary["short"] == 1
    assert summary["sources"] == 1 and held_out.summary([]) is None


def test_estimated_figure_is_the_kind_the_source_printed() -> None:
    """nvidia-smi: reserved + context; max_memory_reserved: reserved; max_memory_allocated:
    allocated. Before the point is estimated, nothing."""
    smi = _point(5000, 4000, allocated_mib=3000)
    reserved = _point(5000, 4000, _source("reserved"), allocated_mib=3000)
    allocated = _point(5000, 4000, _source("allocated"), allocated_mib=3000)
    assert held_out.estimated_figure(smi) == 5000 * 2**20
    assert held_out.estimated_figure(reserved) == 4000 * 2**20
    assert held_out.estimated_figure(allocated) == 3000 * 2**20
    assert held_out.estimated_figure(_point(5000, None)) is None
    assert "plus the 1,000.0 MiB" in held_out.compared(smi.source).en
    assert "max_memory_reserved" in held_out.compared(reserved.source).zh
    assert "allocated peak" in held_out.compared(allocated.source).en


def test_held_out_points_group_by_source_in_order() -> None:
    first, second = _source("allocated", id="a"), _source("reserved", id="b")
    found = held_out.rows([_point(100, 110, first, allocated_mib=90),
                           _point(100, 120, second), _point(200, 180, second)])
    groups = held_out.by_source(found)
    assert [g["source"].id for g in groups] == ["a", "b"]
    assert [len(g["rows"]) for g in groups] == [1, 2] and groups[0]["short"] == 1
    assert groups[1]["errors"]["worst"] == pytest.approx(0.2)
    table = held_out.table(groups[1]["rows"], "en")
    assert "max_memory_reserved" in table and "1.200" in table and "0.900" in table


def test_versions_say_stated_or_assumed_from_the_date() -> None:
    ran = {"torch": ["2.13.0"], "transformers": ["5.23.0"]}
    assumed = held_out.versions(_source(), ran)
    assert "states no versions" in assumed.en and "2022-01-11" in assumed.en
    assert "PyTorch 1.10" in assumed.en and "4.15 or 4.16" in assumed.en
    assert "没有注明版本" in assumed.zh and "PyTorch 2.13.0" in assumed.zh
    stated = held_out.versions(_source(versions_stated=True), ran)
    assert "as it states" in stated.en and "来源注明" in stated.zh


def test_modelled_says_whether_the_catalogue_gpu_is_the_sources() -> None:
    own = held_out.modelled(_source(gpu="NVIDIA GeForce RTX 3090"), ["RTX 3090"])
    assert "the source's GPU" in own.en and "RTX 3090" in own.en and "就是来源所用" in own.zh
    # a name the catalogue holds twice: the same workspace in both (or not) is checked
    which = held_out.modelled(_source(gpu="NVIDIA A100"), ["A100 40GB"])
    assert "does not say which A100" in which.en and "same cuBLAS workspace" in which.en
    assert "A100-SXM4-40GB and A100-SXM4-80GB keep" in which.en and "相同" in which.zh
    rtx = held_out.modelled(_source(gpu="NVIDIA GeForce RTX"), ["RTX 4090"])  # 5090: 32 MiB
    assert "different cuBLAS workspaces" in rtx.en and "各不相同" in rtx.zh
    # a GPU the catalogue lacks: its stand-in keeps PyTorch's default workspace, or not
    stand_in = held_out.modelled(_source(), ["A100 40GB"])
    assert "has no V100-SXM2-16GB" in stand_in.en and "PyTorch's default" in stand_in.en
    assert "默认值" in stand_in.zh and "不是" not in stand_in.zh
    hopper = held_out.modelled(_source(), ["H100"])
    assert "is not PyTorch's default" in hopper.en and "不是" in hopper.zh


def test_source_summary_says_how_many_fall_short_in_words() -> None:
    errors = {"worst": 0.118, "median": 0.056, "count": 5}
    assert "all of them fall short" in held_out.source_summary(errors, 5).en
    assert "全部低于" in held_out.source_summary(errors, 5).zh
    assert "none of them falls short" in held_out.source_summary(errors, 0).en
    some = held_out.source_summary(errors, 2)
    assert "2 of them fall short" in some.en and "at most 11.8 %" in some.en
    assert "其中 2 个低于" in some.zh
    one = {"worst": 0.002, "median": 0.002, "count": 1}
    assert "one point" in held_out.source_summary(one, 1).en
    assert "it falls short" in held_out.source_summary(one, 1).en
    assert "is not below" in held_out.source_summary(one, 0).en
    assert "不低于" in held_out.source_summary(one, 0).zh


def test_origin_counts_sources_and_gpus_in_the_singular_or_plural() -> None:
    assert held_out.origin({"sources": 1, "gpus": ["V100"]}).en == "from 1 source on 1 GPU"
    many = held_out.origin({"sources": 3, "gpus": ["A100", "RTX 3090", "V100"]})
    assert many.en == "from 3 sources on 3 GPUs" and "3 个来源" in many.zh


def test_every_held_out_point_was_estimated_once_at_a_recorded_commit() -> None:
    """The data file's rule (HELD_OUT.md): a point carries its command, and once estimated,
    the commit it was estimated at; the estimate's key is the command's experiment."""
    data = json.loads((reference_runs.DATA / reference_runs.HELD_OUT).read_text("utf-8"))
    raw_points = [point for source in data["sources"] for point in source["points"]]
    points = reference_runs.held_out()
    assert len({p.source.id for p in points}) >= 3 and len(points) == len(raw_points)
    for point, raw in zip(points, raw_points):
        assert point.command.startswith("python -m generator estimate ")
        assert point.source.url.startswith("https://") and point.quote
        published = raw.get("published_mib", raw.get("published_gb"))
        assert str(published) in point.quote
        if point.estimated is not None:
            model = point.command.split()[4].removeprefix("hf:")
            assert len(point.commit) == 40 and f"hf_{model}-" in raw["estimate"]["key"]


@pytest.mark.parametrize("lang", LANGS)
def test_the_page_prints_each_held_out_point(lang: str) -> None:
    from test_page_accuracy import _estimate_of

    run = next(r for r in reference_runs.runs() if not r.skipped)
    ctx = accuracy.context([_estimate_of(run, 1.0, 1.0)], [])
    text = prose(page_markdown(accuracy, ctx, lang))
    section = text[text.index("{ #held-out }"):text.index("{ #modelled }")]
    for row in ctx["held_out"]["rows"]:
        assert row["point"].source.url in section and row["commit"][:10] in section
        assert f"{row['ratio']:.3f}" in section
    assert ctx["held_out"]["versus"][lang] in section
    for group in ctx["held_out"]["sources"]:  # each source under its own heading
        assert str(escape(group["source"].label[lang])) in section  # as the page escapes it
        assert group["source"].url in section and str(escape(group["said"][lang])) in section
    assert ctx["reserved_bound"][lang][:25] in text  # (the glossary links terms after)
    assert ("fake tensors" if lang == "en" else "假张量") in text
