"""The page "Run your own script" (运行你自己的脚本): `python -m generator run` and
`generator.simulated_gpu()`, what the script sees, what the placeholders mean, what cannot be
simulated, the exit statuses, and a real example.

The example is the study `simulated_run` (measure/studies/simulated_run.py): the shipped plain
PyTorch loop run on a simulated GPU by the command itself, its printout and its JSON report
as stored; no figure of it is typed here or in templates/run/. What the page says of the code
(the placeholders' words, the note on torch.compile, the exit status of a run that does not
fit) comes from the code that decides it, through the context. Without the study the page
says so where the example would stand.
"""

from __future__ import annotations

from typing import Any

from generator import units
from generator.plan.fit import DOES_NOT_FIT, WORD_TEXT
from generator.results.notes import CATALOGUE, note, text
from generator.site.derived import first_study
from generator.site.charts.trace_chart import allocator_timeline
from generator.site.escaping import code, code_block, written
from generator.site.labels import KIND_LABELS, MODELLED_DEVICE_LABELS
from generator.site.pages import Page, PageModule
from generator.words import LANGS, Words

#: Right after the guide (7), which links it from its `run` section.
PAGES = (Page("run.md", "run/run", nav=8),)
#: The placeholders' kinds, in the order the catalogue says them (results/notes.py).
PLACEHOLDERS = tuple(name.removeprefix("placeholder_") for name in CATALOGUE
                     if name.startswith("placeholder_"))


def context(results: list[dict[str, Any]], studies: list[dict[str, Any]]) -> dict[str, Any]:
    return {"placeholders": {kind: _said(f"placeholder_{kind}") for kind in PLACEHOLDERS},
            "compiled_eagerly": _said("compiled_eagerly"),
            "does_not_fit": DOES_NOT_FIT,
            "example": example(first_study(studies, "simulated_run"))}


def _said(ident: str) -> Words:
    """A note of the catalogue in both languages (its words are Markdown this code wrote)."""
    return written(Words(*(text(note(ident), lang) for lang in ("en", "zh"))))


def example(study: dict[str, Any] | None) -> dict[str, Any] | None:
    """The stored run, as the page shows it: the command (a GPU's name quoted as a shell
    needs it), what it printed, each optimizer step's peaks in MiB, the verdict in the
    reader's words and what kind of numbers they are; None without the study."""
    if study is None:
        return None
    data = study["data"]
    report = data["report"]
    shell = " ".join(f'"{part}"' if " " in part else part for part in data["command"])
    return {
        "command": code_block(f"$ {shell}", "console"),
        "output": code_block(data["output"], "text"),
        "exit_status": data["exit_status"],
        "script": code(study["study"]["params"]["script"]),
        "gpu": report["gpu"],
        "steps": [{"step": number, "allocated_mib": units.mib(step["allocated_bytes"]),
                   "reserved_mib": units.mib(step["reserved_bytes"])}
                  for number, step in enumerate(report["steps"], 1)],
        "reserved_mib": units.mib(report["reserved_bytes"]),
        "verdict": {lang: WORD_TEXT[report["verdict"]][lang] for lang in LANGS}
        if report["verdict"] in WORD_TEXT else None,
        "placeholders": [{"place": code(f"{read['file']}:{read['line']}"), "kind": read["what"],
                          "count": read["count"]} for read in report["placeholders"]],
        "kind": {lang: KIND_LABELS["estimate"][lang].format(
            device=MODELLED_DEVICE_LABELS["cuda"][lang]) for lang in LANGS},
        "timeline": report.get("timeline"),
        "allocated_mib": units.mib(report["allocated_bytes"]),
        "reserved_only_grows": (reserved_only_grows(report["timeline"])
                                if report.get("timeline") else None),
        "events": report["timeline"]["events"][-1] if report.get("timeline") else None,
        "sources": [study],
    }


def reserved_only_grows(timeline: dict[str, list[int]]) -> bool:
    """Whether the reserved bytes never fall over the trace (no segment given back)."""
    reserved = timeline["reserved"]
    return all(before <= after for before, after in zip(reserved, reserved[1:]))


def figures(ctx: dict[str, Any], lang: str) -> dict[str, str]:
    """The stored run's allocator history, where its report holds one (run --snapshot)."""
    ex = ctx["example"]
    if ex is None or ex["timeline"] is None:
        return {}
    return {"run-snapshot-timeline": allocator_timeline("run-snapshot-timeline", ex["timeline"],
                                                        ex["gpu"], lang)}


PAGE_MODULE = PageModule(PAGES, context, figures=figures)
