"""The repository's shape as its owners asked for it: the top level is docs/, generator/,
templates/, tests/, mkdocs.yml, pyproject.toml and README.md (plus dotfiles), and the results
are committed once, in docs/data/, where the site publishes them. Read from git's index."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections import defaultdict

import pytest
from conftest import REPO_ROOT

TOP_LEVEL = {"docs", "generator", "templates", "tests", "mkdocs.yml", "pyproject.toml",
             "README.md"}

if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
    pytest.skip("needs git and a checkout to read what is committed", allow_module_level=True)


def _committed() -> list[str]:
    return subprocess.run(["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True,
                          check=True).stdout.decode().split("\0")[:-1]


def test_the_top_level_is_the_owners_list() -> None:
    top = {path.split("/", 1)[0] for path in _committed()}
    assert {name for name in top if not name.startswith(".")} == TOP_LEVEL


def test_no_json_under_docs_is_a_copy_of_another_committed_json() -> None:
    by_digest: dict[str, list[str]] = defaultdict(list)
    for path in _committed():
        file = REPO_ROOT / path
        if path.endswith(".json") and not file.is_symlink():
            by_digest[hashlib.sha256(file.read_bytes()).hexdigest()].append(path)
    copies = [paths for paths in by_digest.values()
              if len(paths) > 1 and any(p.startswith("docs/") for p in paths)]
    assert not copies
