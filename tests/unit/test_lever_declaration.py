"""A lever is declared once (generator/experiment/levers.py): its words, what it changes and its
row in the levers study. The levers suite, the levers page and the calculator derive from the
declaration, and no surface that shows a lever restates its words."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from generator.errors import ConfigError
from generator.experiment import Experiment
from generator.experiment.levers import BY_ID, OPTIMIZER_NAMES, REGISTRY, study, study_settings
from generator.experiment.suite import DEFAULT_SUITE, STUDY, file_tables
from generator.site import lever_results
from generator.site.calculator_grid import settings as calculator
from generator.site.pages import levers as levers_page
from generator.words import Words

PACKAGE = Path(__file__).resolve().parents[2] / "generator"
#: The surfaces that show levers: the pages, the command line, the API.
SURFACES = [*sorted((PACKAGE / "site" / "pages").rglob("*.py")),
            *sorted((PACKAGE / "cli").rglob("*.py")), PACKAGE / "api.py"]


def _declared_words() -> dict[str, str]:
    """Each text a lever's declaration holds (name and cost, both languages), and the
    optimizers' names that are no PyTorch class name (those differ between languages)."""
    found = {text: lever.id for lever in REGISTRY for words in (lever.name, lever.cost)
             for text in words}
    found |= {text: f"optimizer {name}" for name, words in OPTIMIZER_NAMES.items()
              if words.en != words.zh for text in words}
    return found


def _string_constants(source: str) -> list[tuple[int, str]]:
    return [(node.lineno, node.value) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def test_no_surface_restates_a_lever_s_words() -> None:
    declared = _declared_words()
    restated = [f"{path.relative_to(PACKAGE)}:{line}: {text!r} ({declared[text]})"
                for path in SURFACES
                for line, text in _string_constants(path.read_text(encoding="utf-8"))
                if text in declared]
    assert not restated


def test_the_scan_finds_words_restated() -> None:
    """The check above, on a module that restates one (so an empty answer means something)."""
    source = 'NAME = Words("8-bit AdamW", "8 位 AdamW")\n'
    declared = _declared_words()
    assert [text for _, text in _string_constants(source) if text in declared] == \
        ["8-bit AdamW", "8 位 AdamW"]


def test_the_levers_page_shows_the_studied_levers_by_their_declared_words() -> None:
    studied = {lever.study: lever for lever in REGISTRY if lever.study}
    assert list(lever_results.LEVERS) == list(studied)
    for ident, lever in studied.items():
        assert lever_results.names()[ident] == Words(
            lever.title(lever_results.BASELINE_STEP, "en"),
            lever.title(lever_results.BASELINE_STEP, "zh"))
    assert lever_results.SECTIONS == {lever.study: lever.section for lever in REGISTRY
                                    if lever.study and lever.section}


def test_a_lever_s_study_changes_are_part_of_its_row() -> None:
    lora = study()["lora"]
    assert lora.changes == {**BY_ID["lora"].changes, "lora_targets": ("query", "value")}
    assert lever_results.use(lever_results.LEVERS["lora"])["lora_targets"] == ("query", "value")


def test_the_calculator_names_an_optimizer_as_the_declaration_does() -> None:
    exp = {"optimizer": "adamw-8bit", "checkpointing": True, "precision": "amp-bf16"}
    assert calculator.lever_words(exp).en == f"activation checkpointing + {OPTIMIZER_NAMES['adamw-8bit'].en}"
    assert calculator.lever_words(exp).zh.endswith(OPTIMIZER_NAMES["adamw-8bit"].zh)
    assert calculator.levers_id({"optimizer": "adamw", "precision": "fp32"}) == "none"


def test_the_8bit_lever_s_name_is_its_optimizer_s() -> None:
    assert BY_ID["adamw-8bit"].name.en.startswith(OPTIMIZER_NAMES["adamw-8bit"].en)
    assert BY_ID["adamw-8bit"].name.zh.startswith(OPTIMIZER_NAMES["adamw-8bit"].zh)


def test_the_levers_suite_s_study_setting_is_one_row_per_studied_lever() -> None:
    step = Experiment(model="bert-base", batch_size=32, seq_len=128)
    rows = study_settings(step)
    assert len(rows) == len(study())
    assert {"checkpointing": True} in rows and {"micro_batches": 4} in rows
    assert {"zero_grad": "zeros"} in rows  # a default already: against its opposite
    assert {"lora_rank": 16, "lora_targets": ("query", "value")} in rows
    grid = {"grid": [{"model": "bert-base", "batch_size": 32, "seq_len": 128,
                      "settings": [{"precision": "fp32"}, STUDY]}]}
    tables = [table for _, table in file_tables(grid)]
    assert len(tables) == 1 + len(rows)
    assert tables[1] == {"model": "bert-base", "batch_size": 32, "seq_len": 128, **rows[0]}


def test_the_levers_suite_file_uses_the_study() -> None:
    text = (DEFAULT_SUITE / "levers.toml").read_text(encoding="utf-8")
    assert f'"{STUDY}"' in text


def test_the_study_needs_a_step_to_apply_to() -> None:
    grid = {"grid": [{"model": "bert-base", "settings": [STUDY]}]}
    with pytest.raises(ConfigError, match="grid 1: the levers study needs a step"):
        file_tables(grid)


def test_a_new_studied_lever_is_in_the_study_without_another_list(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What "declared once" buys: a lever with a `study` is in the study, no other list."""
    from generator.experiment import levers

    new = dataclasses.replace(BY_ID["bf16"], study="pure-bf16")
    monkeypatch.setattr(levers, "REGISTRY", (*REGISTRY, new))
    assert study()["pure-bf16"].changes == {"precision": "bf16"}
    assert {"precision": "bf16"} in study_settings(
        Experiment(model="bert-base", batch_size=32, seq_len=128))


def test_a_new_studied_lever_is_ranked_on_the_page_without_a_section_of_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A lever the page has no prose for still gets its row, named by its declaration: its
    result (pure bf16, made here from the AMP one) is all it needs."""
    import json
    import shutil

    from conftest import FIXTURES
    from page_checks import page_markdown

    from generator import results

    shutil.copytree(FIXTURES / "levers", tmp_path / "levers")
    folder = tmp_path / "levers" / "estimate"
    data = json.loads((folder / "bert-base-b32-s128-amp-bf16-adamw-estimate.json").read_text())
    data["experiment"]["precision"] = "bf16"
    data["key"] = Experiment.from_dict(data["experiment"]).key
    (folder / f"{data['key']}.json").write_text(json.dumps(data))
    new = dataclasses.replace(BY_ID["bf16"], study="pure-bf16")
    titles = {lang: new.title(lever_results.BASELINE_STEP, lang) for lang in ("en", "zh")}
    titles = {lang: title[:1].upper() + title[1:] for lang, title in titles.items()}
    found = results.load_all(tmp_path / "levers")
    before = levers_page.context(found, [])
    assert titles["en"] not in page_markdown(levers_page, before, "en")  # not studied yet
    monkeypatch.setattr(lever_results, "LEVERS", {**lever_results.LEVERS, "pure-bf16": (new,)})
    ctx = levers_page.context(found, [])
    assert ctx is not None and "pure-bf16" in ctx["by_id"]
    for lang, title in titles.items():
        assert title in page_markdown(levers_page, ctx, lang)
