"""The built site in a real browser: Debian's Chromium driven by Playwright.

The site is built from the fixture results into a temporary project (render → mkdocs build
--strict), served over HTTP on 127.0.0.1 under the path of `site_url` (as GitHub Pages serves
it), and opened in both languages. Any request to another host fails the test: the site must
load nothing from elsewhere (no web fonts, no CDN). Screenshots of the home and explainer
pages go to test-artifacts/screenshots/ for a person to look at.

Needs /usr/bin/chromium (Debian's `chromium` package) and the `playwright` pip package (the
`test` extra); Playwright's own browser download is never used. Without them the tests are
skipped, with the reason.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from urllib.parse import urljoin

import pytest
import yaml

# The browser, site and session fixtures come from browser_harness (a plugin of conftest).
from browser_harness import (
    SCREENSHOTS,
    SEARCH_WORDS,
    Session,
    Site,
    browsing,
    open_page,
    page_lang,
    settled,
)

pytestmark = pytest.mark.browser


# ── the checks ─────────────────────────────────────────────────────────────────────────────

#: For each <img> and top-level inline <svg> in the page's content: make it displayable
#: (open its <details>, select its content tab), then measure it.
_MEASURE_FIGURES = """
async () => {
  const reveal = (el) => {
    for (let node = el.parentElement; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
      if (node.classList.contains("tabbed-block")) {
        const blocks = Array.from(node.parentElement.children);
        const set = node.closest(".tabbed-set");
        const inputs = Array.from(set.children).filter(c => c.tagName === "INPUT");
        const input = inputs[blocks.indexOf(node)];
        if (input) input.checked = true;
      }
    }
  };
  const found = [];
  const content = document.querySelector(".md-content") || document.body;
  for (const img of content.querySelectorAll("img")) {
    reveal(img);
    img.loading = "eager";
    try { await img.decode(); } catch (e) {}
    const box = img.getBoundingClientRect();
    found.push({kind: "img", name: img.getAttribute("src"), natural: img.naturalWidth,
                width: box.width, height: box.height});
  }
  for (const svg of content.querySelectorAll("svg")) {
    if (svg.parentElement.closest("svg")) continue;
    reveal(svg);
    const box = svg.getBoundingClientRect();
    const title = svg.querySelector("title");
    found.push({kind: "svg", name: title ? title.textContent : svg.outerHTML.slice(0, 80),
                natural: 1, width: box.width, height: box.height});
  }
  return found;
}
"""


@dataclass
class LaptopWalk:
    """What one visit of every page at a laptop's width found, for the tests that each
    asserted on their own walk: the page checks below and the navigation checks at 1280 px."""
    figures_measured: int = 0
    page_problems: list[str] = field(default_factory=list)
    nav_problems: list[str] = field(default_factory=list)
    session_problems: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def laptop_walk(site: Site, browser) -> LaptopWalk:
    """Each page loaded once in a fresh session at the laptop's width (the widest of
    NAV_WIDTHS), its late requests settled."""
    walk = LaptopWalk()
    width = max(NAV_WIDTHS)
    expected = _top_level_count(site)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with browsing(browser) as session:
        session.page.set_viewport_size({"width": width, "height": NAV_WIDTHS[width]})
        for page in site.pages:
            open_page(session, site, page)
            # The navigation first, before the figures' details and tabs are opened.
            walk.nav_problems += _nav_problems(session, page, width, expected)
            figures = session.page.evaluate(_MEASURE_FIGURES)
            walk.figures_measured += len(figures)
            bad = [f for f in figures
                   if not (f["natural"] > 0 and f["width"] > 0 and f["height"] > 0)]
            if bad:
                walk.page_problems.append(f"/{page}: figures with no size: {bad}")
            # Formulas (pymdownx.arithmatex) are typeset by the site's own KaTeX.
            unrendered = session.page.locator(".arithmatex:not(:has(.katex))").count()
            if unrendered:
                walk.page_problems.append(
                    f"/{page}: {unrendered} formula(s) not rendered by KaTeX")
            lang = session.page.locator("html").get_attribute("lang")
            if lang != page_lang(page):
                walk.page_problems.append(f"/{page}: lang={lang!r}, not {page_lang(page)!r}")
        walk.session_problems = session.problems()
    return walk


def test_every_page_loads_cleanly_in_both_languages(site: Site, laptop_walk: LaptopWalk) -> None:
    assert "" in site.pages and "en/" in site.pages, site.pages
    assert {page_lang(p) for p in site.pages} == {"zh", "en"}
    assert not laptop_walk.page_problems, "\n".join(laptop_walk.page_problems)
    assert laptop_walk.figures_measured > 0, \
        "no figure found on any page: the check measured nothing"
    assert not laptop_walk.session_problems, "\n".join(laptop_walk.session_problems)


def test_no_built_file_refers_to_another_host(site: Site) -> None:
    """What the browser could load: scripts, styles, images, fonts, frames, preconnects."""
    loads = re.compile(
        r"""<(?:script|img|iframe|source|video|audio)\b[^>]*\bsrc=["']?(https?:)?//"""
        r"""|<link\b(?=[^>]*\brel=["']?(?:stylesheet|preconnect|preload|dns-prefetch|icon"""
        r"""|modulepreload|manifest))[^>]*\bhref=["']?(https?:)?//"""
        r"""|url\(\s*["']?(https?:)?//|@import\s+["']?(https?:)?//""", re.IGNORECASE)
    offenders = []
    for path in sorted(site.root.rglob("*")):
        if path.suffix in (".html", ".css") and path.is_file():
            for match in loads.finditer(path.read_text(encoding="utf-8", errors="replace")):
                offenders.append(f"{path.relative_to(site.root)}: {match.group(0)[:120]}")
    assert not offenders, "\n".join(offenders)


