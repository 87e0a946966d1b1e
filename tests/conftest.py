"""What the tests share: the slow folder's marker, the command line (in this process or in a
subprocess), project folders and user model packages. Hand-made results are in
made_results.py, page and SVG checks in page_checks.py.

tests/unit/ takes seconds (`python -m pytest -m "not slow"` runs it alone); tests/slow/, whose
every test is marked `slow` here, starts subprocesses, runs real training steps, renders whole
sites or opens a browser. `python -m pytest` runs both.
"""

from __future__ import annotations

import gc
import hashlib
import importlib
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import warm_python
from made_results import hand_made_result, write_old

#: The browser tests' fixtures (tests/slow/test_browser.py); module-scoped, built only there.
pytest_plugins = ["browser_harness"]

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES = REPO_ROOT / "tests" / "fixtures"
SLOW_DIR = REPO_ROOT / "tests" / "slow"
LANGS = ("zh", "en")
#: Markup where a name should be: results and model names come from other people's files.
HOSTILE = '<script>alert("x")</script>\''
#: Markdown that would run or link where a name should be, each form the pages must show as
#: text (generator/site/escaping.py): attributes, links, images, references, raw HTML.
INJECTIONS = {
    "attr-list": "x {: autofocus tabindex=1 onfocus=alert(7) }",
    "attr-list-inline": "*y*{: onclick=alert(8) }",
    "link": "[click](javascript:alert(5))",
    "image": "![x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "img-onerror": "<img src=x onerror=alert(6)>",
    "autolink": "<javascript:alert(4)>",
    "reference": "[x]\n\n[x]: javascript:alert(3)",
    "entity": "&#60;img src=x onerror=alert(2)&#62; &amp; [a]&#40;javascript:alert(1)&#41;",
    "code-and-math": "`a|b` $x$ \\(y\\) \\[z\\] **b** _i_",
}


def bench_script(name: str) -> ModuleType:
    """generator/bench/<name>.py, the benchmarks' and the GPU session's scripts."""
    return importlib.import_module(f"generator.bench.{name}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/slow/ is slow: `-m "not slow"` leaves the folder out."""
    for item in items:
        if SLOW_DIR in item.path.parents:
            item.add_marker(pytest.mark.slow)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection made (modules, test items: some 400,000 objects) lives as long as the
    session, so the garbage collector stops walking it: every estimate collects garbage
    before its step (training/step.gc_paused), which took 0.18 s a time with it, 0 s
    without."""
    gc.collect()
    gc.freeze()


#: Tests run since the last freeze; what tests keep (caches of loaded results, contexts) is
#: frozen every so many, as collection's objects are, once each test is wholly torn down.
_SINCE_FREEZE = [0]
FREEZE_EVERY = 100


def pytest_runtest_logfinish() -> None:
    _SINCE_FREEZE[0] += 1
    if _SINCE_FREEZE[0] >= FREEZE_EVERY:
        _SINCE_FREEZE[0] = 0
        gc.collect()
        gc.freeze()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With `-m "not slow"` the slow folder is not even imported: its modules import
    transformers, PEFT and bitsandbytes (seconds) only to be deselected."""
    if config.getoption("markexpr", "").strip() == "not slow" and \
            (collection_path == SLOW_DIR or SLOW_DIR in collection_path.parents):
        return True
    return None


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
    """`python -m generator ARGS` in `cwd`, a process of its own started warm
    (warm_python.py); stdout and stderr captured (stderr is never a terminal, so progress is
    one line per experiment)."""
    return warm_python.run("generator", [str(a) for a in args], cwd, cli_env(), module=True,
                           timeout=timeout)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> Callable[[list[Any], Path], Run]:
    """`generator.cli.main(ARGS)` in this process, run from `cwd` as `python -m generator`
    would be: a usage error's SystemExit becomes the exit status, and SIGTERM's handler
    (main installs its own) is put back."""
    from generator.cli.main import main

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
        if path.is_symlink():  # never followed: it may point at /dev/zero
            state[rel] = ("link", os.readlink(path))
        elif path.is_dir():
            state[rel] = ("dir",)
        elif not path.is_file():  # a FIFO would block a read until someone writes to it
            state[rel] = ("special", path.lstat().st_mode)
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
    """A project folder: the repository's mkdocs.yml, its hand-written assets, the marker that
    gives docs/ to render, and the theme overrides that mkdocs.yml names; no results, no
    pages."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO_ROOT / "mkdocs.yml", root / "mkdocs.yml")
    shutil.copytree(REPO_ROOT / "docs" / "assets", root / "docs" / "assets")
    # docs/ is render's, as the repository's is (generator/site/owned.py)
    shutil.copy(REPO_ROOT / "docs" / ".generator-pages", root / "docs" / ".generator-pages")
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

    write_old(project / "docs" / "data" / "estimate" / "tiny-b2-s16-fp32-adamw-estimate.json",
              json.dumps(hand_made_result(error="out_of_memory")))
    write_old(project / "docs" / "index.md", "# an old page\n")
    return project


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


def one_tensor_input():
    """make_batch gives the model's one input as a bare tensor, not a tuple of one."""
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))

    def make_batch(batch_size, seq_len, device):
        return (torch.randn(batch_size, 16, device=device),
                torch.randint(0, 4, (batch_size,), device=device))

    return model, make_batch, nn.functional.cross_entropy


def frozen_first_layer():
    """A fine-tuning set-up: the first layer's weight and bias frozen."""
    model, make_batch, loss_fn = one_tensor_input()
    model[0].requires_grad_(False)
    return model, make_batch, loss_fn


def cast_to_bf16():
    """A factory that converts its model, as users and PEFT do: `.to(dtype)` on fake
    parameters (fake_build.py)."""
    model, make_batch, loss_fn = one_tensor_input()
    model.to(torch.bfloat16)

    def bf16_batch(batch_size, seq_len, device):
        inputs, target = make_batch(batch_size, seq_len, device)
        return inputs.to(torch.bfloat16), target

    return model, bf16_batch, loss_fn


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
