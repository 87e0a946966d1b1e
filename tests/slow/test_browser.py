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

import functools
import http.server
import re
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest

from conftest import FIXTURES, REPO_ROOT, make_project, run_cli

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
    # A second guard behind the route handler below: no host name resolves but 127.0.0.1.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
FIXTURE_RESULTS = FIXTURES / "results"
SCREENSHOTS = REPO_ROOT / "test-artifacts" / "screenshots"
LOCAL_HOST = "127.0.0.1"
#: A word each language's pages must contain, and that search must find.
SEARCH_WORDS = {"zh": "激活值", "en": "activations"}
#: Every browser wait is for an event (a load, an element); this ceiling only stops a hang.
TIMEOUT_MS = 180_000


def _sync_playwright():
    """Playwright's sync API, or a skip that says what is missing."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: install Debian's chromium "
                    "(apt-get install chromium fonts-noto-cjk) to run the browser tests")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed: "
                    "pip install -e '.[test]' to run the browser tests")
    return sync_playwright


# ── the site, built and served ─────────────────────────────────────────────────────────────


@dataclass
class Site:
    root: Path          # the built site folder
    base: str           # http://127.0.0.1:PORT/<site_url path>
    pages: list[str]    # every page, as a path below base ("", "claims/", "en/", …)

    def url(self, page: str) -> str:
        return self.base + page


def _url_path(site_url: str) -> str:
    path = urlsplit(site_url).path or "/"
    return path if path.endswith("/") else path + "/"


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        """A browser that leaves a page mid-download closes its connection: not an error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the site folder under `prefix` only, like a project page on GitHub Pages."""

    prefix = "/"

    def translate_path(self, path: str) -> str:
        path = unquote(path.split("?", 1)[0].split("#", 1)[0])
        if not path.startswith(self.prefix):
            return str(Path(self.directory) / "__outside_the_site__")
        return super().translate_path("/" + path[len(self.prefix):])

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base's name
        pass


@pytest.fixture(scope="module")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture results rendered and built into a temporary project, as `site` does."""
    root = make_project(tmp_path_factory.mktemp("browser-site") / "project")
    for args in (["render", "--results", FIXTURE_RESULTS, "--docs", root / "docs"],
                 ["site", "--site", root / "site"]):
        proc = run_cli(args, root)
        assert proc.returncode == 0, f"python -m generator {args[0]} failed:\n{proc.stderr}"
    return root


