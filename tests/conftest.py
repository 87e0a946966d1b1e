"""Shared helpers: run the CLI in a subprocess from a project folder, and compare folders."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def cli_env() -> dict[str, str]:
    """The environment of a CLI subprocess: `generator` importable from any cwd."""
    env = dict(os.environ)
    paths = [str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def run_cli(args: list[Any], cwd: Path, *, timeout: float = 300) -> subprocess.CompletedProcess:
    """`python -m generator ARGS` in `cwd`; stdout and stderr captured (stderr is a pipe,
    never a terminal, so progress is one line per experiment)."""
    return subprocess.run(
        [sys.executable, "-m", "generator", *map(str, args)],
        cwd=cwd, env=cli_env(), capture_output=True, text=True, timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def tree_state(root: Path) -> dict[str, tuple] | None:
    """Everything under `root`: each path with its kind, and for files size, mtime and bytes.
    None when `root` does not exist."""
    root = Path(root)
    if not root.exists():
        return None
    state: dict[str, tuple] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_dir():
            state[rel] = ("dir",)
        else:
            stat = path.stat()
            state[rel] = ("file", stat.st_size, stat.st_mtime_ns, path.read_bytes())
    return state


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder: a copy of the repository's mkdocs.yml, hand-written assets and theme overrides."""
    shutil.copy(REPO_ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(REPO_ROOT / "docs" / "assets", tmp_path / "docs" / "assets")
    shutil.copytree(REPO_ROOT / "overrides", tmp_path / "overrides")
    return tmp_path
