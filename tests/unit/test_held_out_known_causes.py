"""The accuracy page's held-out section: a point estimated twice because its setting was first
transcribed differently from how its source ran (Raschka's zero_grad between forward and
backward), and a known cause the estimate does not model, sized point by point (PyTorch 1.10's
softmax kept its input). Each sentence that counts or compares, both ways."""

from __future__ import annotations

from dataclasses import replace

import pytest

from generator.experiment import Experiment
from generator.results.reference_runs import held_out
from generator.site import held_out as section
from generator.site.held_out import known_causes
from generator.site.pages.calculator import formulas

MIB = 2**20
POINTS = {point.id: point for point in held_out()}
RASCHKA = [p for p in POINTS.values() if p.source.id == "raschka-mixed-precision"]


def test_the_corrected_points_keep_their_first_estimate_and_count_the_second() -> None:
    assert len(RASCHKA) == 5
    for point in RASCHKA:
        assert point.zero_grad == "before-backward"
        assert "--zero-grad before-backward" in point.command
        assert point.first["zero_grad"] == "none"
        assert "--zero-grad" not in point.first["command"]
        assert point.first["commit"] != point.commit
        assert point.first["estimated"] != point.estimated
    rows = section.rows(list(POINTS.values()))
    by_id = {r["point"].id: r for r in rows}
    for point in RASCHKA:
        row = by_id[point.id]
        assert row["estimated"] == point.estimated["reserved"]  # the figure is "reserved"
        assert row["first"]["estimated"] == point.first["estimated"]["reserved"]
    summary = section.summary(rows)
    assert summary["count"] == len(rows)
    assert summary["errors"]["worst"] == max(abs(r["ratio"] - 1) for r in rows)
    assert "5 of them were estimated a second time" in summary["corrected"].en


class _AnyCount(dict):
    """Every model's parameter count, for the calculator's table without results."""

    def get(self, key, default=None):
        return 10**8


def test_the_calculator_reads_the_same_estimate_as_the_accuracy_page(monkeypatch) -> None:
    """The calculator's held-out table (formulas.published) takes each point's figure from
    held_out.estimated_figure, the corrected one where there is one."""
    monkeypatch.setattr(formulas, "task_parameter_counts", lambda results: _AnyCount())
    rows = {r["point"].id: r["estimated"] for r in section.rows(list(POINTS.values()))}
    found = formulas.published([])
    assert found
    for entry in found:
        point = next(p for p in POINTS.values() if section.label(p) == entry["label"])
        assert entry["estimate"] == rows[point.id]
    for point in RASCHKA:
        assert section.estimated_figure(point) == rows[point.id]


def test_corrected_is_said_in_the_singular_and_the_plural() -> None:
    rows = section.rows(list(POINTS.values()))
    assert section.corrected([r for r in rows if r["first"] is None]) is None
    one = [r for r in rows if r["first"] is not None][:1]
    assert section.corrected(one).en.startswith("One of them was estimated a second time")
    assert "其中 1 个数据点" in section.corrected(one).zh


def test_the_correction_says_whether_every_corrected_estimate_came_nearer() -> None:
    rows = [r for r in section.rows(list(POINTS.values())) if r["first"] is not None]
    source = rows[0]["point"].source
    said = known_causes.correction_said(source, rows)
    assert source.correction.en in said.en
    assert f"each of the {len(rows)} corrected estimates is nearer" in said.en
    # one made worse on purpose: the count says so
    worse = [dict(rows[0], first=dict(rows[0]["first"], ratio=rows[0]["ratio"]))] + rows[1:]
    said = known_causes.correction_said(source, worse)
    assert f"{len(rows) - 1} of the {len(rows)} corrected estimates are nearer" in said.en
    assert f"有 {len(rows) - 1} 个比第一次更接近" in said.zh
    assert known_causes.correction_said(replace(source, correction=None), rows) is None


def test_the_softmax_input_is_sized_from_the_config_point_by_point() -> None:
    b4 = known_causes.softmax_input(POINTS["hf-bert-large-b4-fp32"])
    assert b4["per_layer"] == 4 * 16 * 512 ** 2 * 4 == 64 * MIB  # batch × heads × seq² × 4 B
    assert b4["bytes"] == 24 * 64 * MIB  # every layer keeps it without checkpointing
    amp = known_causes.softmax_input(POINTS["hf-bert-large-b4-amp"])
    assert amp["per_layer"] == 32 * MIB  # fp16 scores under autocast
    checkpointed = known_causes.softmax_input(POINTS["hf-bert-large-b1x4-fp32-ckpt"])
    assert checkpointed["per_layer"] == checkpointed["bytes"] == 16 * MIB  # one layer
    # later PyTorch keeps only the output: no such size for the other sources
    assert known_causes.softmax_input(POINTS["scherrmann-bert-large-b4-fp32"]) is None
    assert all(known_causes.softmax_input(p) is None for p in RASCHKA)
    sdpa = replace(POINTS["hf-bert-large-b4-fp32"],
                   command=POINTS["hf-bert-large-b4-fp32"].command.replace("eager", "sdpa"))
    assert known_causes.softmax_input(sdpa) is None


def _row(ratio: float, kept: int, published: int = 1000 * MIB) -> dict:
    point = POINTS["hf-bert-large-b4-fp32"]
    estimated = round(published * ratio)
    return {"point": point, "ratio": ratio, "published": published, "estimated": estimated,
            "softmax": {"per_layer": kept, "bytes": kept, "heads": 16, "all_layers": 24}}


def test_the_softmax_sentence_says_whether_it_fits_within_each_shortfall() -> None:
    within = known_causes.softmax_said([_row(0.9, 50 * MIB), _row(0.8, 100 * MIB)])
    assert "At each of the 2 points where the estimate falls short" in within.en
    assert "估算偏低的 2 个数据点上，它都不超过差额" in within.zh
    one = known_causes.softmax_said([_row(0.9, 50 * MIB), _row(0.99, 40 * MIB)])
    assert "At 1 of the 2 points" in one.en and "at the other it is larger, by 30.0 MiB" in one.en
    two = known_causes.softmax_said([_row(0.9, 50 * MIB), _row(0.99, 40 * MIB),
                                     _row(0.98, 30 * MIB)])
    assert "at the other 2 it is larger, by at most 30.0 MiB" in two.en
    none_short = known_causes.softmax_said([_row(1.01, 8 * MIB)])
    assert "falls short" not in none_short.en and "pytorch/issues/64000" in none_short.en
    assert known_causes.softmax_said([dict(_row(0.9, 1), softmax=None)]) is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_tables_show_both_estimates_and_the_softmax_column(lang: str) -> None:
    rows = section.rows(list(POINTS.values()))
    groups = {g["source"].id: g for g in section.by_source(rows)}
    raschka = str(section.table(groups["raschka-mixed-precision"]["rows"], lang))
    assert raschka.count("`193d85fddb`") == 5 and raschka.count(f"`{RASCHKA[0].commit[:10]}`") == 5
    guide = str(section.table(groups["hf-guide"]["rows"], lang))
    assert "1,536.0" in guide and "1,580.0" in guide  # kept, and the shortfall beside it
    plain = str(section.table(groups["scherrmann-notebook"]["rows"], lang))
    assert plain.splitlines()[0].count("|") == 6  # five columns: neither addition


def test_zero_grad_before_backward_is_an_experiment_option() -> None:
    exp = Experiment(model="tiny", batch_size=2, seq_len=8, zero_grad="before-backward")
    assert exp.key.endswith("-grad-before-backward")
    assert Experiment(model="tiny", batch_size=2, seq_len=8).key.find("grad-") == -1
