"""The accuracy page's second held-out set (generator/site/held_out/as_written.py): the points
run as their authors wrote them, beside the published figure and the first set's estimate.
Before a point has run the page must say so (the file as committed before the runs); the
filled cases use the recorded runs or estimates made up here (never written into
held_out_as_written.json). Each sentence that counts, both ways."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import LANGS
from page_checks import page_markdown, prose

from generator.results import held_out_as_written as recorded
from generator.results.reference_runs import held_out
from generator.site import held_out as first_set
from generator.site.held_out import as_written
from generator.site.pages import accuracy
from generator.site.stats import falls_short
from generator.units import pct

FIRST = held_out()
RECORDED = recorded.points()
#: The points as committed before they ran (each "estimate": null).
RUNS = [replace(point, estimate=None) for point in RECORDED]
BY_ID = {p.id: p for p in FIRST}
#: The report's field each kind of published figure is held against (as the first set holds it).
FIELD = {"nvidia-smi": "reserved_bytes", "reserved": "reserved_bytes",
         "allocated": "allocated_bytes"}


def _ran(point: recorded.Point, ratio: float, commit: str = "c0ffee1234abcdef") -> recorded.Point:
    """`point` as if it had run once and its figure were `ratio` × the published one."""
    figure = round(point.published_bytes * ratio) - point.context_bytes
    return replace(point, estimate={
        "commit": commit, "ran_at": "2026-12-06T12:00:00+00:00", "exit_status": 0,
        "printed_bytes": None,
        "report": {"gpu": point.gpu, "allocated_bytes": figure, "reserved_bytes": figure,
                   "peak_bytes": figure, "nvidia_smi_bytes": None, "verdict": "yes",
                   "out_of_memory": None, "steps": 12}})


def _first_ratio(point: recorded.Point) -> float:
    return first_set.estimated_figure(BY_ID[point.id]) / point.published_bytes


def test_each_run_is_held_against_the_figure_the_first_set_compares_on_its_gpu() -> None:
    """The page says so in one sentence for every source: the same field of the report, the
    same CUDA context, the same simulated GPU as the first set modelled."""
    for run in RUNS:
        point = BY_ID[run.id]
        assert run.rule.report == FIELD[point.source.figure]
        assert run.rule.plus_context == (point.source.figure == "nvidia-smi")
        assert run.context_bytes == (point.source.context_bytes if run.rule.plus_context else 0)
        assert run.gpu == point.modelled_gpu


def test_before_any_point_ran_the_section_says_so_with_the_commands() -> None:
    ctx = as_written.context(FIRST, RUNS)
    found = ctx["summary"]
    assert (found["count"], found["pending"], found["total"]) == (0, len(RUNS), len(RUNS))
    assert found["errors"] is None
    assert ctx["said"].en.startswith(f"None of the {len(RUNS)} points has run yet")
    assert ctx["said"].zh.startswith(f"这 {len(RUNS)} 个数据点都还没有运行")
    commands = "".join(str(g["pending"]) for g in ctx["sources"])
    assert all(run.command in commands for run in RUNS)
    for row in ctx["rows"]:  # the first set's estimate of the same id, beside the published
        assert row["first"] == first_set.estimated_figure(row["point"])
        assert row["estimated"] is row["ratio"] is row["commit"] is None


@pytest.mark.parametrize("lang", LANGS)
def test_the_page_shows_the_commands_while_none_has_run(lang: str, monkeypatch) -> None:
    ctx = _accuracy_context(monkeypatch, RUNS)
    text = page_markdown(accuracy, ctx, lang)
    section = text.split("{ #held-out-as-written }")[1].split("{ #held-out-multi-gpu }")[0]
    assert ctx["as_written"]["said"][lang] in prose(section)
    assert all(run.command in section for run in RUNS)
    assert "run.md" in section  # the page that says what `run` does
    assert "not yet run" not in section and "尚未运行" not in section  # no table yet
    measured = {"en": "measured on a GPU", "zh": "GPU 实测"}[lang]
    assert measured in section and "measured on the CPU" not in section


def _accuracy_context(monkeypatch, runs: list[recorded.Point]) -> dict:
    """The accuracy page's context with `runs` as the recorded points."""
    from test_page_accuracy import _estimate_of
    from generator.results import reference_runs

    monkeypatch.setattr(recorded, "points", lambda data=None: runs)
    run = next(r for r in reference_runs.runs() if not r.skipped)
    return accuracy.context([_estimate_of(run, 1.0, 1.0)], [])


