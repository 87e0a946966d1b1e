"""The calculator widget in Chromium, in both languages: what it shows equals what the
fits' JSON gives through the Python twin of its computations (verdicts.py), and a size
outside the fitted range is said to be so. The site is built from the fixture results plus
the calculator's committed grid results."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from browser_harness import FIXTURE_RESULTS, open_page
from conftest import REPO_ROOT, make_project, run_cli

from generator.site.pages.calculator import grid, verdicts

pytestmark = pytest.mark.browser
OUTSIDE = {"en": "Outside the fitted range", "zh": "超出拟合范围"}
FITS_WORD = {"en": "fits", "zh": "放得下"}


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    """Overrides browser_harness's fixture: the fixture results and the calculator's grid."""
    root = make_project(tmp_path_factory.mktemp("calc-site") / "project")
    results = root / "results"
    shutil.copytree(FIXTURE_RESULTS, results)
    for key in grid.grid_keys():
        shutil.copy(REPO_ROOT / "results" / "estimate" / f"{key}.json", results / "estimate")
    for args in (["render", "--results", results, "--docs", root / "docs"],
                 ["site", "--site", root / "site"]):
        proc = run_cli(args, root)
        assert proc.returncode == 0, f"python -m generator {args[0]} failed:\n{proc.stderr}"
    return root


def _template(data: Path, fit: dict) -> dict | None:
    """The replay template the widget loads: the script's object literal is JSON."""
    if not fit["replay"]:
        return None
    text = (data / "calculator" / f"{fit['replay']}.js").read_text(encoding="utf-8")
    return json.loads(text.split("] = ", 1)[1].rstrip().rstrip(";"))


@pytest.mark.parametrize("page", ["", "en/", "reports/bert-base/", "en/reports/bert-base/"])
def test_widget_matches_python(page, site, session, built_site):
    lang = "en" if page.startswith("en/") else "zh"
    data = json.loads((built_site / "docs" / "data" / "calculator.json").read_text())
    open_page(session, site, page)
    p = session.page
    widget = p.locator(".calc")
    widget.wait_for()
    p.wait_for_selector(".calc[data-ready=true]")
    model = p.locator(".calc select[name=model]").input_value()
    p.select_option(".calc select[name=precision]", "amp-bf16")
    p.select_option(".calc select[name=levers]", "ckpt")
    p.focus(".calc input[name=batch]")  # keyboard: type the size as a reader would
    p.fill(".calc input[name=batch]", "48")
    p.keyboard.press("Tab")
    p.fill(".calc input[name=seq]", "256")
    p.keyboard.press("Tab")
    fit = next(f for f in data["fits"] if f["model"] == model and f["precision"] == "amp-bf16"
               and f["levers"] == "ckpt")
    template = _template(built_site / "docs" / "data", fit)
    assert template is not None, fit["replay_problem"]
    gpu = next(g for g in data["gpus"] if g["name"] == data["start"]["gpu"])
    shown = verdicts.figures(fit, gpu, 48, 256, template)
    assert float(p.get_attribute(".calc-allocated", "data-bytes")) == pytest.approx(
        shown["allocated"], rel=1e-12)
    assert float(p.get_attribute(".calc-reserved", "data-bytes")) == pytest.approx(
        shown["reserved"], rel=1e-12)
    assert p.locator(".calc-outside").count() == 0
    assert {"en": "estimated", "zh": "估算"}[lang] in p.inner_text(".calc-kind")
    rows = p.locator(".calc-cards tbody tr")
    assert rows.count() == len(data["gpus"])
    for i, gpu in enumerate(data["gpus"]):
        row = rows.nth(i)
        assert row.get_attribute("data-gpu") == gpu["name"]
        expected = verdicts.verdict(fit, gpu, 48, 256, template).word
        assert row.locator(".calc-verdict").get_attribute("data-verdict") == expected
        if expected == "yes":
            assert row.locator(".calc-verdict").inner_text() == FITS_WORD[lang]
        assert int(row.locator(".calc-largest").get_attribute("data-batch")) == \
            verdicts.largest_batch(fit, gpu, 256, template)
    p.fill(".calc input[name=batch]", "1")  # 256 tokens: below the fitted range
    p.keyboard.press("Tab")
    assert OUTSIDE[lang] in p.inner_text(".calc-outside")
    session.assert_clean(aborts_ok=True)
