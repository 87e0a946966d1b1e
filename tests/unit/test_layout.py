"""The package's shape: small modules, no import cycles, no private name of the project's borrowed
by another module, and a site layer that reads results without PyTorch. Read from the source
(ast), nothing imported."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "generator"
#: Size is a smell, not a rule: past this a module probably holds two concepts. Never split one
#: concept in two to meet it (a table beside the code that reads it, a check beside its option).
MAX_LINES = 500


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "templates" in path.relative_to(PACKAGE).parts:
            continue  # the link to the top-level templates/ (a snippet the pages show)
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path, *, top_level_only: bool,
             source: str | None = None) -> list[tuple[str, list[str]]]:
    """(module, names) for each `import`/`from … import` in the file (or `source`); with
    top_level_only, only those that run when the module is imported (not inside functions).
    Imports under `if TYPE_CHECKING:` never run, and are left out."""
    if source is None:  # the package's own files: read once for all the checks below
        return list(_file_imports(name, path, top_level_only))
    return _imports_in(name, path, source, top_level_only)


@functools.cache
def _file_imports(name: str, path: Path, top_level_only: bool
                  ) -> tuple[tuple[str, list[str]], ...]:
    return tuple(_imports_in(name, path, path.read_text(encoding="utf-8"), top_level_only))


def _imports_in(name: str, path: Path, source: str, top_level_only: bool
                ) -> list[tuple[str, list[str]]]:
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            node.body = []
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = []
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            found.append((base, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names]
    return found


def _target(module: str, names: list[str]) -> list[str]:
    """The project modules an import statement depends on: the submodules it names, and the
    module itself when it takes a name defined there."""
    subs = [f"{module}.{n}" for n in names if f"{module}.{n}" in MODULES]
    own = module in MODULES and (not names or len(subs) < len(names))
    return subs + ([module] if own else [])


#: Transcriptions of other authors' scripts, line by line (validate/as_written): their length
#: is their author's, not a concept of this project's.
TRANSCRIBED = "generator.validate.as_written."


@pytest.mark.parametrize("name", sorted(n for n in MODULES if not n.startswith(TRANSCRIBED)))
def test_modules_stay_small(name: str) -> None:
    lines = MODULES[name].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{name} has {lines} lines: does it still hold one concept?"


def test_no_private_name_is_imported_from_another_module() -> None:
    borrowed = [f"{name}: from {module} import {n}"
                for name, path in MODULES.items()
                for module, names in _imports(name, path, top_level_only=False)
                if module.startswith("generator")
                for n in names if n.startswith("_")]
    borrowed += [f"{name}: {module}" for name, path in MODULES.items()
                 for module, _ in _imports(name, path, top_level_only=False)
                 if module.startswith("generator")
                 and any(part.startswith("_") for part in module.split(".")[1:])]
    assert not borrowed


def _graph() -> dict[str, list[str]]:
    """Each module's project imports, at any level: an import inside a function is as much a
    dependency as one at the top, only later."""
    return {name: sorted({t for module, names in _imports(name, path, top_level_only=False)
                          for t in _target(module, names) if t != name})
            for name, path in MODULES.items()}


#: The package's floors, from the ground up: a module imports its own floor and the ones
#: below, never one above, at any level. The ground holds what everything shares (errors,
#: units, words, files, the GPU catalogue, the API's argument checks); then the allocator's
#: rules without PyTorch; what an experiment is; the planning answers; the results store;
#: measuring; the jobs that run measurements, the site that reads results and the simulated
#: GPU that runs a user's script (with the examples it runs); the API and
#: the validation of whole grids; and on top the command line and the benchmarks.
FLOORS = {"errors": 0, "units": 0, "words": 0, "files": 0, "gpus": 0, "arguments": 0,
          "allocator": 1, "experiment": 2, "plan": 3, "results": 4, "measure": 5,
          "jobs": 6, "site": 6, "simulate": 6, "examples": 6, "api": 7, "validate": 7,
          "cli": 8, "bench": 8, "__main__": 8, "": 8}


def _floor(module: str) -> int:
    part = module.split(".")[1] if "." in module else ""
    assert part in FLOORS, f"{module}: which floor is {part!r} on? (FLOORS in test_layout.py)"
    return FLOORS[part]


def _upward(name: str, path: Path, source: str | None = None) -> list[str]:
    """Each import of `name` (any level) of a module on a floor above its own."""
    return [f"{name} (floor {_floor(name)}) imports {t} (floor {_floor(t)})"
            for module, names in _imports(name, path, top_level_only=False, source=source)
            if module.startswith("generator")
            for t in _target(module, names) if _floor(t) > _floor(name)]


def test_every_module_is_on_a_floor() -> None:
    for name in MODULES:
        _floor(name)


def test_no_module_imports_a_floor_above_its_own() -> None:
    assert not [line for name, path in MODULES.items() for line in _upward(name, path)]


def test_an_import_inside_a_function_counts() -> None:
    """The check sees an upward import however deep it hides: here a planning module that
    reaches into the site from inside a function."""
    source = "def late():\n    from generator.site import render\n    return render\n"
    name = "generator.plan.fit"
    assert _upward(name, MODULES[name], source) == \
        [f"{name} (floor 3) imports generator.site.render (floor 6)"]
    guarded = ("from typing import TYPE_CHECKING\n"
               "if TYPE_CHECKING:\n    from generator.site import render\n")
    assert _upward(name, MODULES[name], guarded) == []


def _page(module: str) -> str | None:
    """The page a module belongs to (generator.site.pages.<page>[.…]); None for others."""
    parts = module.split(".")
    return parts[3] if parts[:3] == ["generator", "site", "pages"] and len(parts) > 3 else None


def test_no_page_imports_another_page() -> None:
    """What two pages share lives below them (site/, plan/, …): a page module imports no
    other page's module, at any level (the levers measured, site/lever_results/, and the
    calculator's grid, site/calculator_grid/, are read by two pages each)."""
    sideways = {f"{name} imports {target}" for name, targets in _graph().items()
                if _page(name) for target in targets
                if _page(target) and _page(target) != _page(name)}
    assert sideways == set()


