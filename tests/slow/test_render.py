"""The render stage over whole fixture trees (render.render, in this process): every page
module's pages and figures written in both languages, well-formed, deterministic, with
unique ids; data files published; stale files removed; the nav rewritten. Each page's
content from its context alone: tests/unit/test_page_*.py."""

from __future__ import annotations

import json
import shutil
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO_ROOT, cli_env, file_digests
from page_checks import check_svg, site_inputs, svg_ids

from generator.site import owned, render
from generator.site.derived import torch_facts
from generator.site.pages import all_pages, pages_of
from generator.words import LANGS

#: Every page of the site; the reports hold one page per model of the fixture.
PAGES = ("index.md", "explainer.md", "claims.md", "methodology.md", "levers.md", "sweeps.md",
         "precision.md", "scale.md", "reports/index.md", "reports/bert-base.md")
TREES = ("results", "levers", "sweeps", "precision", "scale")


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each fixture tree rendered once."""
    out = tmp_path_factory.mktemp("docs")
    for tree in TREES:
        render.render(FIXTURES / tree, out / tree)
    return {tree: out / tree for tree in TREES}


@pytest.mark.parametrize("tree", TREES)
def test_every_declared_page_and_figure_is_written_in_both_languages(docs, tree: str) -> None:
    results, studies = site_inputs(FIXTURES / tree)
    declared = {page.path for name, module in all_pages().items()
                for page in pages_of(module, module.context(results, studies))}
    assert set(PAGES) - {"reports/bert-base.md"} <= declared
    for lang in LANGS:
        root = docs[tree] / lang
        assert {p.relative_to(root).as_posix() for p in root.rglob("*.md")} == declared
        figures = {p.stem for p in (root / "figures").glob("*.svg")}
        linked = {name for page in root.rglob("*.md")
                  for name in re.findall(r"figures/([^)\s\"]+)\.svg", page.read_text("utf-8"))}
        assert linked == figures, tree  # every figure is shown, every figure shown exists


def test_the_whole_site_from_the_fixture_results(docs) -> None:
    facts = torch_facts(site_inputs(FIXTURES / "results")[1])
    for lang in LANGS:
        root = docs["results"] / lang
        for page in PAGES:
            assert (root / page).exists(), page
        # the data once, beside the language folders, for both
        assert not (root / "data").exists()
        assert (docs["results"] / "data" / "estimate" /
                 "bert-base-b32-s128-fp32-adamw-estimate.json").exists()
        names = {p.name for p in (root / "figures").glob("*.svg")}
        assert {"bars.svg", "house.svg", "amp-flow-fp32.svg", "amp-flow-amp-fp16.svg",
                "timeline-fp32.svg", "modules-fp32.svg"} <= names
        # The tree holds the torch_facts study: the precision page shows the formats.
        precision = (root / "precision.md").read_text(encoding="utf-8")
        assert f"{facts['by_name']['fp16']['smallest_normal']:.3g}" in precision
    assert (docs["levers"] / "en" / "figures" / "levers-peaks.svg").exists()
    assert len(list((docs["sweeps"] / "en" / "figures").glob("sweeps-*.svg"))) == 2
    scale = (docs["scale"] / "en" / "scale.md").read_text(encoding="utf-8")
    assert not scale.startswith("---") and "figures/scale-lines-gpt2-small" in scale  # keeps the nav


@pytest.mark.parametrize("tree", TREES)
def test_every_svg_is_well_formed_and_every_page_has_unique_ids(docs, tree: str) -> None:
    svgs = sorted(docs[tree].rglob("*.svg"))
    assert svgs
    for path in svgs:
        check_svg(path.read_text(encoding="utf-8"), r"(chart|diagram)-.+")
    for page in docs[tree].rglob("*.md"):
        ids = svg_ids(page.read_text(encoding="utf-8"))
        assert len(ids) == len(set(ids)), page


def test_rendering_twice_is_byte_identical(docs, tmp_path: Path) -> None:
    render.render(FIXTURES / "results", tmp_path)
    assert file_digests(tmp_path) == file_digests(docs["results"])


def test_stale_generated_files_are_removed_and_the_nav_written(tmp_path: Path) -> None:
    """Render takes a new folder (its marker, generator/site/owned.py), and a second render
    into it removes what the first wrote and the second did not; a file beside its folders
    stays, and so does a result stored in the data folder."""
    render.render(FIXTURES / "sweeps", tmp_path / "docs")
    assert (tmp_path / "docs" / owned.PAGES.marker).is_file()
    stale = tmp_path / "docs" / "en" / "figures" / "old.svg"
    stale.write_text("<svg/>")
    stale_data = tmp_path / "docs" / "data" / "gone.json"
    stale_data.write_text("{}")
    (tmp_path / "docs" / "notes.md").write_text("# mine\n")
    # a result stored in the data folder, which render did not copy there: never removed
    stored = tmp_path / "docs" / "data" / "estimate" / "mine.json"
    stored.write_text("{}")
    render.render(FIXTURES / "sweeps", tmp_path / "docs")
    assert not stale.exists() and not stale_data.exists()
    assert (tmp_path / "docs" / "notes.md").read_text() == "# mine\n"
    assert stored.read_text() == "{}"
    nav = (tmp_path / "docs" / render.NAV).read_text(encoding="utf-8")
    listed = re.findall(r"- ([\w/.-]+\.md)", nav)
    written = sorted(p.relative_to(tmp_path / "docs" / "en").as_posix()
                     for p in (tmp_path / "docs" / "en").rglob("*.md"))
    assert sorted(listed) == written
    assert "reports/bert-base.md" not in listed  # the sweeps' model is tiny


def test_a_chart_is_byte_identical_in_another_process() -> None:
    """No state of this process (fonts found, hash seeds, matplotlib's counters) reaches a
    chart: another process draws the same bytes."""
    from generator.site.charts import step_charts

    path = FIXTURES / "results" / "estimate" / "bert-base-b32-s128-fp32-adamw-estimate.json"
    code = ("import json, pathlib, sys\nfrom generator.site.charts import step_charts\n"
            f"r = json.loads(pathlib.Path({str(path)!r}).read_text(encoding='utf-8'))\n"
            "sys.stdout.write(step_charts.timeline(r, 'zh'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True,
                         env={**cli_env(), "PYTHONHASHSEED": "4321"}, text=True,
                         encoding="utf-8", timeout=600, check=True)
    here = step_charts.timeline(json.loads(path.read_text(encoding="utf-8")), "zh")
    assert out.stdout == here


def test_copies_of_another_results_folder_come_and_go_with_it(tmp_path: Path) -> None:
    """Rendered from a results folder other than the data folder, render copies its results
    in (listed in data/.published) and a later render removes the copies of results gone
    from it; rendered from the data folder itself, nothing is copied and nothing removed."""
    source = tmp_path / "results"
    shutil.copytree(FIXTURES / "sweeps", source)
    render.render(source, tmp_path / "docs")
    data = tmp_path / "docs" / "data"
    copied = sorted(p.relative_to(source) for p in source.glob("*/*.json"))
    assert copied and all((data / p).is_file() for p in copied)
    assert (data / render.PUBLISHED).read_text().split() == [p.as_posix() for p in copied]
    (source / copied[0]).unlink()
    render.render(source, tmp_path / "docs")
    assert not (data / copied[0]).exists() and (data / copied[-1]).is_file()
    render.render(data, tmp_path / "docs")  # the data folder is the results folder now
    assert (data / copied[-1]).is_file()
    assert (data / render.PUBLISHED).read_text() == ""
