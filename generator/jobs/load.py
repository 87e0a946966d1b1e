"""Read experiments.toml files into a list of validated jobs: experiments and studies.

The built-in suite is every file of generator/experiment/suites/, in name order; `--config FILE`
replaces it with one file of the same form.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Union

from generator.errors import ConfigError, GeneratorError
from generator.experiment import Experiment
from generator.experiment.suite import DEFAULT_SUITE, count, expand, file_tables, refuse_too_many
from generator.files import read_limited
from generator.measure.models import (ModelSpec, check_model, experiment_unavailable,
                                      resolve_model)
from generator.measure.studies import Study

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

Job = Union[Experiment, Study]
#: The largest suite file read: the built-in ones are a few KiB.
MAX_SUITE_BYTES = 4 * 2**20


def load_suite(path: Path | None = None) -> list[Job]:
    """All jobs of a suite file (or of the built-in suite); every problem is reported at once."""
    paths = [Path(path)] if path is not None else sorted(DEFAULT_SUITE.glob("*.toml"))
    jobs: list[Job] = []
    for one in paths:
        jobs += _load_file(one)
    jobs = list(dict.fromkeys(jobs))
    _check_distinct_files(jobs, path or DEFAULT_SUITE)
    return jobs


def _check_distinct_files(jobs: list[Job], where: Path) -> None:
    """Two jobs of one run never share a results file, where each would overwrite the other
    while both are reported measured. Keys tell experiments apart by construction
    (Experiment.key); a study's file is its name, which two studies may both take."""
    seen: dict[tuple, Job] = {}
    for job in jobs:
        # a study's folder is its backend's machine; an experiment's key names its backend
        file = (isinstance(job, Study), job.backend if isinstance(job, Study) else "", job.key)
        if file in seen:
            first = seen[file]
            raise ConfigError(f"{where}: {_described(first)} and {_described(job)} would write "
                              f"one results file, {job.key}.json; "
                              f"{'rename one' if isinstance(job, Study) else 'give one'}")
        seen[file] = job


def _described(job: Job) -> str:
    if isinstance(job, Study):
        return f"study {job.name!r} ({job.kind}, params {job.params})"
    return repr(job.label)


def _read(path: Path) -> dict[str, Any]:
    """A suite file's tables; a file that is no suite is a ConfigError, on one line."""
    try:
        text = read_limited(path, MAX_SUITE_BYTES).decode("utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error.strerror}") from None
    except UnicodeDecodeError as error:  # TOML is UTF-8 by definition
        raise ConfigError(f"{path}: not UTF-8 text (byte {error.start}); "
                          "save it as UTF-8") from None
    except ValueError as error:  # a device, a FIFO, a huge file
        raise ConfigError(f"{path}: {error}; a suite is a TOML file of a few tables") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: malformed TOML: {error}") from None
    except RecursionError:
        raise ConfigError(f"{path}: arrays or tables nested too deep") from None


def _load_file(path: Path) -> list[Job]:
    data = _read(path)
    unknown = sorted(set(data) - {"experiment", "grid", "sizes", "study", "reference"})
    if unknown:
        raise ConfigError(f"{path}: unknown table(s) {', '.join(unknown)}; use [[experiment]], "
                          "[[grid]] with [sizes], [[study]] and [[reference]]")
    single = [name for name in ("experiment", "grid", "study", "reference")
              if isinstance(data.get(name), dict)]
    if single:
        raise ConfigError(f"{path}: [{single[0]}] is one table; write [[{single[0]}]] "
                          "(double brackets)")
    studies = data.get("study", [])
    try:
        tables = file_tables(data)
        tables += [(f"experiment {number}", table) for number, table in
                   enumerate(_reference_tables(data.get("reference", [])),
                             start=len(data.get("experiment", [])) + 1)]
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None
    if not isinstance(studies, list) or not (tables or studies):
        raise ConfigError(f"{path}: no [[experiment]], [[grid]] or [[study]] tables")
    try:  # the whole file's count, before any table is expanded
        refuse_too_many(sum(count(table) for _, table in tables), "its tables expand")
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None
    jobs: list[Job] = []
    problems = []
    specs: dict[str, ModelSpec] = {}  # each model resolved once, not once per combination
    for name, table in tables:
        try:
            combinations = expand(table)
        except ConfigError as error:
            problems.append(f"{name}: {error}")
            continue
        for combination in combinations:
            try:
                jobs.append(Experiment.from_dict(combination))
                if jobs[-1].tracked:
                    raise ConfigError("tracked steps come from generator.track() around "
                                      "the user's own code; a suite cannot run one")
                if not experiment_unavailable(jobs[-1]):  # skipped when run, with the reason
                    model = jobs[-1].model
                    specs[model] = specs.get(model) or resolve_model(model)
                    check_model(jobs[-1], specs[model])
            except (GeneratorError, TypeError) as error:
                problems.append(f"{name}: {error}")
    for number, table in enumerate(studies, start=1):
        try:
            jobs.append(Study.from_dict(table))
        except (GeneratorError, TypeError) as error:
            problems.append(f"study {number}: {error}")
    if problems:
        raise ConfigError(f"{path}: " + "; ".join(dict.fromkeys(problems)))
    return jobs


def _reference_tables(tables: Any) -> list[dict[str, Any]]:
    """[[reference]] dataset = "…": one experiment per configuration of a published dataset
    of real GPU runs (results/reference_runs.py), so that their figures live in one file.
    `backend` (default "estimate"; a list for several) runs the same steps there instead:
    "cuda" measures them on this machine's GPU."""
    from generator.results import reference_runs

    experiments = []
    for table in tables:
        if not isinstance(table, dict) or "dataset" not in table or \
                not set(table) <= {"dataset", "backend"}:
            raise ConfigError('[[reference]] takes dataset = "<name>" and, optionally, '
                              'backend = "<backend>" or a list of them')
        if table["dataset"] != reference_runs.DATASET:
            raise ConfigError(f"unknown reference dataset {table['dataset']!r}; "
                              f"known: {reference_runs.DATASET}")
        # values that are lists would expand into combinations: wrap them (the backend's
        # list is meant to expand)
        experiments += [{**{name: [value] if isinstance(value, list) else value
                            for name, value in run.experiment().items()},
                         **({"backend": table["backend"]} if "backend" in table else {})}
                        # the runs this project can build first: a GPU's time goes to them
                        for run in sorted(reference_runs.runs(),
                                          key=lambda run: run.skipped is not None)]
    return experiments
