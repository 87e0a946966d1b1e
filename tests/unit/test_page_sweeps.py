"""The sweeps page on fixture results of the tiny model (estimates, fp32 and amp-bf16, batch
1-8 at sequence 32 and sequence 32-128 at batch 8): its arithmetic (fits over batch size, the
largest batch that fits a budget, the CUDA overhead to allow for, the activation formula),
sweeps grouped by backend and machine, the charts, and the page's numbers following the
data."""

from __future__ import annotations

import copy
import dataclasses
import json
import shutil

import pytest
from conftest import FIXTURES as ALL_FIXTURES
from conftest import LANGS
from page_checks import SVG, check_svg, page_markdown, site_inputs

from generator import gpus
from generator.results.api_types import StepMemory
from generator.site import derived
from generator.site.pages import sweeps
from generator.site.pages.sweeps import fits

FIXTURES = ALL_FIXTURES / "sweeps"
MIB = 2 ** 20


@pytest.fixture(scope="module")
def fixture_results() -> list[dict]:
    return site_inputs(FIXTURES)[0]


def _series(found: list[dict], precision: str, **fixed: int) -> list[dict]:
    """One precision's results at the `fixed` sizes, by batch and sequence."""
    return sorted((r for r in found if r["experiment"]["precision"] == precision and
                   all(r["experiment"][k] == v for k, v in fixed.items())),
                  key=lambda r: (r["experiment"]["batch_size"], r["experiment"]["seq_len"]))


# --------------------------------------------------------------------------- fits


def test_linear_fit_recovers_a_line_and_its_residuals() -> None:
    line = fits.linear_fit([1, 2, 3, 4], [12.0, 14.0, 17.0, 18.0])
    assert line.slope == pytest.approx(2.1) and line.intercept == pytest.approx(10.0)
    assert sum(line.residuals) == pytest.approx(0.0, abs=1e-9)
    assert line.residuals[2] == pytest.approx(17.0 - line(3))
    with pytest.raises(ValueError):
        fits.linear_fit([2, 2], [1.0, 3.0])


@pytest.mark.parametrize("precision", ["fp32", "amp-bf16"])
def test_bytes_per_sample_is_the_difference_quotient(fixture_results, precision) -> None:
    series = _series(fixture_results, precision, seq_len=32)
    fit = fits.fit_batch_sweep(series)
    # Batch 1 peaks in the optimizer step: on the floor, not on the line.
    assert fit.floor_batches == (1,) and fit.floor == series[0]["peak_bytes"]
    assert derived.peak_phase(series[0]) == "optimizer"
    on_line = [r for r in series if r["experiment"]["batch_size"] in fit.fitted_batches]
    for low, high in zip(on_line, on_line[1:]):
        quotient = (high["peak_bytes"] - low["peak_bytes"]) / \
            (high["experiment"]["batch_size"] - low["experiment"]["batch_size"])
        assert fit.line.slope == pytest.approx(quotient, rel=0.01)
    assert sum(fit.category_slopes.values()) == pytest.approx(fit.line.slope)
    assert fit.line.max_rel_residual < 0.01
    assert fit.peak(1) == fit.floor  # the floor holds where the line would dip below it


