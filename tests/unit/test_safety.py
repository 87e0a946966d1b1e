"""Nothing read can run code or inject markup: results are JSON (no pickle, eval or exec in
the package), templates are autoescaped, and bitsandbytes is imported with the Hub's kernels
off. Hostile text on built pages: slow/test_build_pages.py; names that would become paths:
test_results_store.py; estimates with the network refused: slow/test_no_network.py.
"""

from __future__ import annotations

import ast
import importlib
import logging
import sys
import types

import pytest

from conftest import HOSTILE, REPO_ROOT

PACKAGE = REPO_ROOT / "generator"
#: Modules that deserialize into code or objects; results are JSON and nothing else.
UNSAFE_MODULES = {"pickle", "cPickle", "dill", "marshal", "shelve", "joblib", "cloudpickle"}
UNSAFE_CALLS = {"eval", "exec", "compile", "__import__"}
UNSAFE_ATTRIBUTES = {("torch", "load"), ("yaml", "load"), ("yaml", "unsafe_load"),
                     ("numpy", "load"), ("np", "load")}


def _unsafe_uses(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in UNSAFE_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found += [node.module] if node.module.split(".")[0] in UNSAFE_MODULES else []
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in UNSAFE_CALLS:
                found.append(f"{func.id}()")
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                    (func.value.id, func.attr) in UNSAFE_ATTRIBUTES:
                found.append(f"{func.value.id}.{func.attr}()")
    return found


def test_the_checker_finds_what_it_looks_for() -> None:
    assert _unsafe_uses("import pickle\nfrom marshal import loads\neval('1')\n"
                        "torch.load('x')\nmodel.eval()\n") == \
        ["pickle", "marshal", "eval()", "torch.load()"]


def test_no_pickle_eval_or_exec_in_the_package() -> None:
    sources = sorted(PACKAGE.rglob("*.py"))
    assert len(sources) > 20
    found = {str(p.relative_to(PACKAGE)): _unsafe_uses(p.read_text(encoding="utf-8"))
             for p in sources}
    assert not {name: uses for name, uses in found.items() if uses}


def test_templates_are_autoescaped() -> None:
    from generator.site.templating import environment

    env = environment()
    assert env.autoescape is True
    shown = env.from_string("{{ name }}").render(name=HOSTILE)
    assert "<" not in shown and '"' not in shown and "'" not in shown
    assert shown.startswith("&lt;script&gt;alert(")
    for name in env.list_templates(extensions=["j2"]):
        assert env.get_template(name)  # every template compiles under the same environment


@pytest.mark.parametrize("theirs", [types.ModuleType("kernels"), None],
                         ids=["imported-by-the-caller", "never-imported"])
def test_bitsandbytes_is_imported_with_the_hubs_kernels_out_of_reach(
        monkeypatch: pytest.MonkeyPatch, tmp_path, theirs: types.ModuleType | None) -> None:
    """bitsandbytes asks `kernels` for a compiled kernel from the Hub as it is imported (on a
    CPU with AVX512-BF16): meanwhile `kernels` cannot be imported, though installed (here a
    package of the test's own), and afterwards the caller's own module is back, or none."""
    from generator.measure import importing_bitsandbytes

    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "__init__.py").write_text("", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    if theirs is None:
        monkeypatch.delitem(sys.modules, "kernels", raising=False)
    else:
        monkeypatch.setitem(sys.modules, "kernels", theirs)
    with importing_bitsandbytes():
        with pytest.raises(ImportError, match="import of kernels halted"):
            importlib.import_module("kernels")
        assert logging.getLogger("bitsandbytes.backends.cpu.ops").level == logging.ERROR
    if theirs is None:
        assert "kernels" not in sys.modules
    else:
        assert sys.modules["kernels"] is theirs
