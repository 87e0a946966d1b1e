"""The render stage on fixture results: files, determinism, ids, numbers from the results."""

import hashlib
import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from generator.site import render

from generator import results
from generator.units import gib, mib

FIXTURES = Path(__file__).parent / "fixtures" / "results"


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    out = tmp_path_factory.mktemp("docs")
    render.render(FIXTURES, out)
    return out


def test_pages_and_figures_in_both_languages(docs):
    for lang in render.LANGS:
        for page in render.page_names() + ["reports/bert-base.md", "data/estimate/"
                                           "bert-base-b32-s128-fp32-adamw-estimate.json"]:
            assert (docs / lang / page).exists(), page
        names = {p.name for p in (docs / lang / "figures").glob("*.svg")}
        assert {"bars.svg", "house.svg", "amp-flow-fp32.svg", "amp-flow-amp-fp16.svg",
                "timeline-fp32.svg", "modules-amp-bf16.svg"} <= names


def test_rendering_twice_is_byte_identical(docs, tmp_path):
    render.render(FIXTURES, tmp_path)
    assert _digests(tmp_path) == _digests(docs)


def test_every_svg_is_well_formed_and_accessible(docs):
    for path in docs.rglob("*.svg"):
        root = ET.fromstring(path.read_text())
        assert root.get("role") == "img", path
        assert root.find("{http://www.w3.org/2000/svg}title") is not None, path
        assert root.find("{http://www.w3.org/2000/svg}desc") is not None, path


def test_ids_are_unique_on_each_page(docs):
    for page in docs.rglob("*.md"):
        ids = re.findall(r'\sid="([^"]+)"', page.read_text())
        assert len(ids) == len(set(ids)), page


def test_tables_print_the_fixture_numbers(docs):
    fp32 = results.load(FIXTURES / "estimate/bert-base-b32-s128-fp32-adamw-estimate.json")
    page = (docs / "en" / "reports" / "bert-base.md").read_text()
    for cat, nbytes in fp32["live_at_peak_bytes"].items():
        if nbytes:
            assert f"| {mib(nbytes)} |" in page, cat
    assert f"**{mib(fp32['peak_bytes'])}**" in page


def test_numbers_follow_the_results(tmp_path):
    """Scale one fixture's activations: the page must change accordingly (no typed numbers)."""
    changed = tmp_path / "results"
    shutil.copytree(FIXTURES, changed)
    path = changed / "estimate/bert-base-b32-s128-fp32-adamw-estimate.json"
    data = json.loads(path.read_text())
    extra = 3 * 2**30
    data["live_at_peak_bytes"]["activations"] += extra
    data["category_max_bytes"]["activations"] += extra
    data["peak_bytes"] += extra
    path.write_text(json.dumps(data))
    render.render(changed, tmp_path / "docs")
    for lang in render.LANGS:
        home = (tmp_path / "docs" / lang / "index.md").read_text()
        assert f"**{gib(data['peak_bytes'])} GiB**" in home
        report = (tmp_path / "docs" / lang / "reports" / "bert-base.md").read_text()
        assert f"| {mib(data['live_at_peak_bytes']['activations'])} |" in report
        explainer = (tmp_path / "docs" / lang / "explainer.md").read_text()
        assert f"{mib(data['live_at_peak_bytes']['activations'])}" in explainer


def test_stale_generated_files_are_removed(tmp_path):
    stale = tmp_path / "en" / "figures" / "old.svg"
    stale.parent.mkdir(parents=True)
    stale.write_text("<svg/>")
    render.render(FIXTURES, tmp_path)
    assert not stale.exists()


def test_no_results_still_renders_a_page(tmp_path):
    render.render(tmp_path / "none", tmp_path / "docs")
    assert "python -m generator build" in (tmp_path / "docs" / "en" / "index.md").read_text()
