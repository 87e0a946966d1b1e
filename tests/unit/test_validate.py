"""`python -m generator validate`: the whole grids the test suite only samples, run as one
command that stores a dated study result, and the accuracy page's account of the newest.
The checks themselves are faked here (their real runs are slow: the sampled tests under
tests/slow/ run them); what is tested is the command around them."""

from __future__ import annotations

import json

import pytest
from conftest import LANGS, assert_refused
from page_checks import page_markdown

from generator import validate
from generator.results import store
from generator.site.pages.accuracy import validation
from generator.validate import calculator, torchrun

ROWS = {"calculator": [{"id": "a", "allocated_ratio": 1.0, "reserved_ratio": 1.0004,
                        "tensors_ratio": 1.0, "within": True},
                       {"id": "b", "allocated_ratio": 1.0, "reserved_ratio": 0.99,
                        "tensors_ratio": 1.0, "within": False}],
        "torchrun": [{"id": "t", "gap_to_largest": 2e-6, "within": True}],
        "published": [{"id": "p", "allocated_ratio": 0.98, "reserved_ratio": 1.03,
                       "reproduces": True},
                      {"id": "q", "allocated_ratio": 1.0, "reserved_ratio": 1.0}]}


@pytest.fixture
def stored(tmp_path, monkeypatch):
    monkeypatch.setattr(validate, "RUNNERS",
                        {name: (lambda rows: lambda results, work: rows)(rows)
                         for name, rows in ROWS.items()})
    [path] = validate.validate(tmp_path / "results")
    return path


def test_a_held_out_check_leaves_the_day_s_study_of_the_grids_alone(tmp_path, monkeypatch
                                                                    ) -> None:
    """A held-out check records into its reference file; run alone on a day the grids
    already ran, it must not replace their study (it once did)."""
    monkeypatch.setattr(validate, "RUNNERS", {
        "calculator": lambda results, work: ROWS["calculator"],
        "torchtitan": lambda results, work: [{"id": "t", "ratio": 1.04}]})
    [grids] = validate.validate(tmp_path / "results", ("calculator",))
    before = grids.read_bytes()
    [written] = validate.validate(tmp_path / "results", ("torchtitan",))
    assert written.name == "held_out_torchtitan.json" and grids.read_bytes() == before
    both = validate.validate(tmp_path / "results", ("calculator", "torchtitan"))
    assert [p.name for p in both] == [grids.name, written.name]
    assert list(store.load_study(grids)["data"]["checks"]) == ["calculator"]


def test_a_run_is_one_dated_study_result_the_store_reads(stored) -> None:
    assert stored.parent.parent.name == "studies"
    assert stored.stem.startswith("validation-20")
    study = store.load_study(stored)
    assert study["study"]["kind"] == validate.KIND == validation.KIND
    assert study["data"]["checks"]["calculator"]["summary"] == \
        {"cases": 2, "judged": 2, "within": 1}
    assert study["data"]["checks"]["published"]["summary"] == \
        {"cases": 2, "judged": 0, "within": 0}


def test_the_accuracy_page_reads_the_newest_run(stored) -> None:
    older = json.loads(stored.read_text(encoding="utf-8"))
    older["measured_at"] = "2000-01-01T00:00:00+00:00"
    older["data"]["checks"] = {}
    ctx = validation.context([older, store.load_study(stored)])
    assert ctx["date"] == store.load_study(stored)["measured_at"][:10]
    calc, run, published = (ctx["checks"][n] for n in ("calculator", "torchrun", "published"))
    assert (calc["within"], calc["judged"], calc["all_within"]) == (1, 2, False)
    assert calc["worst"] == pytest.approx(0.01)
    assert run["all_within"] and run["worst"] == pytest.approx(2e-6)
    assert (published["reproduced"], published["stored"]) == (1, 1)
    assert published["worst"] == pytest.approx(0.03)
    assert validation.context([older | {"error": "failed"}]) is None
    assert validation.context([]) is None


@pytest.mark.parametrize("lang", LANGS)
def test_the_section_says_what_the_run_found(stored, lang) -> None:
    from test_page_accuracy import _estimate_of

    from generator.results import reference_runs
    from generator.site.pages import accuracy

    run = next(r for r in reference_runs.runs() if not r.skipped)
    ctx = accuracy.context([_estimate_of(run, 1.0, 1.0)], [store.load_study(stored)])
    text = page_markdown(accuracy, ctx, lang)
    section = text[text.index("{ #validation }"):text.index("{ #modelled }")]
    assert ("1 of 2 within 0.5 %" if lang == "en" else "2 个中有 1 个在 0.5 % 以内") in section
    assert ("all 1 within 1 %" if lang == "en" else "1 个全部在 1 % 以内") in section
    empty = page_markdown(accuracy, accuracy.context([_estimate_of(run, 1.0, 1.0)], []),
                          lang)
    assert "python -m generator validate" in empty[empty.index("{ #validation }"):]


def test_the_families_and_the_sample() -> None:
    assert [calculator.family(m) for m in ("hf:google/gemma-2-2b", "hf:google/gemma-2b",
                                           "hf:meta-llama/Llama-3.1-8B", "bert-base")] == \
        ["gemma-2", "gemma", "llama", "bert"]
    cases = [{"id": f"{m}-{b}", "family": calculator.family(m), "parameters": p, "batch": b,
              "seq": 100, "fit": {"method": "full"}}
             for m, p in (("hf:x/Llama-3.1-8B", 8), ("hf:x/Llama-3.2-1B", 1)) for b in (1, 3)]
    assert [c["id"] for c in calculator.sample(cases)] == ["hf:x/Llama-3.2-1B-1"]


def test_the_torchrun_sample_is_some_of_the_cases() -> None:
    assert set(torchrun.SAMPLE) < set(torchrun.CASES)


def test_an_unknown_check_is_refused(cli, tmp_path) -> None:
    assert_refused(cli, tmp_path, ["validate", "--only", "calculator,nope"], "nope",
                   "calculator, torchrun, published")
