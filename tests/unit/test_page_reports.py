"""The report pages: each heading names what seq_len counted (a sequence's tokens or an
image's side) and the kind of its figures; an estimate modelling CUDA shows the simulated
allocator's peaks and nvidia-smi's view."""

from __future__ import annotations

import pytest
from conftest import LANGS
from made_results import hand_made_result
from page_checks import page_markdown

from generator.results.store import ENVIRONMENT_DEFAULTS, OPTIONAL_DEFAULTS
from generator.site.pages import reports


def _result(**experiment) -> dict:
    """A hand-made result as results.load would give it back, published as JSON."""
    result = {**OPTIONAL_DEFAULTS, **hand_made_result(**experiment)}
    result["environment"] = {**ENVIRONMENT_DEFAULTS, **result["environment"],
                             "machine_id": "estimate"}
    result["json_path"] = f"data/estimate/{result['key']}.json"
    return result


@pytest.mark.parametrize("lang", LANGS)
def test_headings_name_the_image_side_and_the_kind(lang: str) -> None:
    image, text = _result(model="resnet50", seq_len=224), _result(seq_len=64)
    image["inputs"] = "image"
    ctx = reports.context([image, text], [])
    page = page_markdown(reports, ctx, lang, "reports/resnet50.md")
    heading = next(line for line in page.splitlines() if line.startswith("## "))
    assert ("image side 224" if lang == "en" else "图像边长 224") in heading
    assert ("estimated (modelling CUDA)" if lang == "en" else "估算（模拟 CUDA）") in heading
    page = page_markdown(reports, ctx, lang, "reports/tiny.md")
    assert ("sequence 64" if lang == "en" else "序列 64") in page


@pytest.mark.parametrize("lang", LANGS)
def test_an_estimate_of_cuda_shows_the_allocators_figures(lang: str) -> None:
    result = _result()
    mib = 2**20
    result["allocator"] = {"source": "s", "steps": 5, "peak_allocated_bytes": 70 * mib,
                           "peak_reserved_bytes": 90 * mib, "workspace_bytes": 64 * mib,
                           "segments": 3, "out_of_memory": None,
                           "context_bytes": [450 * mib, 1024 * mib]}
    page = page_markdown(reports, reports.context([result], []), lang, "reports/tiny.md")
    assert "90.0 MiB" in page and "540.0 MiB" in page and "1.09 GiB" in page


@pytest.mark.parametrize("lang", LANGS)
def test_a_sweep_shares_one_timeline_chart_and_the_others_say_theirs_in_words(lang) -> None:
    """Steps that differ only in batch or sequence: one chart, at the most common size; a
    step with another setup (checkpointing) has its own."""
    sweep = [_result(batch_size=b) for b in (2, 4, 8)] + [_result(batch_size=4, seq_len=32)]
    own = _result(batch_size=4, checkpointing=True)
    ctx = reports.context([*sweep, own], [])
    drawn = reports.figures(ctx, lang)
    lead, other = sweep[1], sweep[0]  # batch 4, sequence 16: the page's most common size
    assert set(drawn) == {f"report-timeline-{lead['key']}-estimate",
                          f"report-timeline-{own['key']}-estimate"}
    page = page_markdown(reports, ctx, lang, "reports/tiny.md")
    section = page.split(f"{{ #{other['key']}-estimate }}")[1].split("\n## ")[0]
    assert f"](#{lead['key']}-estimate)" in section and "<figure" not in section
    assert ("Peak 0.01 GiB at allocation event 1 of 3" if lang == "en" else "峰值 0.01 GiB") in section


@pytest.mark.parametrize("lang", LANGS)
def test_activations_per_block_are_a_table_with_equal_layers_on_one_row(lang) -> None:
    mib = 2**20
    result = _result()
    result["module_activation_bytes"] = {"embed": mib, "layers.0": 2 * mib, "layers.1": 2 * mib,
                                         "layers.2": 2 * mib, "layers.3": mib, "head": mib}
    table = reports.blocks_table(result, lang)
    rows = [line for line in table.splitlines()[2:]]
    assert len(rows) == 4, rows
    assert rows[1].startswith("| layers.0 … layers.2") and "| 2.0 | 22.2 % |" in rows[1]
    assert rows[2].startswith("| layers.3 |")
    page = page_markdown(reports, reports.context([result], []), lang, "reports/tiny.md")
    assert "??? note" in page and "layers.0 … layers.2" in page