@pytest.fixture(scope="module")
def site(built_site: Path):
    config = (built_site / "mkdocs.yml").read_text(encoding="utf-8")
    site_url = re.search(r"^site_url:\s*['\"]?([^'\"\s#]+)", config, re.MULTILINE)
    assert site_url, "mkdocs.yml has no site_url"
    prefix = _url_path(site_url.group(1))
    folder = built_site / "site"
    handler = functools.partial(type("Handler", (_Handler,), {"prefix": prefix}),
                                directory=str(folder))
    server = _Server((LOCAL_HOST, 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    pages = sorted(p.parent.relative_to(folder).as_posix() + "/"
                   for p in folder.rglob("index.html"))
    pages = ["" if p == "./" else p for p in pages]
    try:
        yield Site(folder, f"http://{LOCAL_HOST}:{server.server_port}{prefix}", pages)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="module")
def browser():
    sync_playwright = _sync_playwright()
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


# ── a browsing session that records everything that went wrong ─────────────────────────────


@dataclass
class Session:
    page: object
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    aborted_requests: list[str] = field(default_factory=list)
    foreign_requests: list[str] = field(default_factory=list)

    def problems(self, *, aborts_ok: bool = False) -> list[str]:
        return ([f"request to another host: {url}" for url in self.foreign_requests]
                + [f"failed request: {what}" for what in self.failed_requests]
                + ([] if aborts_ok else
                   [f"aborted request: {what}" for what in self.aborted_requests])
                + [f"console error: {text}" for text in self.console_errors])

    def assert_clean(self, *, aborts_ok: bool = False) -> None:
        """`aborts_ok`: requests cut short by leaving the page (net::ERR_ABORTED) are fine."""
        problems = self.problems(aborts_ok=aborts_ok)
        assert not problems, "\n".join(problems)


@pytest.fixture
def session(browser):
    """A fresh browser context whose every request to a host but 127.0.0.1 is refused and
    recorded, as are failed requests, HTTP errors, console errors and uncaught exceptions."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN",
                                  color_scheme="light")
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    state = Session(page)

    def route(route) -> None:
        url = route.request.url
        if urlsplit(url).scheme in ("http", "https", "ws", "wss") \
                and urlsplit(url).hostname != LOCAL_HOST:
            state.foreign_requests.append(url)
            route.abort("blockedbyclient")
        else:
            route.continue_()

    context.route("**/*", route)
    page.on("console", lambda message: message.type == "error"
            and state.console_errors.append(f"{message.text} ({message.location.get('url')})"))
    page.on("pageerror", lambda error: state.console_errors.append(f"uncaught: {error}"))
    page.on("requestfailed", lambda request: (
        state.aborted_requests if request.failure == "net::ERR_ABORTED"
        and urlsplit(request.url).hostname == LOCAL_HOST else state.failed_requests
    ).append(f"{request.url}: {request.failure}"))
    page.on("response", lambda response: response.status >= 400
            and state.failed_requests.append(f"{response.url}: HTTP {response.status}"))
    try:
        yield state
    finally:
        context.close()


def _open(session: Session, site: Site, page: str, *, settle: bool = True) -> None:
    """Load a page; with `settle`, also wait until its late requests (the search index, the
    fonts) are done, so that a failure among them is recorded."""
    response = session.page.goto(site.url(page), wait_until="load")
    assert response is not None and response.ok, f"{site.url(page)}: {response and response.status}"
    if settle:
        session.page.wait_for_load_state("networkidle")


def _lang(page: str) -> str:
    return "en" if page.startswith("en/") else "zh"


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


def test_every_page_loads_cleanly_in_both_languages(site: Site, session: Session) -> None:
    assert "" in site.pages and "en/" in site.pages, site.pages
    assert {_lang(p) for p in site.pages} == {"zh", "en"}
    measured = 0
    for page in site.pages:
        _open(session, site, page)
        figures = session.page.evaluate(_MEASURE_FIGURES)
        measured += len(figures)
        bad = [f for f in figures if not (f["natural"] > 0 and f["width"] > 0 and f["height"] > 0)]
        assert not bad, f"/{page}: figures with no size: {bad}"
        # Formulas (pymdownx.arithmatex) are typeset by the site's own KaTeX.
        unrendered = session.page.locator(".arithmatex:not(:has(.katex))").count()
        assert unrendered == 0, f"/{page}: {unrendered} formula(s) not rendered by KaTeX"
        assert session.page.locator("html").get_attribute("lang") == _lang(page)
    assert measured > 0, "no figure found on any page: the check measured nothing"
    session.assert_clean()


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
        for here, there, lang in ((zh, en, "en"), (en, zh, "zh")):
            _open(session, site, here, settle=False)
            session.page.hover(".md-header__option .md-select")
            session.page.locator(f'a.md-select__link[hreflang="{lang}"]').click()
            session.page.wait_for_url(site.url(there), wait_until="load")
    # Leaving each page at once cuts its late requests (search index, icons) short; every
    # page's own requests are checked in full by the first test.
    session.assert_clean(aborts_ok=True)


def test_palette_toggle_switches_light_and_dark(site: Site, session: Session) -> None:
    for page in ("", "en/"):
        _open(session, site, page)
        body = session.page.locator("body")
        seen = [body.get_attribute("data-md-color-scheme")]
        for _ in range(3):  # system → light → dark → system
            session.page.locator('form[data-md-component="palette"] label:visible').click()
            seen.append(body.get_attribute("data-md-color-scheme"))
        assert {"default", "slate"} <= set(seen), f"/{page}: schemes seen {seen}"
        assert any(a != b for a, b in zip(seen, seen[1:])), f"/{page}: scheme never changed"
    session.assert_clean()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_search_finds_a_word(site: Site, session: Session, lang: str) -> None:
    word, home = SEARCH_WORDS[lang], "" if lang == "zh" else "en/"
    _open(session, site, home)
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
    in_lang = [url for url in links if _lang(url.removeprefix(site.base)) == lang]
    assert in_lang, f"search for {word!r} found no {lang} page: {links}"
    session.assert_clean()


def test_screenshots_of_home_and_explainer(site: Site, session: Session) -> None:
    """Full-page screenshots for a person to look at (test-artifacts/screenshots/)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shots = [("", "home-zh"), ("en/", "home-en")]
    shots += [(p, f"explainer-{_lang(p)}") for p in ("explainer/", "en/explainer/")
              if p in site.pages]
    for page, name in shots:
        _open(session, site, page)
        path = SCREENSHOTS / f"{name}.png"
        session.page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 10_000, f"{path} is nearly empty"
    # The home page in dark mode: the figures must read on a dark background too.
    _open(session, site, "")
    session.page.emulate_media(color_scheme="dark")
    session.page.reload(wait_until="load")
    session.page.wait_for_load_state("networkidle")
    assert session.page.locator("body").get_attribute("data-md-color-scheme") == "slate"
    session.page.screenshot(path=str(SCREENSHOTS / "home-zh-dark.png"), full_page=True)
    session.assert_clean()