@pytest.mark.parametrize("precision", ["fp32", "amp-bf16"])
def test_largest_batch_is_the_one_search_over_the_one_rule(fixture_results, precision) -> None:
    series = _series(fixture_results, precision, seq_len=32)
    fit = fits.fit_batch_sweep(series)
    gpu = gpus.find("RTX 4090")
    needs = fits.needs_on(series, gpu)
    # what each point needs: its reserved peak on the 4090's cuBLAS workspaces, and the top
    # of Ada's context range, as the estimate's own verdict says
    for r in series:
        verdict = StepMemory.from_dict(r).fits("RTX 4090")
        assert needs[r["experiment"]["batch_size"]] == verdict.needed_bytes
    answer = fits.largest_batch(fit, needs, gpu)
    assert answer.gpu == "RTX 4090" and answer.memory_bytes == gpu.memory_bytes
    assert answer.batch > max(needs) and answer.extrapolated  # tiny: thousands fit
    assert answer.disagreements == () and answer.checked == len(needs)
    # a GPU smaller than any point needs: nothing fits, and every point agrees
    small = dataclasses.replace(gpu, memory_bytes=min(needs.values()) - 1)
    nothing = fits.largest_batch(fit, needs, small)
    assert nothing.batch == 0 and nothing.disagreements == ()
    # between two points: the answer lies between their batches, and the line says why
    ordered = sorted(needs.items())
    (b_low, low), (b_high, high) = ordered[-2], ordered[-1]
    between = fits.largest_batch(fit, needs, dataclasses.replace(gpu, memory_bytes=(low + high) // 2))
    assert b_low <= between.batch < b_high and between.measured_fits in (None, True)


def test_a_sweep_without_the_allocators_figures_gets_no_largest_batch(fixture_results) -> None:
    series = copy.deepcopy(_series(fixture_results, "fp32", seq_len=32))
    for r in series:  # an estimate from before the catalogue: its own GPU's figures only
        r["allocator"].pop("other_workspaces")
    assert fits.needs_on(series, gpus.find("RTX 4090")) == {}
    assert fits.needs_on(series, gpus.find("H100")) != {}  # its own GPU still judged
    for r in series:
        r["allocator"] = None
    assert fits.needs_on(series, gpus.find("H100")) == {}


def test_formula_variants_and_their_quadratic_term() -> None:
    assert fits.formula_coefficients("amp-fp16") == (34, 5)
    assert fits.formula_coefficients("fp32") == (66, 9)
    arch = {"layers": 12, "hidden": 768, "heads": 12, "intermediate": 3072}
    for precision, element in (("fp32", 4), ("amp-bf16", 2)):
        got = fits.formula_activations(arch, precision=precision, batch_size=4, seq_len=256)
        one = derived.activation_formula_bytes(seq_len=256, batch_size=4, hidden=768,
                                                heads=12, intermediate=3072,
                                                element_bytes=element)
        assert got["bytes"] == 12 * one
        assert got["quadratic"] == 12 * (2 * element + 1) * 12 * 256 * 256 * 4
    assert fits.formula_variant("fp32") == "fp32" and fits.formula_variant("amp-fp16") == "16-bit"


# --------------------------------------------------------------------------- the page


def test_context_groups_sweeps_by_backend_and_machine(fixture_results) -> None:
    ctx = sweeps.context(fixture_results, [])
    assert [g["seq_len"] for g in ctx["batch"]] == [32]
    assert [g["batch_size"] for g in ctx["seq"]] == [8]
    assert list(ctx["batch"][0]["series"]) == ["fp32", "amp-bf16"]
    # The same sweep from a CPU machine is its own group, after the CUDA-modelling one,
    # with no largest-batch table (a CPU run models no GPU).
    cpu = copy.deepcopy(_series(fixture_results, "fp32", seq_len=32))
    for r in cpu:
        r["backend"] = r["experiment"]["backend"] = r["experiment"]["device"] = "cpu"
        r["environment"]["machine_id"] = "cpu-test"
    ctx = sweeps.context(fixture_results + cpu, [])
    assert [(g["backend"], g["models_gpu"]) for g in ctx["batch"]] == \
        [("estimate", True), ("cpu", False)]
    assert "sweeps-largest-" + ctx["batch"][1]["id"] not in sweeps.tables(ctx, "en")
    assert sweeps.context(_series(fixture_results, "fp32", seq_len=32)[:2], []) is None


@pytest.mark.parametrize("lang", LANGS)
def test_charts_are_well_formed_deterministic_and_unique(fixture_results, lang) -> None:
    ctx = sweeps.context(fixture_results, [])
    figures = sweeps.figures(ctx, lang)
    assert sorted(figures) == sorted(["sweeps-batch-" + ctx["batch"][0]["id"],
                                      "sweeps-seq-" + ctx["seq"][0]["id"]])
    assert figures == sweeps.figures(sweeps.context(fixture_results, []), lang)
    for name, svg in figures.items():
        check_svg(svg, f"chart-{name}-{lang}")
    desc = check_svg(figures["sweeps-batch-" + ctx["batch"][0]["id"]], ".+").find(
        f"{SVG}desc").text
    assert f"{ctx['batch'][0]['series']['fp32']['bytes_per_sample'] / MIB:,.1f}" in desc


@pytest.mark.parametrize("lang", LANGS)
def test_page_numbers_follow_the_data(fixture_results, lang) -> None:
    before = page_markdown(sweeps, sweeps.context(fixture_results, []), lang)
    # One more MiB per sample of temporaries in every fp32 result: the slope moves by 1 MiB.
    changed = copy.deepcopy(fixture_results)
    for r in changed:
        if r["experiment"]["precision"] == "fp32":
            extra = MIB * r["experiment"]["batch_size"]
            r["peak_bytes"] += extra
            r["live_at_peak_bytes"]["temporaries"] += extra
            r["timeline"]["bytes"]["temporaries"] = [
                v + extra for v in r["timeline"]["bytes"]["temporaries"]]
    ctx_before = sweeps.context(fixture_results, [])
    ctx = sweeps.context(changed, [])
    old = ctx_before["batch"][0]["series"]["fp32"]["bytes_per_sample"]
    new = ctx["batch"][0]["series"]["fp32"]["bytes_per_sample"]
    assert new == pytest.approx(old + MIB)
    after = page_markdown(sweeps, ctx, lang)
    assert after != before
    assert f"**{new / MIB:,.1f}" in after and f"**{new / MIB:,.1f}" not in before
    assert "{{" not in after and "sweeps-batch-" in after


@pytest.mark.parametrize("lang", LANGS)
def test_page_with_one_kind_of_sweep(fixture_results, lang) -> None:
    only_batch = [r for r in fixture_results if r["experiment"]["seq_len"] == 32]
    only_seq = [r for r in fixture_results if r["experiment"]["batch_size"] == 8]
    for found, present, absent in ((only_batch, "sweeps-batch-", "sweeps-seq-"),
                                   (only_seq, "sweeps-seq-", "sweeps-batch-")):
        page = page_markdown(sweeps, sweeps.context(found, []), lang)
        assert f"figures/{present}" in page and f"figures/{absent}" not in page


def _as_cuda(found: list[dict], context: int) -> list[dict]:
    """Copies of results as if a GPU had measured them, with the allocator's own figures."""
    copies = copy.deepcopy(found)
    for r in copies:
        r["backend"] = r["experiment"]["backend"] = r["experiment"]["device"] = "cuda"
        r["environment"].update(machine_id="test-gpu", device_name="Test GPU")
        r["ground_truth"] = {"peak_bytes": r["peak_bytes"], "context_bytes": context,
                             "steps_peak_bytes": r["peak_bytes"],
                             "steps_max_reserved_bytes": r["peak_bytes"] * 11 // 10}
        r["allocator"] = None
    return copies


@pytest.mark.parametrize("lang", LANGS)
def test_a_sweep_measured_on_a_gpu_is_judged_with_its_own_context(fixture_results, lang) -> None:
    cuda = _as_cuda(_series(fixture_results, "fp32", seq_len=32), 300 * MIB)
    ctx = sweeps.context(fixture_results + cuda, [])
    assert [g["backend"] for g in ctx["batch"]] == ["cuda", "estimate"]
    needs = fits.needs_on(cuda, gpus.find("RTX 4090"))
    assert needs == {r["experiment"]["batch_size"]: r["peak_bytes"] * 11 // 10 + 300 * MIB
                     for r in cuda}  # its reserved peak and the context it measured
    page = page_markdown(sweeps, ctx, lang)
    assert {"en": "as measured, with the CUDA context measured on that run",
            "zh": "（实测值），加上那次运行实测的 CUDA 上下文"}[lang] in page


def test_page_without_sweeps_says_how_to_get_them() -> None:
    for lang in LANGS:
        page = page_markdown(sweeps, None, lang)
        assert "python -m generator build" not in page  # no maintainer instructions
        assert {"zh": "还没有发布", "en": "published"}[lang] in page


def test_page_numbers_follow_changed_files(tmp_path) -> None:
    """Edit a result file on disk and read the results again: the page's numbers move."""
    data = tmp_path / "results"
    shutil.copytree(FIXTURES, data)
    first = page_markdown(sweeps, sweeps.context(site_inputs(data)[0], []), "en")
    path = data / "estimate" / "tiny-b8-s32-fp32-adamw-estimate.json"
    result = json.loads(path.read_text(encoding="utf-8"))
    result["peak_bytes"] += 64 * MIB
    result["live_at_peak_bytes"]["temporaries"] += 64 * MIB
    result["category_max_bytes"]["temporaries"] += 64 * MIB  # the figures still add up
    for allocator in [result["allocator"], *result["allocator"]["other_workspaces"]]:
        allocator["peak_allocated_bytes"] += 64 * MIB
        allocator["peak_reserved_bytes"] += 64 * MIB
    result["timeline"]["bytes"]["temporaries"] = [
        v + 64 * MIB for v in result["timeline"]["bytes"]["temporaries"]]
    path.write_text(json.dumps(result), encoding="utf-8")
    changed = site_inputs(data)[0]
    second = page_markdown(sweeps, sweeps.context(changed, []), "en")
    assert first != second
    fit = fits.fit_batch_sweep(_series(changed, "fp32", seq_len=32))
    assert f"**{fit.line.slope / MIB:,.1f} MiB per sample**" in second
    assert f"**{fit.line.slope / MIB:,.1f} MiB per sample**" not in first


def test_a_default_option_stored_as_a_json_list_is_not_named(fixture_results) -> None:
    """JSON gives checkpoint_classes back as a list; the default is an empty tuple. Only a
    class list that is set names the sweep, in the words the reports use."""
    result = copy.deepcopy(_series(fixture_results, "fp32", seq_len=32)[0])
    result["experiment"]["checkpoint_classes"] = []
    plain = sweeps._describe(result, "batch_size")
    assert plain["options"] == {"en": [], "zh": []} and "ckpt" not in plain["id"]
    result["experiment"]["checkpoint_classes"] = ["TinyBlock"]
    named = sweeps._describe(result, "batch_size")
    assert named["options"]["en"] == ["checkpointing TinyBlock"]
    assert named["options"]["zh"] == ["激活检查点（TinyBlock）"]
    assert named["id"].endswith("ckpt-tinyblock") and named["id"] != plain["id"]


# Sentences that assert a relation (issue 34): each branch on small synthetic figures.
VOCAB = 4 * 128 * 30522  # one FP32 vocabulary-sized tensor per sample, 128 tokens


def test_per_sample_words_counts_the_loss_tensors_and_says_amp_has_fewer():
    words = sweeps.per_sample_words(
        {"fp32": {"activations": 111 * MIB, "temporaries": 2 * VOCAB},
         "amp-bf16": {"activations": 87 * MIB, "temporaries": VOCAB}}, VOCAB, 128, 30522)
    assert "two FP32 vocabulary-sized tensors per sample" in words.en
    assert "one such tensor: fewer" in words.en and "does not shrink" not in words.en
    assert "两份" in words.zh and "只剩一份" in words.zh


def test_per_sample_words_says_amp_does_not_shrink_them_only_when_it_does_not():
    words = sweeps.per_sample_words(
        {"fp32": {"activations": 111 * MIB, "temporaries": 2 * VOCAB},
         "amp-bf16": {"activations": 87 * MIB, "temporaries": 2 * VOCAB}}, VOCAB, 128, 30522)
    assert "AMP does not shrink them" in words.en and "没有让它们变小" in words.zh


def test_per_sample_words_names_no_loss_tensors_where_the_bytes_are_no_whole_number_of_them():
    words = sweeps.per_sample_words(
        {"fp32": {"activations": 111 * MIB, "temporaries": 1.5 * VOCAB}}, VOCAB, 128, 30522)
    assert "vocabulary" not in words.en and "词表" not in words.zh
    assert sweeps.vocab_tensors(1.5 * VOCAB, VOCAB) is None
    assert sweeps.vocab_tensors(2 * VOCAB * 1.001, VOCAB) == 2
    assert sweeps.vocab_tensors(2 * VOCAB, None) is None


def test_fixed_part_words_calls_amp_larger_only_where_it_is():
    larger = sweeps.fixed_part_words({"fp32": 1.22e9, "amp-bf16": 1.43e9}, 0)
    assert "which is why AMP's fixed part is larger" in larger.en and "反而更大" in larger.zh
    assert "the gradients are not there yet" in larger.en
    not_larger = sweeps.fixed_part_words({"fp32": 1.43e9, "amp-bf16": 1.22e9}, 0)
    assert "larger" not in not_larger.en and "更大" not in not_larger.zh


def test_fixed_part_words_names_gradients_live_at_the_peak():
    words = sweeps.fixed_part_words({"fp32": 1.22e9}, 100 * MIB)
    assert "not there yet" not in words.en and "100.0 MiB of gradients" in words.en
    assert "梯度还没有产生" not in words.zh


def _line(per_sample: float, fixed: float) -> dict:
    return {"bytes_per_sample": per_sample, "fixed": fixed}


def test_amp_batch_words_says_not_twice_only_below_twice():
    series = {"fp32": _line(141 * MIB, 1.2e9), "amp-bf16": _line(102 * MIB, 1.4e9)}
    words = sweeps.amp_batch_words("amp-bf16", "RTX 4090", 144, 181, series)["words"]
    assert "but not twice as much" in words.en and "not by half" in words.en
    assert "the fixed part grows" in words.en and "远不到两倍" in words.zh
    series = {"fp32": _line(140 * MIB, 1.2e9), "amp-bf16": _line(60 * MIB, 1.1e9)}
    words = sweeps.amp_batch_words("amp-bf16", "RTX 4090", 100, 230, series)["words"]
    assert "twice as much or more" in words.en and "not twice" not in words.en
    assert "not by half" not in words.en and "fixed part grows" not in words.en
    assert "两倍甚至更多" in words.zh
    words = sweeps.amp_batch_words("amp-bf16", "RTX 4090", 100, 100, series)["words"]
    assert "buys no batch" in words.en


def test_planning_says_a_longer_sequence_costs_more_only_when_the_layers_grow_faster():
    def seq(layers_at_512):
        points = [{"seq": 256, "peak": 10, "layers": 4},
                  {"seq": 512, "peak": 22, "layers": layers_at_512}]
        return {"series": {"fp32": {"points": points}}}
    assert sweeps._planning(None, seq(10))["double_seq"]["layers_factor"] == 2.5
    assert "double_seq" not in sweeps._planning(None, seq(8))
