"""The precision page: the two studies (gradient underflow, training curves), their charts and
tables, and the page, on fixture studies measured on the CPU (tests/fixtures/precision)."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import torch
from markupsafe import Markup

from generator import results
from generator.errors import ConfigError
from generator.site.render import render
from generator.site.pages import precision
from generator.measure.studies import Study
from generator.measure.studies import training_curves
from generator.measure.studies import underflow
from generator.jobs.suite import load_suite
from generator.site.templating import environment
from generator.units import pct

FIXTURES = Path(__file__).parent / "fixtures" / "precision"
SUITE = Path(__file__).resolve().parent.parent / "generator" / "suites" / "precision.toml"
SVG = "{http://www.w3.org/2000/svg}"
LANGS = ("zh", "en")


def _context(root: Path = FIXTURES) -> dict:
    return precision.context(results.load_all(root), results.load_studies(root))


def _page(ctx: dict, lang: str) -> str:
    """The page's Markdown from a context, with the figures and tables the section makes."""
    figures = {k: Markup(v) for k, v in precision.figures(ctx, lang).items()}
    return environment().get_template(f"{lang}/precision.md.j2").render(
        sections={"precision": ctx}, figures=figures, tables=precision.tables(ctx, lang),
        lang=lang)


def _prose(page: str) -> str:
    """The page without its inline SVGs, whose coordinates hold every digit sequence."""
    return re.sub(r"<svg.*?</svg>", "", page, flags=re.S)


# --- underflow ------------------------------------------------------------------------------

def _small_gradient() -> torch.Tensor:
    """Magnitudes spread evenly over 10⁻¹⁰ … 10⁻², both signs, some exact zeros: most of
    them below fp16's smallest normal, none near its largest value."""
    values = torch.logspace(-10, -2, 10_001)
    values[::2] *= -1
    values[::100] = 0
    return values


def test_scaling_keeps_small_gradients_that_fp16_loses() -> None:
    grad = _small_gradient()
    plain = underflow.cast_effects(grad, torch.float16)
    scaled = underflow.cast_effects(grad, torch.float16, underflow.grad_scaler_initial_scale())
    lost = lambda c: c["zero_fraction"] + c["subnormal_fraction"]
    assert plain["zero"] > 0 and plain["subnormal"] > 0
    assert lost(plain) > lost(scaled)
    assert plain["zero_fraction"] > scaled["zero_fraction"]
    assert plain["mean_relative_error"] > scaled["mean_relative_error"]
    assert plain["overflow"] == scaled["overflow"] == 0
    bf16 = underflow.cast_effects(grad, torch.bfloat16)
    assert bf16["zero"] == bf16["subnormal"] == 0
    assert bf16["mean_relative_error"] > scaled["mean_relative_error"]  # coarser eps


@pytest.mark.parametrize("dtype,scale", [(torch.float16, 1.0), (torch.float16, 2.0 ** 16),
                                         (torch.bfloat16, 1.0)])
def test_counts_agree_with_the_cast_itself(dtype, scale) -> None:
    torch.manual_seed(0)
    grad = torch.randn(200_000) * torch.exp(torch.randn(200_000) * 6) * 1e-4
    grad[::50] = 0
    found = underflow.cast_effects(grad, dtype, scale)
    cast = (grad.abs() * scale).to(dtype)
    nonzero = grad != 0
    tiny = torch.finfo(dtype).smallest_normal
    assert found["zero"] == int(((cast == 0) & nonzero).sum())
    assert found["subnormal"] == int(((cast != 0) & (cast < tiny)).sum())
    assert found["overflow"] == int(torch.isinf(cast).sum())
    assert found["zero_fraction"] == pytest.approx(found["zero"] / int(nonzero.sum()))


def test_boundaries_are_fp16s_own_edges() -> None:
    finfo = torch.finfo(torch.float16)
    zero_max, subnormal_max, finite_max = underflow.boundaries(torch.float16, 1.0)
    assert zero_max < finfo.smallest_normal * finfo.eps <= subnormal_max < finfo.smallest_normal
    assert finfo.max <= finite_max
    assert underflow.grad_scaler_initial_scale() == torch.amp.GradScaler("cpu").get_scale()


def test_underflow_study_on_the_tiny_model() -> None:
    data = underflow.run({"model": "tiny", "batch_size": 2, "seq_len": 16})
    groups = {g["name"]: g for g in data["groups"]}
    assert {"parameters", "activations", "embeddings", "layernorm"} <= set(groups)
    layer_groups = [g for n, g in groups.items() if n not in ("parameters", "activations")]
    assert sum(g["values"] for g in layer_groups) == groups["parameters"]["values"]
    for group in groups.values():
        assert sum(group["log2_counts"]) == group["values"]
        for cast in group["casts"].values():
            assert 0 <= cast["zero_fraction"] + cast["subnormal_fraction"] <= 1
    json.dumps(data)  # a study's data is JSON as it is


def test_study_parameters_are_checked() -> None:
    with pytest.raises(ConfigError) as caught:
        Study.from_dict({"kind": "underflow", "name": "u", "params": {"model": "nope",
                                                                     "batch_size": 0}})
    assert "model" in str(caught.value) and "batch_size" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        Study.from_dict({"kind": "training_curves", "name": "t",
                         "params": {"precisions": ["amp-bf16"], "steps": -1, "speed": 1}})
    message = str(caught.value)
    assert "fp32 first" in message and "steps" in message and "speed" in message


def test_the_suite_file_is_valid() -> None:
    jobs = load_suite(SUITE)
    assert {(j.kind, j.backend) for j in jobs} == {("training_curves", "cpu"),
                                                   ("training_curves", "cuda"),
                                                   ("underflow", "cpu")}
    for job in jobs:
        if job.kind == "training_curves":
            assert job.params["device"] == job.backend  # run() is not told the backend