def test_language_switcher_keeps_the_page(site: Site, session: Session) -> None:
    pairs = [(p, "en/" + p) for p in site.pages if not p.startswith("en/")
             and "en/" + p in site.pages]
    assert len(pairs) >= 2, site.pages
    for zh, en in pairs:
        # There and back: the page the switcher led to is where it is tried the other way.
        open_page(session, site, zh, settle=False)
        for there, lang in ((en, "en"), (zh, "zh")):
            session.page.hover(".md-header__option .md-select")
            session.page.locator(f'a.md-select__link[hreflang="{lang}"]').click()
            session.page.wait_for_url(site.url(there), wait_until="load")
    # Leaving each page at once cuts its late requests (search index, icons) short; every
    # page's own requests are checked in full by the first test.
    session.assert_clean(aborts_ok=True)


def test_palette_toggle_switches_light_and_dark(site: Site, session: Session) -> None:
    for page in ("", "en/"):
        open_page(session, site, page)
        body = session.page.locator("body")
        seen = [body.get_attribute("data-md-color-scheme")]
        for _ in range(3):  # system → light → dark → system
            session.page.locator('form[data-md-component="palette"] label:visible').click()
            seen.append(body.get_attribute("data-md-color-scheme"))
        assert {"default", "slate"} <= set(seen), f"/{page}: schemes seen {seen}"
        assert any(a != b for a, b in itertools.pairwise(seen)), f"/{page}: scheme never changed"
    session.assert_clean()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_search_finds_a_word(site: Site, session: Session, lang: str) -> None:
    word, home = SEARCH_WORDS[lang], "" if lang == "zh" else "en/"
    open_page(session, site, home)
    box = session.page.locator(".md-search__input")
    results = session.page.locator(".md-search-result__item")
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    # Material reads the box on keyup (and again when its search worker is ready), not on
    # input events: fill the box, then press a key.
    box.click()
    box.fill(word)
    box.press("End")
    try:
        results.first.wait_for(state="visible")
    except PlaywrightTimeout:
        pass  # reported below, with what the search said
    count = results.count()
    assert count > 0, f"search for {word!r} on /{home} found nothing: " \
        f"{session.page.locator('.md-search-result__meta').inner_text()!r}"
    links = [urljoin(session.page.url, results.nth(i).locator("a").first.get_attribute("href"))
             for i in range(count)]
    in_lang = [url for url in links if page_lang(url.removeprefix(site.base)) == lang]
    assert in_lang, f"search for {word!r} found no {lang} page: {links}"
    session.assert_clean()


#: Every image of the page loaded now, not when scrolled to.
_LOAD_IMAGES = """
async () => {
  for (const img of document.querySelectorAll("img")) {
    img.loading = "eager";
    try { await img.decode(); } catch (e) {}
  }
}
"""