def test_no_import_cycles() -> None:
    """Imports between the project's modules, at any level, form no cycle."""
    graph = _graph()
    done: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str, trail: list[str]) -> None:
        for nxt in graph[node]:
            if nxt in trail:
                cycles.append(trail[trail.index(nxt):] + [nxt])
            elif nxt not in done:
                visit(nxt, trail + [nxt])
        done.add(node)

    for name in sorted(graph):
        if name not in done:
            visit(name, [name])
    assert not cycles


@pytest.mark.parametrize("name", sorted(n for n in MODULES
                                        if n.startswith(("generator.site", "generator.results",
                                                         "generator.experiment", "generator.plan"))
                                        or n in ("generator.words", "generator.units")))
def test_what_renders_needs_no_torch(name: str) -> None:
    """The site, the results store and what they read import neither PyTorch nor the
    measuring layer, at any level: publishing the site needs results only."""
    imported = [module for module, names in _imports(name, MODULES[name], top_level_only=False)]
    assert not [m for m in imported if m.split(".")[0] == "torch"
                or m.startswith(("generator.measure", "generator.jobs"))]


def test_importing_the_package_imports_no_torch() -> None:
    """`import generator` (the API) imports neither PyTorch nor the measuring layer: each of
    its functions imports them when it runs."""
    graph = {name: {t for module, names in _imports(name, path, top_level_only=True)
                    for t in _target(module, names)} for name, path in MODULES.items()}
    seen, todo, external = set(), ["generator"], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += sorted(graph[name])
        external |= {module.split(".")[0] for module, _ in
                     _imports(name, MODULES[name], top_level_only=True)}
    assert "torch" not in external
    assert not [m for m in seen if m.startswith(("generator.measure", "generator.jobs"))]
