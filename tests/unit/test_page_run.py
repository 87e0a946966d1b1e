"""The page "Run your own script" (generator/site/pages/run.py): it renders in both languages
with and without its example, sits right after the guide in the nav, says every placeholder's
words, the note on torch.compile and the exit status of a run that does not fit as the code
decides them, types no figure in its prose, and shows the stored run of the shipped example
as it was printed and reported (its output fenced however hostile)."""

from __future__ import annotations

import copy
import json
import re

import pytest
from conftest import LANGS, REPO_ROOT
from page_checks import page_markdown

from generator import units
from generator.plan.fit import DOES_NOT_FIT, WORD_TEXT
from generator.results.notes import note, text
from generator.site.escaping import code_block
from generator.site.pages import all_pages, pages_of, run

STUDY = REPO_ROOT / "docs" / "data" / "studies" / "estimate" / "run-plain-loop-rtx-4090.json"


@pytest.fixture(scope="module")
def study() -> dict:
    found = json.loads(STUDY.read_text(encoding="utf-8"))
    found["json_path"] = "../data/studies/estimate/run-plain-loop-rtx-4090.json"
    return found


@pytest.fixture(scope="module")
def pages(study) -> dict[tuple[str, bool], str]:
    """(language, with the example) → the page."""
    return {(lang, shown): page_markdown(run, run.context([], [study] if shown else []), lang)
            for lang in LANGS for shown in (True, False)}


def test_it_comes_right_after_the_guide_in_the_nav() -> None:
    ctx = {name: module.context([], []) for name, module in all_pages().items()}
    nav = sorted((p.nav, p.path) for name, module in all_pages().items()
                 for p in pages_of(module, ctx[name]) if p.section is None)
    paths = [path for _, path in nav]
    assert paths[paths.index("guide.md") + 1] == "run.md"
    assert [n for n, _ in nav].count(run.PAGES[0].nav) == 1, "another page shares its place"


def test_what_it_says_of_the_code_comes_from_the_code(pages) -> None:
    for (lang, _), page in pages.items():
        assert page.startswith("# "), lang
        for kind in run.PLACEHOLDERS:
            assert f"- `{kind}`" in page and text(note(f"placeholder_{kind}"), lang) in page
        said = text(note("compiled_eagerly"), lang)
        assert said.replace("activations", "[activations](glossary.md#activations)") in page \
            or said in page, lang
        assert f"- `{DOES_NOT_FIT}`" in page, lang
        for needle in ("python -m generator run", "generator.simulated_gpu(", "--gpu-memory",
                       "--steps", "--json", "-m MODULE", "torch.utils.cpp_extension.load",
                       "torch.ops.<namespace>", "torch.cuda.OutOfMemoryError",
                       "{ #memory-visualizer }"):
            assert needle in page, (lang, needle)
        assert "measured" not in page.lower() and "实测" not in page


def test_no_figure_is_typed_in_the_prose(pages) -> None:
    """Without the example the page holds no number but in code (commands, flags, the exit
    statuses) and the context's."""
    ctx = run.context([], [])
    for lang in LANGS:
        prose = pages[lang, False]
        for words in ctx["placeholders"].values():  # the placeholders' own: 0, False
            prose = prose.replace(words[lang], "")
        prose = re.sub(r"```.*?```", "", prose, flags=re.S)
        prose = re.sub(r"`[^`\n]*`|\]\([^)]*\)|\{ #[a-z-]+ \}", "", prose)
        assert not re.search(r"\d", prose), (lang, re.findall(r".{0,20}\d.{0,20}", prose))


def test_the_example_is_the_stored_run_as_it_printed_and_reported(pages, study) -> None:
    data, report = study["data"], study["data"]["report"]
    assert data["command"] == ["python", "-m", "generator", "run", "--gpu", "RTX 4090",
                               "generator/examples/plain_loop.py"]
    for lang in LANGS:
        page = pages[lang, True]
        assert '$ python -m generator run --gpu "RTX 4090" generator/examples/plain_loop.py' \
            in page
        assert f"```text\n{data['output'].rstrip()}\n```" in page  # verbatim
        for number, step in enumerate(report["steps"], 1):
            assert f"| {number} | {units.mib(step['allocated_bytes'])} | " \
                   f"{units.mib(step['reserved_bytes'])} |" in page
        assert WORD_TEXT[report["verdict"]][lang] in page
        assert ("estimated (modelling CUDA)" if lang == "en" else "估算（模拟 CUDA）") in page
        assert "run-plain-loop-rtx-4090.json" in page.split("{ #data }")[1]
        without = pages[lang, False]
        assert "```text" not in without and "{ #example }" in without
    assert not re.search(r"/(home|root|tmp|work)/", json.dumps(study))  # no machine's paths


def test_a_hostile_output_stays_inside_its_fence(study) -> None:
    hostile = copy.deepcopy(study)
    hostile["data"]["output"] = "```\n<script>alert(1)</script>\n```` {: onclick=x }\n"
    page = page_markdown(run, run.context([], [hostile]), "en")
    assert "`````text\n```\n<script>alert(1)</script>\n```` {: onclick=x }\n`````" in page
    assert code_block("a\r\nb", "text") == "```text\na\nb\n```"


def test_the_reserved_line_is_said_to_only_grow_where_it_does() -> None:
    from generator.site.pages.run import reserved_only_grows

    grows = {"events": [1, 2, 3], "allocated": [1, 5, 2], "reserved": [2, 8, 8]}
    assert reserved_only_grows(grows)
    assert not reserved_only_grows({**grows, "reserved": [2, 8, 4]})
