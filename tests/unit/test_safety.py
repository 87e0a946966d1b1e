"""Nothing read can run code or inject markup: results are JSON (no pickle, eval or exec in
the package), whatever a template prints is escaped for Markdown and HTML (escaping.py),
checked here through Python-Markdown with the extensions the site enables, and bitsandbytes is
imported with the Hub's kernels off. Hostile text on built pages: slow/test_build_pages.py, and
in a browser slow/test_injection_browser.py; names that would become paths:
test_results_store.py; estimates with the network refused: slow/test_no_network.py.
"""

from __future__ import annotations

import ast
import importlib
import logging
import re
import sys
import types
from html import unescape
from html.parser import HTMLParser

import markdown
import pytest
import yaml
from conftest import HOSTILE, INJECTIONS, REPO_ROOT

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


#: The one exception, and why: PyTorch's memory snapshot is a pickle, written for its
#: visualizer and read with an unpickler that admits no global (test_snapshot.py).
ALLOWED = {"simulate/snapshot.py": ["pickle"]}


def test_no_pickle_eval_or_exec_in_the_package() -> None:
    sources = sorted(PACKAGE.rglob("*.py"))
    assert len(sources) > 20
    found = {p.relative_to(PACKAGE).as_posix(): _unsafe_uses(p.read_text(encoding="utf-8"))
             for p in sources}
    assert not {name: uses for name, uses in found.items()
                if uses and uses != ALLOWED.get(name)}
    assert all(found[name] == uses for name, uses in ALLOWED.items())  # still needed


def test_templates_are_autoescaped() -> None:
    from generator.site.templating import environment

    env = environment()
    assert env.autoescape is True
    shown = env.from_string("{{ name }}").render(name=HOSTILE)
    assert "<" not in shown and '"' not in shown
    assert shown == "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'"  # no &#39; in Markdown
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


def test_no_template_prints_a_value_unescaped() -> None:
    """`|safe` would skip the escape; markup the code wrote is marked where it is written
    (escaping.written), never in a template."""
    templates = sorted((REPO_ROOT / "templates").rglob("*.j2"))
    assert len(templates) > 10
    assert not [t.name for t in templates
                if re.search(r"\|\s*safe\b", t.read_text(encoding="utf-8"))]


def _site_markdown(text: str) -> str:
    """`text` as mkdocs turns it into HTML: Python-Markdown with mkdocs.yml's extensions."""
    config = yaml.safe_load((REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    names, configs = [], {}
    for entry in config["markdown_extensions"]:
        name, options = next(iter(entry.items())) if isinstance(entry, dict) else (entry, None)
        names.append(name)
        if options:
            configs[name] = options
    return markdown.markdown(text, extensions=names, extension_configs=configs)


#: Where the templates print a value: a heading (where attr_list reads `{: }`), a paragraph,
#: a list item, a table cell, a link's text, an image's alt text, a caption that Markdown
#: reads inside HTML (md_in_html), an attribute value, and text joined to a macro's output.
PLACES = {
    "heading": "# Report of {{ v }}\n",
    "paragraph": "The model {{ v }} ran.\n",
    "list": "- {{ v }}\n",
    "table": "| a | b |\n|---|---|\n| {{ v }} | 1 |\n",
    "link": "[{{ v }}](reports/x.md)\n",
    "image": "![{{ v }}](figures/x.svg){ loading=lazy }\n",
    "caption": '<figure markdown="span">\n<figcaption>{{ v }}</figcaption>\n</figure>\n',
    "attribute": '<select><option value="{{ v }}">{{ v }}</option></select>\n',
    "joined": "{% macro m() %}**{{ 1 }}**{% endmacro %}{{ m() ~ ' of ' ~ v }}\n",
}


class _Elements(HTMLParser):
    """The elements of some HTML, with their attributes, and what a reader sees of it (its
    text and its attribute values, references decoded)."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.seen: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {name: value or "" for name, value in attrs}))
        self.seen += [value or "" for _, value in attrs]

    def handle_data(self, data: str) -> None:
        self.seen.append(data)


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("form", sorted(INJECTIONS))
def test_markdown_in_a_value_reaches_the_page_as_text(form: str, place: str) -> None:
    """Each injection form, wherever a template prints it, is shown and not read as syntax:
    no element, attribute, link or formula comes from the value."""
    from generator.site.templating import environment

    value = INJECTIONS[form]
    source = environment().from_string(PLACES[place]).render(v=value)
    page = _Elements(_site_markdown(source))
    plain = _Elements(_site_markdown(environment().from_string(PLACES[place]).render(v="x")))
    assert [(tag, sorted(attrs)) for tag, attrs in page.elements] == \
        [(tag, sorted(attrs)) for tag, attrs in plain.elements], source
    for _, attrs in page.elements:
        for name in ("href", "src"):
            assert not attrs.get(name, "").lower().startswith(("javascript:", "data:")), source
    seen = " ".join(page.seen)
    for line in value.split("\n"):
        assert line in seen, (line, source)


def test_the_escaping_of_each_character() -> None:
    from generator.site.escaping import markdown as escape

    assert escape("a's (b) & c!") == "a's (b) & c!"  # nothing Markdown reads stays as it is
    assert escape("&amp; &#60; &lt;") == "&amp;amp; &amp;#60; &amp;lt;"
    assert escape('<"x">') == "&lt;&quot;x&quot;&gt;"
    assert escape("[]{}`*_|$\\") == "&#91;&#93;&#123;&#125;&#96;&#42;&#95;&#124;&#36;&#92;"
    assert escape(escape("[x]")) == "&#91;x&#93;"  # markup passes unchanged


@pytest.mark.parametrize("value", ["hf:org/a_b", "a`b", "`x`", "a|b", "<i>&amp;", "x\ny"])
def test_a_code_span_shows_a_value_as_written(value: str) -> None:
    from generator.site.templating import environment

    for place in ("Run {{ v | code }}.\n", "| a | b |\n|---|---|\n| {{ v | code }} | 1 |\n"):
        html = _site_markdown(environment().from_string(place).render(v=value))
        codes = re.findall(r"<code>(.*?)</code>", html, re.S)
        assert len(codes) == 1 and unescape(codes[0]) == value.replace("\n", " "), html
        assert html.count("<td") in (0, 2), html  # a | in the span splits no cell
