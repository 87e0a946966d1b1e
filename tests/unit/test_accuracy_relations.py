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
from generator.site.pages import accuracy
from generator.site.pages.accuracy import held_out, relations
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


def _point(published_mib: int, reserved_mib: int | None, **kw) -> reference_runs.HeldOutPoint:
    estimated = reserved_mib is not None
    fields = {"id": "p", "source_title": "Guide", "source_url": "https://example.org/guide",
              "quote": "q", "training_arguments": "a", "gpu": "Tesla V100-SXM2-16GB",
              "batch_size": 4, "micro_batches": 4, "precision": "amp-fp16",
              "optimizer": "AdamW", "checkpointing": True,
              "published_bytes": published_mib * 2**20, "context_bytes": 1000 * 2**20,
              "command": "python -m generator estimate hf:bert-large-uncased -b 4 -s 256 --gpu L4",
              "date": "2022-01-11",
              "commit": "abcdef0123456789" if estimated else None,
              "estimated_reserved_bytes": reserved_mib * 2**20 if estimated else None,
              "versions": {"torch": "2.13.0"}}
    return reference_runs.HeldOutPoint(**{**fields, **kw})


def test_held_out_rows_compare_reserved_plus_context_and_skip_unestimated_points() -> None:
    found = held_out.rows([_point(5000, 4000), _point(5000, None)])
    assert len(found) == 1 and found[0]["ratio"] == pytest.approx(1.0)
    assert "batch 1 × 4 micro-batches · sequence 256" in found[0]["label"].en
    summary = held_out.summary(held_out.rows([_point(5000, 3500), _point(4000, 3400)]))
    assert summary["errors"]["worst"] == pytest.approx(0.1) and summary["short"] == 1
    assert held_out.summary([]) is None


def test_every_held_out_point_was_estimated_once_at_a_recorded_commit() -> None:
    """The data file's rule (HELD_OUT.md): a point carries its command, and once estimated,
    the commit it was estimated at; the estimate's key is the command's experiment."""
    data = json.loads((reference_runs.DATA / reference_runs.HELD_OUT).read_text("utf-8"))
    points = reference_runs.held_out()
    assert len(points) >= 3 and len(points) == len(data["points"])
    for point, raw in zip(points, data["points"]):
        assert point.command.startswith("python -m generator estimate ")
        assert point.source_url.startswith("https://") and point.quote
        assert str(raw["published_mib"]) in point.quote
        if point.estimated_reserved_bytes is not None:
            assert len(point.commit) == 40 and "hf_bert-large-uncased" in raw["estimate"]["key"]


@pytest.mark.parametrize("lang", LANGS)
def test_the_page_prints_each_held_out_point(lang: str) -> None:
    from test_page_accuracy import _estimate_of

    run = next(r for r in reference_runs.runs() if not r.skipped)
    ctx = accuracy.context([_estimate_of(run, 1.0, 1.0)], [])
    text = prose(page_markdown(accuracy, ctx, lang))
    section = text[text.index("{ #held-out }"):text.index("{ #modelled }")]
    for row in ctx["held_out"]["rows"]:
        assert row["point"].source_url in section and row["commit"][:10] in section
        assert f"{row['ratio']:.3f}" in section
    assert ctx["held_out"]["versus"][lang] in section
    assert ctx["reserved_bound"][lang][:25] in text  # (the glossary links terms after)
    assert ("fake tensors" if lang == "en" else "假张量") in text
