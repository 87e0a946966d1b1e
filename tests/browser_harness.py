"""What the browser tests run on: the site built from the fixture results and served on
127.0.0.1 under the path of `site_url`, Debian's Chromium driven by Playwright, and a session
that records console errors and failed or foreign requests (test_browser.py says why)."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import http.server
import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from conftest import FIXTURES, REPO_ROOT, make_project, run_cli

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


def shared_site(tmp_path_factory: pytest.TempPathFactory, name: str,
                results: Callable[[Path], Path]) -> Path:
    """A project whose results (`results(root)` puts them in place and returns their folder)
    are rendered and built as `render` and `site` do, once per test session: the workers of
    `pytest -n` share it through a folder of the session's and a lock, so that the browser
    and accessibility tests do not each build the same site."""
    session = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        session = session.parent  # the workers' folders are siblings in the session's
    folder = session / f"shared-site-{name}"
    folder.mkdir(exist_ok=True)
    root, done = folder / "project", folder / "built"
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(root, ignore_errors=True)
            make_project(root)
            found = results(root)
            for args in (["render", "--results", found, "--docs", root / "docs"],
                         ["site", "--site", root / "site"]):
                proc = run_cli(args, root)
                assert proc.returncode == 0, \
                    f"python -m generator {args[0]} failed:\n{proc.stderr}"
            done.touch()
    return root


@pytest.fixture(scope="module")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture results rendered and built into a temporary project, as `site` does."""
    return shared_site(tmp_path_factory, "fixture-results", lambda root: FIXTURE_RESULTS)


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
    #: Requests the page (or a worker of it) has made that have neither finished nor failed.
    in_flight: set = field(default_factory=set)
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
    """A fresh browser context (see `browsing`) for each test."""
    with browsing(browser) as state:
        yield state


@contextlib.contextmanager
def browsing(browser):
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
    context.add_init_script(_WORKERS_ANSWERED)
    page.on("request", lambda request: state.in_flight.add(request))
    page.on("requestfinished", lambda request: state.in_flight.discard(request))
    page.on("requestfailed", lambda request: state.in_flight.discard(request))
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


#: Counts the page's web workers and those that have answered it (posted their first message,
#: or failed). Material's search worker answers once it has fetched its language scripts and
#: built the index: the last of a page's late requests, each made after the one before.
_WORKERS_ANSWERED = """(() => {
  const Native = window.Worker;
  if (!Native) return;
  window.__workersStarted = 0;
  window.__workersAnswered = 0;
  window.Worker = class extends Native {
    constructor(...args) {
      super(...args);
      window.__workersStarted += 1;
      let answered = false;
      const answer = () => { if (!answered) { answered = true; window.__workersAnswered += 1; } };
      this.addEventListener("message", answer);
      this.addEventListener("error", answer);
    }
  };
})();"""


def open_page(session: Session, site: Site, page: str, *, settle: bool = True) -> None:
    """Load a page; with `settle`, also wait until its late requests (the search worker's
    index and scripts, the fonts) are done, so that a failure among them is recorded."""
    response = session.page.goto(site.url(page), wait_until="load")
    assert response is not None and response.ok, f"{site.url(page)}: {response and response.status}"
    if settle:
        settled(session)


def settled(session: Session) -> None:
    """Wait for the loaded page's late requests by what they are, not by a quiet spell
    (Playwright's "networkidle" waits 500 ms with nothing in flight, on every page): every
    worker has answered, the fonts are in, and no request is left in flight."""
    page = session.page
    page.wait_for_function("() => (window.__workersAnswered || 0) >= (window.__workersStarted || 0)")
    page.evaluate("document.fonts.ready.then(() => true)")
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while session.in_flight:
        assert time.monotonic() < deadline, \
            f"still in flight: {sorted(r.url for r in session.in_flight)}"
        page.wait_for_timeout(10)  # the events that empty the set arrive while Playwright waits


def page_lang(page: str) -> str:
    return "en" if page.startswith("en/") else "zh"
