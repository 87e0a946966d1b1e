"""Accessibility of the built site, checked by axe-core in Chromium.

axe-core comes bundled with the `axe-playwright-python` package (the `test` extra); it runs
inside each page of the site built from the fixture results (browser_harness builds and
serves it), in both languages, in the light and the dark scheme. Any violation fails the
test, whatever its rule or impact: low contrast, links told from prose by colour alone, a
dialog, a scrolling region or a navigation landmark a screen-reader or keyboard user cannot
name, reach or tell apart (Material's icon-only section toggles are named by nav-names.js).

The dark scheme is the reader's system preference: the palette's first entry follows
`prefers-color-scheme`, so a browser that prefers dark gets Material's slate scheme, and
the test checks that it did. Closed <details> are opened first, so that their text is
checked too. Text inside the inline SVG figures is beyond axe (it cannot tell what lies
under SVG text and reports it as "incomplete"); the diagrams' colours are chosen for
contrast in both schemes (extra.css, article/diagrams.py).
"""

from __future__ import annotations

import pytest
from browser_harness import Session, Site, open_page

pytestmark = pytest.mark.browser

#: The impacts that fail the test (axe's scale: minor, moderate, serious, critical).
BLOCKING = {"minor", "moderate", "serious", "critical"}
#: Material's data-md-color-scheme for each colour scheme the browser prefers.
SCHEMES = {"light": "default", "dark": "slate"}

_OPEN_DETAILS = "() => document.querySelectorAll('details').forEach(d => { d.open = true; })"
#: A paragraph of light grey text on white (1.6:1): axe must find it, or it checks nothing.
_PLANT_LOW_CONTRAST = """() => {
  const p = document.createElement("p");
  p.id = "planted-low-contrast";
  p.textContent = "planted low-contrast text";
  p.style.cssText = "color: #cccccc; background: #ffffff; font-size: 14px";
  document.querySelector(".md-content").prepend(p);
}"""


def _axe():
    try:
        from axe_playwright_python.sync_playwright import Axe
    except ImportError:
        pytest.skip("the axe-playwright-python package is not installed: "
                    "pip install -e '.[test]' to run the accessibility tests")
    return Axe()


def _blocking(results: dict, page: str, scheme: str) -> list[str]:
    """One line per element of each violation."""
    return [f"/{page} [{scheme}] {v['id']} ({v['impact']}): {', '.join(map(str, n['target']))}"
            f" — {' '.join(n.get('failureSummary', '').split())[:240]}"
            for v in results["violations"] if v["impact"] in BLOCKING for n in v["nodes"]]


def _wait_for_scheme(session: Session, scheme: str) -> None:
    """Material follows a change of the preferred scheme in the page, as at load; wait until
    it has, and its switch (which holds transitions off) is over."""
    session.page.emulate_media(color_scheme=scheme)
    session.page.wait_for_function(
        "s => document.body.getAttribute('data-md-color-scheme') === s"
        " && !document.body.hasAttribute('data-md-color-switching')", arg=SCHEMES[scheme])


def test_no_axe_violation_on_any_page(site: Site, session: Session) -> None:
    """Each page is loaded once and checked in both schemes: loaded in one (every other page
    light, the rest dark, so that both are checked as a browser gets them at load), then
    switched to the other in the page, as a reader's system switch does."""
    axe = _axe()
    assert {p.startswith("en/") for p in site.pages} == {True, False}, site.pages
    found: list[str] = []
    loaded_in: set[str] = set()
    for index, page in enumerate(site.pages):
        first = sorted(SCHEMES)[index % 2]
        session.page.emulate_media(color_scheme=first)
        open_page(session, site, page)
        body = session.page.locator("body")
        assert body.get_attribute("data-md-color-scheme") == SCHEMES[first], \
            f"/{page}: a browser preferring {first} did not get Material's {SCHEMES[first]}"
        loaded_in.add(first)
        session.page.evaluate(_OPEN_DETAILS)
        for scheme in (first, *(s for s in sorted(SCHEMES) if s != first)):
            if scheme != first:
                _wait_for_scheme(session, scheme)
            found += _blocking(axe.run(session.page).response, page, scheme)
    assert loaded_in == set(SCHEMES), f"pages loaded only in {loaded_in}"
    assert not found, f"{len(found)} axe violation(s):\n" + "\n".join(found)


def test_axe_finds_planted_low_contrast(site: Site, session: Session) -> None:
    """The check above can fail: axe, run the same way, reports text made unreadable."""
    axe = _axe()
    open_page(session, site, "")
    session.page.evaluate(_PLANT_LOW_CONTRAST)
    found = _blocking(axe.run(session.page).response, "", "light")
    assert any("color-contrast" in line and "planted-low-contrast" in line for line in found), found
