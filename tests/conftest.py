"""What the tests share: the slow folder's marker, the command line (in this process or in a
subprocess), a project folder, hand-made results, a page rendered from its context, and checks
of the SVGs every chart and diagram must pass.

tests/unit/ takes seconds (`python -m pytest -m "not slow"` runs it alone); tests/slow/, whose
every test is marked `slow` here, starts subprocesses, runs real training steps, renders whole
sites or opens a browser. `python -m pytest` runs both.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import shutil
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from generator.results.shapes import CATEGORIES

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES = REPO_ROOT / "tests" / "fixtures"
SLOW_DIR = REPO_ROOT / "tests" / "slow"
PAST = 1_000_000_000  # an mtime (2001) that no write during a test can produce
SVG = "{http://www.w3.org/2000/svg}"
LANGS = ("zh", "en")
#: Markup where a name should be: results and model names come from other people's files.
HOSTILE = '<script>alert("x")</script>\''


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/slow/ is slow: `-m "not slow"` leaves the folder out."""
    for item in items:
        if SLOW_DIR in item.path.parents:
            item.add_marker(pytest.mark.slow)


# --------------------------------------------------------------------------- the command line


@dataclass
class Run:
    """What a command left: its exit status and everything it printed."""

    returncode: int
    stdout: str
    stderr: str


