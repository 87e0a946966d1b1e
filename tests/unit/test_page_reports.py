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
