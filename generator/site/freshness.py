"""Whether docs/ already holds what `render` would write, so that a warm `build` can skip it.

Rendering draws a chart per result and language (seconds each on a small machine); a warm
build whose results were all reused would redraw the same bytes. `render` is deterministic,
so its output is fixed by what it reads: the results, the templates, this package's code and
the versions of the libraries that draw. After each render a stamp records a digest of
those inputs and of every file written; `build` skips rendering when both still match (a
page edited or deleted by hand fails the check). `python -m generator render` always renders.
"""

from __future__ import annotations

import hashlib
import json
import platform
from importlib import metadata
from pathlib import Path

from generator.results.store import stored_files
from generator.site.render import DATA, NAV
from generator.site.templating import TEMPLATES

STAMP = ".render-stamp.json"  # mkdocs skips dotfiles in docs/ (exclude_docs default)
PACKAGE = Path(__file__).resolve().parents[1]  # all of generator/: any module may shape a page
LIBRARIES = ("matplotlib", "jinja2", "markupsafe", "numpy", "torch")
from generator.words import LANGS


def _files(root: Path) -> list[Path]:
    return sorted(p for p in Path(root).rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith("."))


def _digest(paths: list[tuple[str, Path]]) -> str:
    digest = hashlib.sha256()
    for name, path in paths:
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "-"


def inputs_digest(results_dir: Path) -> str:
    """Everything a render reads, digested."""
    results = Path(results_dir)  # its stored results only: the pages' data may lie beside them
    paths = [(f"results/{p.relative_to(results).as_posix()}", p)
             for p in stored_files(results)]
    paths += [(f"{label}/{p.relative_to(root).as_posix()}", p)
              for label, root in (("templates", TEMPLATES), ("generator", PACKAGE))
              for p in _files(root)]
    versions = [platform.python_version()] + [f"{n} {_version(n)}" for n in LIBRARIES]
    return _digest(paths) + " " + hashlib.sha256(" ".join(versions).encode()).hexdigest()


def outputs_digest(docs_dir: Path) -> str:
    """Everything a render wrote: the language folders, the data folder and the nav."""
    docs = Path(docs_dir)
    paths = [(p.relative_to(docs).as_posix(), p)
             for folder in (*LANGS, DATA) for p in _files(docs / folder)]
    if (docs / NAV).exists():
        paths.append((NAV, docs / NAV))
    return _digest(paths)


def record(results_dir: Path, docs_dir: Path) -> None:
    """Write the stamp after a render; no dates, so the same render writes the same stamp."""
    stamp = {"inputs": inputs_digest(results_dir), "outputs": outputs_digest(docs_dir)}
    (Path(docs_dir) / STAMP).write_text(json.dumps(stamp, indent=1) + "\n", encoding="utf-8")


def is_fresh(results_dir: Path, docs_dir: Path) -> bool:
    """True when a render now would write exactly what docs/ holds."""
    try:
        stamp = json.loads((Path(docs_dir) / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(stamp, dict) and \
        stamp.get("inputs") == inputs_digest(results_dir) and \
        stamp.get("outputs") == outputs_digest(docs_dir)