def test_screenshots_of_home_and_explainer(site: Site, session: Session) -> None:
    """Full-page screenshots for a person to look at (test-artifacts/screenshots/)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shots = [("", "home-zh"), ("en/", "home-en")]
    shots += [(p, f"explainer-{page_lang(p)}") for p in ("explainer/", "en/explainer/")
              if p in site.pages]
    for page, name in shots:
        open_page(session, site, page)
        # Charts load lazily, as the reader scrolls: a full-page shot would catch them blank.
        session.page.evaluate(_LOAD_IMAGES)
        path = SCREENSHOTS / f"{name}.png"
        session.page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 10_000, f"{path} is nearly empty"
    # The home page in dark mode: the figures must read on a dark background too.
    open_page(session, site, "")
    session.page.emulate_media(color_scheme="dark")
    session.page.reload(wait_until="load")
    settled(session)
    assert session.page.locator("body").get_attribute("data-md-color-scheme") == "slate"
    session.page.evaluate(_LOAD_IMAGES)
    session.page.screenshot(path=str(SCREENSHOTS / "home-zh-dark.png"), full_page=True)
    if "explainer/" in site.pages:  # its charts are images, on a light card in dark mode
        open_page(session, site, "explainer/")
        session.page.evaluate(_LOAD_IMAGES)
        session.page.screenshot(path=str(SCREENSHOTS / "explainer-zh-dark.png"), full_page=True)
    session.assert_clean()


# ── navigation at a laptop's and a phone's width ────────────────────────────────────────────

#: Reader widths: a laptop (Material's tab bar and sidebars show from 1220 px) and a phone.
NAV_WIDTHS = {1280: 900, 390: 844}

#: The site's top-level entries where a reader finds them: the tab bar when Material shows
#: one, else the primary sidebar (on a phone, the drawer); each with its box on the screen.
_TOP_LEVEL_ENTRIES = """
() => {
  const tabs = document.querySelector(".md-tabs");
  const shown = tabs && !tabs.hidden && tabs.getBoundingClientRect().height > 0;
  const items = shown ? document.querySelectorAll(".md-tabs__item")
    : document.querySelectorAll(".md-nav--primary > .md-nav__list > .md-nav__item");
  return Array.from(items).map(li => {
    const box = li.getBoundingClientRect();
    const style = getComputedStyle(li);
    return {text: li.innerText.trim().split("\\n")[0], left: box.left, right: box.right,
            width: box.width, height: box.height,
            shown: style.display !== "none" && style.visibility !== "hidden"};
  });
}
"""
_OVERFLOW = "() => document.documentElement.scrollWidth - window.innerWidth"
_DRAWER_OPEN = """() => { const box = document.querySelector(".md-nav--primary").getBoundingClientRect();
                         return box.width > 0 && box.left >= 0 && box.right <= innerWidth; }"""


def _top_level_count(site: Site) -> int:
    """The number of top-level entries in the nav the site was built with."""
    nav = site.root.parent / "docs" / ".nav.yml"  # written by render, inherited by mkdocs.yml
    return len(yaml.safe_load(nav.read_text(encoding="utf-8"))["nav"])


def _entries_problems(session: Session, page: str, width: int, expected: int) -> list[str]:
    entries = session.page.evaluate(_TOP_LEVEL_ENTRIES)
    problems = [] if len(entries) == expected else \
        [f"{len(entries)} top-level entries, the nav has {expected}"]
    problems += [f"{e['text']!r} is hidden or cut off: {e}" for e in entries
                 if not (e["shown"] and e["width"] > 0 and e["height"] > 0
                         and e["left"] >= 0 and e["right"] <= width)]
    return [f"/{page} at {width} px: {p}" for p in problems]


def _nav_problems(session: Session, page: str, width: int, expected: int) -> list[str]:
    """The loaded page's overflow and top-level entries at `width` (on a phone, with the
    drawer opened); each home page's screenshots go to test-artifacts/screenshots/."""
    problems = []
    extra = session.page.evaluate(_OVERFLOW)
    if extra > 0:
        problems.append(f"/{page} at {width} px: {extra} px wider than the window")
    name = f"nav-{page_lang(page)}-{width}"
    if page in ("", "en/"):
        session.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))
    drawer = session.page.locator('label.md-header__button[for="__drawer"]')
    if drawer.is_visible():  # a narrow window: the nav is in the drawer
        drawer.click()
        session.page.wait_for_function(_DRAWER_OPEN)
        if page in ("", "en/"):
            session.page.screenshot(path=str(SCREENSHOTS / f"{name}-drawer.png"))
    return problems + _entries_problems(session, page, width, expected)


def test_navigation_fits_laptop_and_phone(site: Site, session: Session,
                                          laptop_walk: LaptopWalk) -> None:
    """At 1280 and 390 px, in both languages: no page is wider than the window, and every
    top-level nav entry is on the screen (on a phone, once the drawer is open). Screenshots
    of each home page go to test-artifacts/screenshots/ for a person to look at. The laptop's
    width was checked on the walk of `laptop_walk`; the phone's is walked here."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    expected = _top_level_count(site)
    assert expected >= 2, "the nav has fewer than two entries: the check would say little"
    problems = list(laptop_walk.nav_problems)
    width = min(NAV_WIDTHS)
    session.page.set_viewport_size({"width": width, "height": NAV_WIDTHS[width]})
    for page in site.pages:
        open_page(session, site, page, settle=False)
        problems += _nav_problems(session, page, width, expected)
    assert not problems, "\n".join(problems)
    session.assert_clean(aborts_ok=True)