def test_some_runs_are_counted_and_the_others_said_not_yet_run() -> None:
    ratios = [0.9, 1.05, 0.98]
    runs = [_ran(r, ratio) for r, ratio in zip(RUNS, ratios)] + RUNS[len(ratios):]
    ctx = as_written.context(FIRST, runs)
    found = ctx["summary"]
    assert (found["count"], found["pending"]) == (3, len(RUNS) - 3)
    assert found["errors"]["worst"] == pytest.approx(0.1, abs=1e-6)
    assert found["errors"]["median"] == pytest.approx(0.05, abs=1e-6)
    assert found["short"] == 2
    firsts = [_first_ratio(r) for r in RUNS[:3]]
    assert found["first"]["worst"] == max(abs(f - 1) for f in firsts)
    assert found["first_short"] == sum(map(falls_short, firsts))
    assert found["nearer"] == sum(abs(r - 1) < abs(f - 1) for r, f in zip(ratios, firsts))
    said = ctx["said"]
    assert said.en.startswith("Against the 3 points run so far, the runs as written are off "
                              "by at most 10.0 % (median 5.0 %); 2 of them fall short")
    assert said.en.endswith(f" {len(RUNS) - 3} of the {len(RUNS)} points have not run yet.")
    assert said.zh.startswith("对照目前运行过的 3 个数据点，原样运行的估算误差最大 10.0 %")
    assert said.zh.endswith(f"{len(RUNS)} 个数据点中还有 {len(RUNS) - 3} 个尚未运行。")
    assert f"The first set's estimates of the same points were off by at most " \
           f"{pct(found['first']['worst'])}" in said.en


def test_when_every_point_has_run_nothing_is_said_pending() -> None:
    runs = [_ran(r, 1.01) for r in RUNS]
    ctx = as_written.context(FIRST, runs)
    assert ctx["summary"]["pending"] == 0
    assert ctx["said"].en.startswith(f"Against all {len(RUNS)} points, the runs as written")
    assert "none of them falls short" in ctx["said"].en
    assert "not run yet" not in ctx["said"].en and "尚未运行" not in ctx["said"].zh
    assert all(g["pending"] is None for g in ctx["sources"])


def test_one_run_is_said_in_the_singular_both_ways() -> None:
    short = as_written.context(FIRST, [_ran(RUNS[0], 0.95)] + RUNS[1:])["said"]
    assert short.en.startswith("Against the one point run so far, the run as written is off "
                               "by 5.0 %, short of the published figure.")
    assert short.zh.startswith("对照目前运行过的 1 个数据点，原样运行的估算误差为 5.0 %，低于公开数字。")
    over = as_written.context(FIRST, [_ran(RUNS[0], 1.02)] + RUNS[1:])["said"]
    assert "off by 2.0 %, not below the published figure." in over.en
    assert "不低于公开数字" in over.zh
    assert over.en.endswith(f" {len(RUNS) - 1} of the {len(RUNS)} points have not run yet.")


@pytest.mark.parametrize(("short", "en", "zh"), [
    (3, "all of them fall short", "全部低于"), (0, "none of them falls short", "没有一个低于"),
    (2, "2 of them fall short", "其中 2 个低于")])
def test_how_many_fall_short(short: int, en: str, zh: str) -> None:
    said = as_written.how_many_short(short, 3)
    assert said.en.startswith(en) and said.zh.startswith(zh)


@pytest.mark.parametrize(("count", "en", "zh"), [
    (4, "at every one of them", "每个点上"), (0, "at none of them", "没有一个点上"),
    (1, "at 1 of the 4", "4 个点中有 1 个点上")])
def test_how_many_runs_land_nearer_than_the_first_set(count: int, en: str, zh: str) -> None:
    said = as_written.nearer(count, 4)
    assert said.en.endswith(en) and said.zh.startswith(zh)