def cli_env() -> dict[str, str]:
    """The environment of a CLI subprocess: `generator` importable from any cwd."""
    env = dict(os.environ)
    paths = [str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def run_cli(args: list[Any], cwd: Path, *, timeout: float = 600) -> subprocess.CompletedProcess:
    """`python -m generator ARGS` in `cwd`; stdout and stderr captured (stderr is a pipe,
    never a terminal, so progress is one line per experiment)."""
    return subprocess.run(
        [sys.executable, "-m", "generator", *map(str, args)],
        cwd=cwd, env=cli_env(), capture_output=True, text=True, timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> Callable[[list[Any], Path], Run]:
    """`generator.cli.main(ARGS)` in this process, run from `cwd` as `python -m generator`
    would be: a usage error's SystemExit becomes the exit status, and SIGTERM's handler
    (main installs its own) is put back."""
    from generator.cli import main

    def run(args: list[Any], cwd: Path) -> Run:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        handler = signal.getsignal(signal.SIGTERM)
        try:
            code = main([str(a) for a in args])
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
        finally:
            signal.signal(signal.SIGTERM, handler)
        out, err = capsys.readouterr()
        return Run(code, out, err)

    return run


def tree_state(root: Path) -> dict[str, tuple] | None:
    """Everything under `root`: each path with its kind, and for files size, mtime and bytes.
    None when `root` does not exist."""
    root = Path(root)
    if not root.exists():
        return None
    if root.is_file():
        stat = root.stat()
        return {".": ("file", stat.st_size, stat.st_mtime_ns, root.read_bytes())}
    state: dict[str, tuple] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_dir():
            state[rel] = ("dir",)
        else:
            stat = path.stat()
            state[rel] = ("file", stat.st_size, stat.st_mtime_ns, path.read_bytes())
    return state


def file_digests(root: Path) -> dict[str, str]:
    """sha256 of every file under `root`, by relative path: output compared byte for byte."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(root).rglob("*")) if p.is_file()}


def assert_refused(run: Callable[[list[Any], Path], Any], root: Path, args: list[Any],
                   *needles: str, watch: tuple[str, ...] = ()) -> str:
    """A user mistake: exit status 2, exactly one line on stderr holding every needle (no
    traceback), and results/, docs/, site/ and the `watch` paths under `root` as they were.
    `run` is the `cli` fixture or `run_cli`. Returns the line."""
    paths = [root / name for name in ("results", "docs", "site", *watch)]
    before = [tree_state(p) for p in paths]
    proc = run(args, root)
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, f"exit {proc.returncode}, stderr:\n{proc.stderr}"
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n{proc.stderr}"
    assert "Traceback" not in lines[0]
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    for path, state in zip(paths, before):
        assert tree_state(path) == state, f"{path.relative_to(root)} changed"
    return lines[0]


# --------------------------------------------------------------------------- project folders


def theme_dir() -> str:
    """The theme overrides folder mkdocs.yml names (theme.custom_dir), relative to the repo."""
    found = re.search(r"^\s+custom_dir:\s*['\"]?([^'\"\s#]+)",
                      (REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.MULTILINE)
    assert found, "mkdocs.yml names no theme.custom_dir"
    return found.group(1)


def make_project(root: Path) -> Path:
    """A project folder: the repository's mkdocs.yml, its hand-written assets and the theme
    overrides that mkdocs.yml names; no results, no pages."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO_ROOT / "mkdocs.yml", root / "mkdocs.yml")
    shutil.copytree(REPO_ROOT / "docs" / "assets", root / "docs" / "assets")
    shutil.copytree(REPO_ROOT / theme_dir(), root / theme_dir(), dirs_exist_ok=True)
    return root


def snapshot_code(root: Path) -> None:
    """Copy generator/ and templates/ into `root`: `python -m generator` run there imports
    this copy (the current folder comes first on sys.path), so edits made to the repository
    while a long test runs cannot reach it."""
    for name in ("generator", "templates"):
        shutil.copytree(REPO_ROOT / name, root / name, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "project")


@pytest.fixture
def seeded(project: Path) -> Path:
    """A project whose results/ and docs/ hold what bad input must leave alone (old mtimes):
    one stored result, a step that did not fit, and one page."""
    import json

    write_old(project / "results" / "estimate" / "tiny-b2-s16-fp32-adamw-estimate.json",
              json.dumps(hand_made_result(error="out_of_memory")))
    write_old(project / "docs" / "index.md", "# an old page\n")
    return project


# --------------------------------------------------------------------------- hand-made results

TINY_EXPERIMENT = {"model": "tiny", "batch_size": 2, "seq_len": 16, "precision": "fp32",
                   "optimizer": "adamw", "backend": "estimate", "device": "cuda"}


def hand_made_result(*, error: str | None = None, **experiment: Any) -> dict[str, Any]:
    """A result file's content, by hand, that results.load accepts: a step of the tiny model
    (fields changed by `experiment`) with small round figures, or, with `error`, a step that
    did not run and has no figures."""
    from generator.experiment import Experiment

    exp = Experiment(**{**TINY_EXPERIMENT, **experiment})
    data: dict[str, Any] = {
        "schema_version": 1, "key": exp.key, "experiment": exp.to_dict(),
        "backend": exp.backend, "environment": {"torch": "0.0-test"},
        "error": error, "error_detail": None,
    }
    if error is None:
        mib = 2**20
        data.update(
            peak_bytes=6 * mib, parameter_count=1000,
            live_at_peak_bytes=dict.fromkeys(CATEGORIES, mib),
            category_max_bytes=dict.fromkeys(CATEGORIES, mib),
            module_activation_bytes={"layers.0": mib},
            timeline={"tick": [0, 1, 2], "end_tick": 3,
                      "bytes": {c: [0, mib, mib // 2] for c in CATEGORIES}},
            phases=[{"name": "forward", "tick": 0}, {"name": "backward", "tick": 1}])
    return data


def write_old(path: Path, content: str | bytes) -> Path:
    """Write a file with an old mtime, so that any later rewrite shows in tree_state."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    os.utime(path, (PAST, PAST))
    return path


# --------------------------------------------------------------------------- user models

#: A user module (`userpkg.mod`): a working factory and each way a factory can be wrong.
USER_MODULE = '''\
import torch
from torch import nn

VOCAB = 50


def build():
    model = nn.Sequential(nn.Embedding(VOCAB, 8), nn.Linear(8, VOCAB))

    def make_batch(batch_size, seq_len, device):
        ids = torch.randint(0, VOCAB, (batch_size, seq_len), device=device)
        return (ids,), ids

    def loss_fn(output, target):
        return nn.functional.cross_entropy(output.reshape(-1, VOCAB), target.reshape(-1))

    return model, make_batch, loss_fn


def raises():
    raise ValueError("factory exploded on purpose")


def wrong_shape():
    return 42


not_callable = 7


def batch_is_42():
    model, _, loss_fn = build()
    return model, (lambda batch_size, seq_len, device: 42), loss_fn


def batch_raises():
    model, _, loss_fn = build()

    def make_batch(batch_size, seq_len, device):
        raise ValueError("make_batch exploded on purpose")

    return model, make_batch, loss_fn
'''
#: The factories of USER_MODULE that are wrong, and what their one-line error must name.
BAD_FACTORIES = {
    "raises": ("userpkg.mod:raises", "ValueError", "factory exploded on purpose"),
    "wrong_shape": ("userpkg.mod:wrong_shape", "(model, make_batch, loss_fn)", "int"),
    "not_callable": ("userpkg.mod:not_callable", "not callable"),
}


@pytest.fixture
def user_package(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., str]]:
    """Write a package `name` with module `mod.py` under a folder; returns the package name.
    Whatever is imported from it is forgotten afterwards, and sys.path is restored, so the
    next test's package of the same name is imported afresh."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    names: list[str] = []

    def write(root: Path, source: str = USER_MODULE, name: str = "userpkg") -> str:
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text("", encoding="utf-8")
        (root / name / "mod.py").write_text(source, encoding="utf-8")
        importlib.invalidate_caches()
        names.append(name)
        return name

    yield write
    for module in [m for m in sys.modules if any(m == n or m.startswith(n + ".") for n in names)]:
        del sys.modules[module]


# --------------------------------------------------------------------------- pages and SVG


def site_inputs(results_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The step results and studies of a results tree as render.render hands them to the
    page modules, each result with the link to its published JSON (`json_path`)."""
    from generator import results

    found = results.load_all_with_paths(results_dir)
    for path, result in found:
        result["json_path"] = f"data/{path.parent.name}/{path.name}"
    return [result for _, result in found], results.load_studies(results_dir)


#: Figures drawn per (page module, language, context), kept with their context: a module's
#: pages share them, as in render.render. A context is not changed once its page is drawn.
_FIGURES: dict[tuple[str, str, int], tuple[Any, dict[str, str]]] = {}


def page_figures(module: ModuleType, ctx: Any, lang: str) -> dict[str, str]:
    """A page module's figures (SVG by name) for a context, drawn once."""
    if ctx is None or not hasattr(module, "figures"):
        return {}
    key = (module.__name__, lang, id(ctx))
    if key not in _FIGURES or _FIGURES[key][0] is not ctx:
        _FIGURES[key] = (ctx, module.figures(ctx, lang))
    return _FIGURES[key][1]


def page_markdown(module: ModuleType, ctx: Any, lang: str, path: str | None = None) -> str:
    """One page of a page module in `lang`, from its context alone: its figures (inline SVG)
    and tables, through its template, as render.render passes them. `path` picks one page of
    a module that writes several (article, reports)."""
    from generator.site.pages import pages_of
    from generator.site.render import render_page

    tables = module.tables(ctx, lang) if ctx is not None and hasattr(module, "tables") else {}
    pages = [p for p in pages_of(module, ctx) if path is None or p.path == path]
    assert len(pages) == 1, [p.path for p in pages_of(module, ctx)]
    name = module.__name__.rsplit(".", 1)[-1]
    text = render_page(pages[0], lang, context=ctx, tables=tables,
                       figures=page_figures(module, ctx, lang), site={name: ctx})
    assert "{{" not in text and "{%" not in text, "template syntax left on the page"
    return text


def prose(page: str) -> str:
    """A page without its inline SVGs, whose coordinates hold every digit sequence."""
    return re.sub(r"<svg.*?</svg>", "", page, flags=re.S)


def svg_texts(svg: str) -> list[str]:
    """Every visible string of an SVG: the text of each <text> element."""
    return ["".join(el.itertext()) for el in ET.fromstring(svg).iter(f"{SVG}text")]


def svg_ids(svg: str) -> list[str]:
    return re.findall(r'\sid="([^"]+)"', svg)


def check_svg(svg: str, svg_id: str) -> ET.Element:
    """What every figure of the site must be: one well-formed <svg role="img"> whose id
    matches `svg_id` (a regular expression; a plain id matches itself), labelled by its
    non-empty <title> and <desc>; every id inside it prefixed with its own id (figures share
    a page) and every reference resolved inside it; its ink the theme's (currentColor), never
    the placeholder colour; no XML prolog or metadata."""
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg" and root.get("role") == "img"
    assert re.fullmatch(svg_id, root.get("id") or ""), (root.get("id"), svg_id)
    svg_id = root.get("id")
    title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
    assert title is not None and "".join(title.itertext()).strip()
    assert desc is not None and "".join(desc.itertext()).strip()
    assert root.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    ids = svg_ids(svg)
    assert len(ids) == len(set(ids)) and all(i.startswith(svg_id) for i in ids), svg_id
    assert set(re.findall(r'(?:url\(#|href="#)([^)"]+)', svg)) <= set(ids)
    assert "currentColor" in svg and "#010203" not in svg.lower()
    assert "<?xml" not in svg and "<metadata" not in svg and "\n\n" not in svg
    return root
