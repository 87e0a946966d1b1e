"""Markdown injection on the published site, in a browser: a site built from results whose
model names (and notes, phases and module names) carry each form of conftest.INJECTIONS, and
every page that shows them opened in Chromium. No dialog opens, no element of the page has an
event handler attribute, a script or a `javascript:`/`data:` link that came from the data, and
each name is shown as text (generator/site/escaping.py; the unit tests: unit/test_safety.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from browser_harness import Site, open_page
from conftest import INJECTIONS, make_project, run_cli
from made_results import hand_made_result

#: Every element's attributes and the scripts' text, as the browser holds them after load:
#: handlers and links the data would have added show here, wherever Markdown put them.
FIND_INJECTED = """() => {
  const found = [];
  for (const el of document.querySelectorAll("*")) {
    for (const attr of el.attributes) {
      const name = attr.name.toLowerCase(), value = attr.value.trim().toLowerCase();
      if (name.startsWith("on")) found.push(`${el.tagName} ${name}=${attr.value}`);
      if (["href", "src", "action", "formaction", "data"].includes(name)
          && (value.startsWith("javascript:") || value.startsWith("data:text")))
        found.push(`${el.tagName} ${name}=${attr.value}`);
    }
  }
  for (const script of document.scripts)
    if (script.text.includes("alert(")) found.push(`script: ${script.text.slice(0, 80)}`);
  return found;
}"""


def name_of(form: str) -> str:
    """The model name that carries a form: the form itself, but for a form that needs a line
    break (a reference-style link), which no name may hold (load refuses control characters
    in names: tests/unit/test_bad_results.py); that form rides in the other texts."""
    text = INJECTIONS[form]
    return f"plain-{form}" if any(ord(c) < 32 for c in text) else text


def injected_result(form: str) -> dict:
    """A complete result whose model name is the form, and whose other texts carry it too."""
    text = INJECTIONS[form]
    data = hand_made_result(model=name_of(form))
    data["module_activation_bytes"] = {text: 2**20, "layers.0": 2**20}
    data["phases"] = [{"name": "forward", "tick": 0}, {"name": text, "tick": 1}]
    data["notes"] = [text]
    return data


@pytest.fixture(scope="module")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Overrides the harness's: the hand-made results alone, rendered and built."""
    root = make_project(tmp_path_factory.mktemp("injection-site") / "project")
    for form in INJECTIONS:
        data = injected_result(form)
        path = root / "docs" / "data" / "estimate" / f"{data['key']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data), encoding="utf-8")
    for args in (["render", "--docs", "docs"], ["site", "--site", "site"]):
        proc = run_cli(args, root)
        assert proc.returncode == 0, f"python -m generator {args[0]} failed:\n{proc.stderr}"
    return root


def _pages_with_data(site: Site) -> list[str]:
    """The pages whose HTML holds text from the results (every form calls `alert(`)."""
    return [page for page in site.pages
            if "alert(" in (site.root / page / "index.html").read_text(encoding="utf-8")]


def test_no_injection_runs_or_lands_in_the_page(site: Site, session) -> None:
    pages = _pages_with_data(site)
    # each form's report, in both languages, and the reports' index
    assert len(pages) >= 2 * len(INJECTIONS), site.pages
    dialogs: list[str] = []

    def dismiss(dialog) -> None:
        dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    session.page.on("dialog", dismiss)
    for page in pages:
        open_page(session, site, page, settle=False)
        session.page.keyboard.press("Tab")  # a handler on focus would run now
        found = session.page.evaluate(FIND_INJECTED)
        assert not found, f"{page}: {found}"
    assert not dialogs, dialogs


@pytest.mark.parametrize("form", sorted(INJECTIONS))
def test_each_name_is_shown_as_text_on_its_report(site: Site, session, form: str) -> None:
    """The report's heading shows the name, character for character."""
    from generator.site.pages.reports import report_slug

    open_page(session, site, f"en/reports/{report_slug(name_of(form))}/", settle=False)
    heading = session.page.locator("article h1").first.inner_text()
    assert name_of(form) in heading, heading