@pytest.mark.parametrize(("ratio", "en", "zh"), [
    (0.953, "0.953, 4.7 % short", "0.953，低 4.7 %"),
    (1.02, "1.020, 2.0 % over", "1.020，高 2.0 %"),
    (1.0, "1.000, equal", "1.000，相等")])
def test_the_ratio_cell_says_short_or_over_by_the_pages_one_rule(
        ratio: float, en: str, zh: str) -> None:
    assert as_written.ratio_said(ratio) == (en, zh)
    assert falls_short(ratio) == ("short" in en)


@pytest.mark.parametrize("lang", LANGS)
def test_the_table_shows_each_run_or_says_it_has_not_run(lang: str) -> None:
    runs = [_ran(RUNS[0], 0.9)] + RUNS[1:]
    group = as_written.context(FIRST, runs)["sources"][0]
    table = str(as_written.table(group, lang)).splitlines()
    ran, pending = table[2], table[3]
    assert as_written.ratio_said(0.9)[lang] in ran and "`c0ffee1234`" in ran
    assert {"en": "not yet run", "zh": "尚未运行"}[lang] in pending
    assert group["gpu_name"] in table[0] and group["simulated"] in table[0]
    assert {"en": "measured on a GPU", "zh": "GPU 实测"}[lang] in table[0]


@pytest.mark.parametrize("lang", LANGS)
def test_the_page_shows_the_tables_once_a_point_has_run(lang: str, monkeypatch) -> None:
    runs = [_ran(RUNS[0], 0.9)] + RUNS[1:]
    ctx = _accuracy_context(monkeypatch, runs)
    section = page_markdown(accuracy, ctx, lang).split("{ #held-out-as-written }")[1] \
        .split("{ #held-out-multi-gpu }")[0]
    assert as_written.ratio_said(0.9)[lang] in section
    assert {"en": "The commands not yet run:", "zh": "尚未运行的命令："}[lang] in section
    assert RUNS[0].command not in section and RUNS[1].command in section
    assert ctx["as_written"]["said"][lang] in prose(section)


def test_the_rule_for_falling_short_both_ways() -> None:
    assert falls_short(0.999) and not falls_short(1.0) and not falls_short(1.2)


def test_the_runs_are_recorded_once_each_at_one_commit() -> None:
    assert all(run.estimate is not None for run in RECORDED)
    assert len({run.estimate["commit"] for run in RECORDED}) == 1
    assert all(run.estimate["exit_status"] in (0, 3) for run in RECORDED)
    assert as_written.context(FIRST, RECORDED)["libraries"] is not None  # said on the page


def _libraries_rows(kept: list[float], again: list[float], here: str = "5.23.0") -> list:
    """Rows of the first set's points, their runs as written at `kept` (no checkpointing)
    and `again` (checkpointing) × the first set's estimate, run with transformers `here`."""
    rows = []
    for run in RECORDED:
        point = BY_ID[run.id]
        share = (again if point.checkpointing else kept)
        factor = share[len(rows) % len(share)]
        rows.append({"point": point, "run": replace(run, estimate={**run.estimate,
                                                                    "transformers": here}),
                     "first": 1000, "estimated": 1000 * factor, "ratio": factor})
    return rows


def test_the_libraries_are_named_only_where_the_data_shows_them() -> None:
    said = as_written.libraries_differ(_libraries_rows([0.6, 0.9], [1.01, 0.99]))
    assert said is not None
    assert "10.0 %–40.0 % below" in said.en and "within 1.0 %" in said.en
    assert "transformers 5.23.0" in said.en and "4.41" in said.en and "4.41" in said.zh
    # a run that keeps its activations and is not below the first set: nothing said
    assert as_written.libraries_differ(_libraries_rows([0.6, 1.02], [1.0])) is None
    # checkpointed runs as far off as the others: not the activations
    assert as_written.libraries_differ(_libraries_rows([0.9], [0.8])) is None
    # run with a transformers that predates BERT's SDPA too: not the libraries
    assert as_written.libraries_differ(_libraries_rows([0.6], [1.0], here="4.40.2")) is None
