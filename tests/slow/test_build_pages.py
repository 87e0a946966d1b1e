"""What reaches the built pages: a step that does not fit, hostile text, byte-identical output
and a warm build that renders nothing.

One `build` in a project that holds the committed fixture results plus a hand-made result
whose model name is a script tag (results are files other people commit), measuring a suite
of two estimates: BERT-base with a 1 MiB budget (does not fit) and tiny (fits). The build
runs a snapshot of the code (conftest.snapshot_code): the comparisons span minutes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import (
    FIXTURES,
    HOSTILE,
    INJECTIONS,
    LANGS,
    file_digests,
    make_project,
    snapshot_code,
)
from made_results import hand_made_result

SUITE = """\
[[experiment]]
model = "bert-base"
batch_size = 1
seq_len = 16
gpu_memory = "1MiB"

[[experiment]]
model = "tiny"
batch_size = 2
seq_len = 16
"""
OOM_KEY = "bert-base-b1-s16-fp32-adamw-estimate-budget-1mib"


def hostile_result() -> dict:
    """A complete result with markup wherever a file can carry text."""
    data = hand_made_result(model=HOSTILE)
    data["environment"] = {"torch": HOSTILE, "machine_id": "../../escape"}
    data["module_activation_bytes"] = {HOSTILE: 2**20, "layers.0": 2**20}
    data["phases"] = [{"name": "forward", "tick": 0}, {"name": HOSTILE, "tick": 1}]
    data["notes"] = [HOSTILE, *INJECTIONS.values()]  # Markdown's forms too (escaping.py)
    return data


def run_snapshot(args: list, root: Path, **env: str) -> subprocess.CompletedProcess:
    """`python ARGS` in `root`, importing the snapshot of the code there."""
    return subprocess.run([sys.executable, *args], cwd=root, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(root), **env},
                          stdin=subprocess.DEVNULL, timeout=900)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    root = make_project(tmp_path_factory.mktemp("pages") / "project")
    snapshot_code(root)
    shutil.copytree(FIXTURES / "results", root / "docs" / "data")
    hostile = hostile_result()  # under its own key, as load requires
    (root / "docs" / "data" / "estimate" / f"{hostile['key']}.json").write_text(
        json.dumps(hostile), encoding="utf-8")
    (root / "suite.toml").write_text(SUITE, encoding="utf-8")
    return root, run_snapshot(["-m", "generator", "build", "--config", "suite.toml"], root)


def _digests(docs: Path) -> dict[str, dict[str, str]]:
    """Every generated file (docs/zh and docs/en), digested."""
    return {lang: file_digests(docs / lang) for lang in LANGS}


def _html_svg_and_markdown(root: Path) -> list[Path]:
    return sorted(p for folder in ("site", "docs") for pattern in ("*.html", "*.svg", "*.md")
                  for p in (root / folder).rglob(pattern))


# --------------------------------------------------------------------------- out of memory


def test_a_step_that_does_not_fit_is_a_result_and_the_build_goes_on(built) -> None:
    root, proc = built
    assert proc.returncode == 0, proc.stderr
    progress = [line for line in proc.stderr.splitlines() if line.startswith("[")]
    assert len(progress) == 2, proc.stderr
    # numbered as they finish; the two estimates run in parallel workers, in either order
    assert [line[:6] for line in progress] == ["[1/2] ", "[2/2] "], proc.stderr
    oom, other = sorted(progress, key=lambda line: "bert-base" not in line)
    assert "] measured" in oom and "does not fit" in oom
    assert "bert-base batch 1 seq 16 fp32 adamw on estimate (cuda) in 1 MiB" in oom
    assert "] measured" in other and "peak" in other
    stored = json.loads((root / "docs" / "data" / "estimate" / f"{OOM_KEY}.json").read_text())
    assert stored["error"] == "out_of_memory"
    assert stored["experiment"]["gpu_memory"] == 2**20
    assert stored["peak_bytes"] > 2**20  # what it would have needed is kept


@pytest.mark.parametrize(("lang", "words"), [("en", "does not fit"), ("zh", "放不下")])
def test_the_report_page_says_it_does_not_fit(built, lang: str, words: str) -> None:
    root, proc = built
    assert proc.returncode == 0, proc.stderr
    page = (root / "docs" / lang / "reports" / "bert-base.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if words in line]
    assert rows and "out_of_memory" in rows[0], page
    html = (root / "site" / ("en/" if lang == "en" else "") / "reports" / "bert-base" /
            "index.html").read_text(encoding="utf-8")
    assert words in html


# --------------------------------------------------------------------------- hostile text


def test_hostile_text_is_escaped_in_pages_and_figures(built) -> None:
    """The page of the hostile model builds and shows its name, as text."""
    root, proc = built
    assert proc.returncode == 0, proc.stderr
    pages = list((root / "site" / "en" / "reports").glob("script-alert*/index.html"))
    assert len(pages) == 1, "the hostile model's report page was not built"
    assert "&lt;script&gt;alert(" in pages[0].read_text(encoding="utf-8")
    for path in _html_svg_and_markdown(root):
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".html":  # <head><title> is the theme's: see the test below
            text = re.sub(r"<title>.*?</title>", "", text, flags=re.S)
        assert "<script>alert" not in text, path
        assert "../../escape" not in text, path  # the folder names the machine, not the file


def test_markdown_in_results_adds_no_handler_link_or_image(built) -> None:
    """The notes carry each Markdown form (conftest.INJECTIONS): none becomes an attribute,
    a javascript: link or a data: image on a built page (in a browser:
    test_injection_browser.py)."""
    root, proc = built
    assert proc.returncode == 0, proc.stderr
    injected = re.compile(r"<[^>]*(\son\w+\s*=\s*[\"']?[^\"'>]*alert\(|"
                          r"(href|src)\s*=\s*[\"']?\s*(javascript|data):)", re.I)
    for path in sorted((root / "site").rglob("*.html")):
        found = injected.search(path.read_text(encoding="utf-8"))
        assert not found, f"{path}: {found.group(0)[:200]}"


def test_hostile_text_is_escaped_in_the_html_title(built) -> None:
    root, proc = built
    assert proc.returncode == 0, proc.stderr
    for path in sorted((root / "site").rglob("*.html")):
        assert "<script>alert" not in path.read_text(encoding="utf-8"), path


# --------------------------------------------------------------------------- determinism


def test_render_is_byte_identical_in_one_process_and_across_processes(built, tmp_path) -> None:
    """The build's render (one process), two renders in one other process, and one more in
    a third process with another hash seed write the same bytes into every file."""
    root, proc = built
    assert proc.returncode == 0, proc.stderr
    first = _digests(root / "docs")
    assert len(first["en"]) > 20 and any(name.endswith(".svg") for name in first["en"])
    twice = run_snapshot(["-c", "import sys; from generator.site.render import render; "
                          "[render('docs/data', d) for d in sys.argv[1:]]",
                          str(tmp_path / "again-1"), str(tmp_path / "again-2")], root)
    assert twice.returncode == 0, twice.stderr
    other = run_snapshot(["-m", "generator", "render", "--docs", str(tmp_path / "other")], root,
                         PYTHONHASHSEED="12345")
    assert other.returncode == 0, other.stderr
    for name in ("again-1", "again-2", "other"):
        assert _digests(tmp_path / name) == first, name


# --------------------------------------------------------------------------- warm builds


def test_a_warm_build_does_not_render_again(built) -> None:
    root, proc = built
    assert proc.returncode == 0, proc.stderr
    before = _digests(root / "docs")
    again = run_snapshot(["-m", "generator", "build", "--config", "suite.toml"], root)
    assert again.returncode == 0, again.stderr
    assert "2 jobs: 2 reused" in again.stderr
    assert "not rendered again" in again.stderr, again.stderr
    assert _digests(root / "docs") == before
    assert (root / "site" / "en" / "reports" / "bert-base" / "index.html").is_file()


#: Modules the render runs: a page's own, and the size formatting and option words pages import.
RENDERED_WITH = ("site/render.py", "units.py", "experiment/experiment.py")
#: What `build` asks before it renders (commands.build), in the snapshot's code.
IS_FRESH = ["-c", "from generator.site.freshness import is_fresh; "
            "print(is_fresh('docs/data', 'docs'))"]


def test_a_build_renders_again_after_the_code_it_renders_with_changes(built) -> None:
    """The render stamp digests the code: an edit to any module the render runs means render
    again. A build shows it for the first module; for the others, the check the build makes
    (freshness.is_fresh) turns false with the edit and true again without it."""
    root, proc = built
    assert proc.returncode == 0, proc.stderr
    first, *others = (root / "generator" / module for module in RENDERED_WITH)
    first.write_text(first.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    again = run_snapshot(["-m", "generator", "build", "--config", "suite.toml"], root)
    assert again.returncode == 0, again.stderr
    assert "not rendered again" not in again.stderr, f"{first} changed:\n{again.stderr}"
    for source in others:
        assert run_snapshot(IS_FRESH, root).stdout.split() == ["True"]
        text = source.read_text(encoding="utf-8")
        source.write_text(text + "\n# edited\n", encoding="utf-8")
        assert run_snapshot(IS_FRESH, root).stdout.split() == ["False"], f"{source} changed"
        source.write_text(text, encoding="utf-8")