# --- training curves ------------------------------------------------------------------------

SMALL = {"steps": 40, "batch_size": 16, "eval_size": 64, "max_points": 20}


def test_training_is_deterministic_and_learns() -> None:
    first, second = training_curves.run(SMALL), training_curves.run(SMALL)
    strip = lambda data: [{k: v for k, v in run.items() if k != "seconds"}
                          for run in data["runs"]]
    assert strip(first) == strip(second)
    assert first["every"] == 2 and len(first["step"]) == 20 and first["step"][-1] == 40
    for run in first["runs"]:
        assert len(run["loss"]) == 20
        assert run["loss"][-1] < run["loss"][0] - 0.3, run["precision"]
    base, bf16, reference = first["runs"]
    assert (base["precision"], bf16["precision"], reference["reference"]) == \
        ("fp32", "amp-bf16", True)
    assert base["loss"][0] == pytest.approx(bf16["loss"][0], abs=0.02)  # same start
    assert reference["loss"] != base["loss"]  # another seed, other weights and batches


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_fp16_with_grad_scaler_trains_on_cuda() -> None:
    data = training_curves.run({**SMALL, "device": "cuda"})
    fp16 = next(r for r in data["runs"] if r["precision"] == "amp-fp16")
    assert fp16["skipped_steps"] is not None and fp16["final_scale"] > 0
    assert fp16["loss"][-1] < fp16["loss"][0]


# --- section, charts, page ------------------------------------------------------------------

def test_context_reads_the_fixture_studies() -> None:
    ctx = _context()
    assert [v["name"] for v in ctx["curves"]] == ["training-curves-cpu", "training-curves-fp16"]
    u = ctx["underflow"]
    assert u["model"] == "bert-base" and u["scale_log2"] == 16
    assert u["limits"] == {"fp16_normal_log2": -14, "fp16_subnormal_log2": -24}
    p = u["parameters"]
    assert p["fp16"]["lost_fraction"] > p["fp16_scaled"]["lost_fraction"]
    assert ctx["range_claim"]["decade_ratio"] == pytest.approx(
        ctx["ranges"]["fp16"]["decades"] / ctx["ranges"]["fp32"]["decades"])
    fp16_run = next(r for r in ctx["curves"][1]["amp"] if r["precision"] == "amp-fp16")
    assert fp16_run["final_scale_text"] == "2¹⁶"


@pytest.mark.parametrize("lang", LANGS)
def test_charts_are_well_formed_and_described(lang) -> None:
    for name, svg in precision.figures(_context(), lang).items():
        root = ET.fromstring(svg)
        assert root.get("role") == "img" and root.get("id") == f"chart-{name}-{lang}"
        assert root.find(f"{SVG}title").text and root.find(f"{SVG}desc").text
        ids = re.findall(r'\sid="([^"]+)"', svg)
        assert len(ids) == len(set(ids)) and all(i.startswith(f"chart-{name}-{lang}") for i in ids)
        assert "#010203" not in svg.lower()  # the ink became currentColor
    assert precision.figures(_context(), lang) == precision.figures(_context(), lang)


@pytest.mark.parametrize("lang", LANGS)
def test_page_prints_the_fixture_numbers(lang) -> None:
    ctx = _context()
    page = _page(ctx, lang)
    p = ctx["underflow"]["parameters"]
    assert f"**{pct(p['fp16']['lost_fraction'])}**" in page
    assert f"{p['fp16_scaled']['lost']:,}" in page
    bf16 = ctx["curves"][0]["amp"][0]
    assert f"{bf16['eval_loss']:.4f}" in page and f"{bf16['eval_loss_difference']:+.4f}" in page
    assert "GradScaler" in page and "2¹⁶" in page
    assert page.count("<svg") == 3
    assert "1/16" in page and f"1/{1 / ctx['range_claim']['decade_ratio']:.1f}" in page


@pytest.mark.parametrize("lang", LANGS)
def test_page_without_studies_still_shows_the_formats(lang) -> None:
    ctx = precision.context([], [])
    page = _page(ctx, lang)
    assert "python -m generator build" in page and "<svg" not in page
    assert f"{ctx['ranges']['fp16']['smallest_normal']:.3g}" in page


def test_numbers_follow_the_studies(tmp_path) -> None:
    """Change the fixture studies: the rendered pages must change with them."""
    changed = tmp_path / "results"
    shutil.copytree(FIXTURES, changed)
    folder = changed / "studies" / "cpu-amd-epyc"
    curves = json.loads((folder / "training-curves-cpu.json").read_text())
    bf16 = curves["data"]["runs"][1]
    bf16["eval_loss"], bf16["eval_loss_difference"] = 0.4321, -0.1234
    (folder / "training-curves-cpu.json").write_text(json.dumps(curves))
    grads = json.loads((folder / "underflow-bert-base.json").read_text())
    total = next(g for g in grads["data"]["groups"] if g["name"] == "parameters")
    total["casts"]["fp16"]["subnormal_fraction"] = 0.5
    total["casts"]["fp16"]["zero_fraction"] = 0.25
    (folder / "underflow-bert-base.json").write_text(json.dumps(grads))
    render(changed, tmp_path / "docs")
    before = {lang: _prose(_page(_context(), lang)) for lang in LANGS}
    for lang in LANGS:
        page = _prose((tmp_path / "docs" / lang / "precision.md").read_text())
        assert "0.4321" in page and "-0.1234" in page and "0.4321" not in before[lang]
        assert "**75.0 %**" in page and "**75.0 %**" not in before[lang]
        assert (tmp_path / "docs" / lang / "figures" / "precision-underflow.svg").exists()
