"""The results store: one JSON file per experiment, written atomically, versioned.

Layout: `<results>/<machine-id>/<experiment-key>.json`. JSON only: a results file is data
that other people commit, and must never be able to run code when read.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

from generator.errors import ConfigError, OutputError, ResultsError, shown
from generator.experiment import Experiment
from generator.files import TEMP_GLOB, read_limited, write_atomic
from generator.results import invariants, migrate, study_data
from generator.results.shapes import CATEGORIES, MAX_COUNT, StepResult, StudyResult

#: 2: notes are identifiers with values (notes.py); schema 1 is read through migrate.py.
SCHEMA_VERSION = 2
#: Fields every result has; figures are absent when `error` is set.
REQUIRED = ("schema_version", "key", "experiment", "backend", "environment", "error")
#: The largest result file read (the largest committed one, with an allocation trace, is
#: under 100 KiB).
MAX_RESULT_BYTES = 64 * 2**20
#: Optional fields, filled in when a file lacks them (older or hand-made results).
ENVIRONMENT_DEFAULTS = {"torch": None, "transformers": None, "python": None, "platform": None, "cpu": None,
                        "cpu_count": None, "cuda": None, "device_name": None, "driver": None,
                        "git_commit": None}
OPTIONAL_DEFAULTS = {"step_seconds": None, "ground_truth": None, "notes": [], "phases": [],
                     "architecture": None, "error_detail": None, "method_version": None,
                     "allocator": None, "phase_max_bytes": {}, "inputs": "tokens",
                     "trainable_parameter_count": None, "attention": None}
#: Categories added to CATEGORIES after results were first stored (see _fill_later_categories).
LATER_CATEGORIES = ("not_attributed", "comm_buffers")
FIGURES = ("peak_bytes", "live_at_peak_bytes", "category_max_bytes", "timeline",
           "module_activation_bytes", "parameter_count")


def result_path(results_dir: Path, machine_id: str, key: str) -> Path:
    """Where a result lives; refuses names that would leave the results folder, or that
    `load` would refuse (a control character, a character outside _SAFE_NAME)."""
    for part in (machine_id, key):
        if not isinstance(part, str) or not _SAFE_NAME.fullmatch(part):
            raise ConfigError(f"unsafe results path component {part!r}")
    return Path(results_dir) / machine_id / f"{key}.json"


def ensure_writable(folder: Path, what: str = "results") -> None:
    """Fail before measuring, not after, when results (or pages, or the site) cannot be
    written to `folder`. Creates nothing: a refused command leaves no empty folder behind."""
    existing = Path(folder)
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent  # the folder that `mkdir -p folder` would write into
    if existing.exists() and not existing.is_dir():
        raise OutputError(f"cannot write {what} to {folder}: {existing} is a file, not a folder")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as error:
        raise OutputError(f"cannot write {what} to {folder}: "
                          f"{error.strerror or error}") from None




def remove_stale_temps(results_dir: Path) -> list[Path]:
    """Delete the temporary files of a save that a killed run (SIGKILL, power loss) left
    behind; a save that finishes or fails in Python removes its own."""
    root = Path(results_dir)
    stale = sorted([*root.glob(f"*/{TEMP_GLOB}"), *root.glob(f"studies/*/{TEMP_GLOB}")])
    for path in stale:
        path.unlink(missing_ok=True)
    return stale


def save(path: Path, result: StepResult | StudyResult) -> None:
    """Write whole or not at all (a reader or an interrupted run never sees half a file)."""
    text = json.dumps(result, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    write_atomic(path, text, what="results", durable=True)


def load(path: Path) -> StepResult:
    """Read and check one result; every defect is a ResultsError naming the file."""
    data = read_current(path)
    # An out-of-memory step may keep its figures (what it would have needed): then they
    # are checked as any result's are.
    figures = data.get("error") is None or "peak_bytes" in data
    missing = [name for name in REQUIRED + (FIGURES if figures else ()) if name not in data]
    if missing:
        raise ResultsError(f"{path}: missing field(s) {', '.join(missing)}")
    _fill_later_categories(data)
    problem = _type_problem(data, figures) or (figures and invariants.problem(data))
    if problem:
        raise ResultsError(f"{path}: {problem}")
    try:
        # Every field filled in: a hand-made or older result that leaves out a default
        # (device, attention, …) reads like one that spells it out.
        data["experiment"] = Experiment.from_dict(data["experiment"]).to_dict()
    except (ConfigError, TypeError) as error:
        raise ResultsError(f"{path}: invalid experiment ({error})") from None
    # key and machine id name figure files and HTML ids: they must be plain names. The
    # folder is the machine id, whatever the file says, so a file cannot claim another's.
    machine = _safe_name(path, "folder name", Path(path).parent.name)
    _own_file(path, "key", _safe_name(path, "key", data["key"]))
    data["environment"] = {**ENVIRONMENT_DEFAULTS, **data["environment"], "machine_id": machine}
    return {**OPTIONAL_DEFAULTS, **data}


#: fullmatch: "$" would allow a trailing newline.
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _safe_name(path: Path, what: str, value: Any) -> str:
    if not isinstance(value, str) or not _SAFE_NAME.fullmatch(value):
        raise ResultsError(f"{path}: {what} {value!r} is not a plain name (letters, digits, "
                           "'.', '_' and '-')")
    return value


def _own_file(path: Path, what: str, name: str) -> None:
    """A result is stored under its own name: a file copied or renamed onto another's name
    would stand for an experiment it is not."""
    if Path(path).name != f"{name}.json":
        raise ResultsError(f"{path}: its {what} is {name!r}; a result lives in {name}.json "
                           "(renamed or copied onto another result's name?)")


def read_current(path: Path) -> dict[str, Any]:
    """A JSON object of a schema this version reads, or a ResultsError."""
    data = read_object(path)
    version = data.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and \
            migrate.OLDEST <= version < SCHEMA_VERSION:
        try:
            return migrate.upgrade(data, version)  # read as the current schema: figures unchanged
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise ResultsError(f"{path}: cannot be read as schema {SCHEMA_VERSION} "
                               f"({type(error).__name__}: {error})") from None
    if version != SCHEMA_VERSION:
        raise ResultsError(f"{path}: unknown schema_version {version!r}; this version of the "
                           f"generator reads schemas {migrate.OLDEST} to {SCHEMA_VERSION}")
    return data


def read_object(path: Path) -> dict[str, Any]:
    """A file's JSON object, of any schema, or a ResultsError naming the file."""
    try:
        text = read_limited(Path(path), MAX_RESULT_BYTES).decode("utf-8")
    except OSError as error:
        raise ResultsError(f"{path}: cannot read ({error.strerror})") from None
    except UnicodeDecodeError as error:
        raise ResultsError(f"{path}: not a JSON text file (bytes that are not UTF-8 at "
                           f"offset {error.start}); delete it to measure again") from None
    except ValueError as error:  # a device, a FIFO, a huge file
        raise ResultsError(f"{path}: {error}, not a result") from None
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise ResultsError(f"{path}: not valid JSON ({error.msg} at line {error.lineno}, "
                           f"column {error.colno}); delete it to measure again") from None
    except (ValueError, RecursionError) as error:  # NaN, a 5,000-digit number, [[[[…]]]]
        reason = "nested too deep" if isinstance(error, RecursionError) else \
            str(error).splitlines()[0][:80]
        raise ResultsError(f"{path}: not a result ({reason}); delete it to measure "
                           "again") from None
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: a result must be a JSON object")
    return data


def _fill_later_categories(data: dict[str, Any]) -> None:
    """A result stored before a category existed had no bytes in it: fill in zeros, so that
    older results read like new ones (and pages can index every category)."""
    timeline = data.get("timeline")
    series = timeline.get("bytes") if isinstance(timeline, dict) else None
    for cat in LATER_CATEGORIES:
        for name in ("live_at_peak_bytes", "category_max_bytes"):
            if isinstance(data.get(name), dict):
                data[name].setdefault(cat, 0)
        if isinstance(series, dict) and isinstance(timeline.get("tick"), list):
            series.setdefault(cat, [0] * len(timeline["tick"]))
        for phase in (data.get("phase_max_bytes") or {}).values():
            if isinstance(phase, dict):
                phase.setdefault(cat, 0)


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is no measurement")


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT


def _all_counts(values: list[Any]) -> bool:
    """_is_count of every value, at a fraction of its time: timelines hold most of the
    numbers of a result, and loading every result is on the render path. (type() is int:
    True is no count; JSON makes no other subclass of int.)"""
    return all(type(v) is int for v in values) and \
        (not values or (min(values) >= 0 and max(values) <= MAX_COUNT))


def _type_problem(data: dict[str, Any], figures: bool) -> str | None:
    """The first field of the wrong type, described; None if all are right."""
    for name in ("experiment", "environment"):
        if not isinstance(data[name], dict):
            return f"field {name} must be an object"
    if data["error"] is not None and not isinstance(data["error"], str):
        return "field error must be a string or null"
    if not figures:
        return None
    for name in ("peak_bytes", "parameter_count"):
        if not _is_count(data[name]):
            return f"field {name} must be a non-negative integer below 2**63, " \
                   f"got {shown(data[name])}"
    trainable = data.get("trainable_parameter_count")
    if trainable is not None and not _is_count(trainable):
        return f"field trainable_parameter_count must be a non-negative integer or null, " \
               f"got {trainable!r}"
    for name in ("live_at_peak_bytes", "category_max_bytes"):
        value = data[name]
        if not isinstance(value, dict) or set(value) != set(CATEGORIES) or \
                not all(_is_count(v) for v in value.values()):
            return f"field {name} must map each of {', '.join(CATEGORIES)} to a byte count"
    modules = data["module_activation_bytes"]
    if not isinstance(modules, dict) or not all(_is_count(v) for v in modules.values()):
        return "field module_activation_bytes must map block names to byte counts"
    return _timeline_problem(data["timeline"]) or _optional_problem(data) or \
        _allocator_problem(data.get("allocator"))


def _timeline_problem(timeline: Any) -> str | None:
    """The charts index every category's series by tick: all must be there, equally long."""
    if not isinstance(timeline, dict) or not isinstance(timeline.get("tick"), list) or \
            not isinstance(timeline.get("bytes"), dict):
        return "field timeline must hold a tick list and a bytes object"
    ticks, series = timeline["tick"], timeline["bytes"]
    if not _all_counts(ticks) or not _is_count(timeline.get("end_tick")):
        return "field timeline must hold tick counts and an end_tick count"
    if set(series) != set(CATEGORIES) or not all(
            isinstance(v, list) and len(v) == len(ticks) and _all_counts(v)
            for v in series.values()):
        return (f"field timeline.bytes must map each of {', '.join(CATEGORIES)} to one byte "
                "count per tick")
    return None


def _optional_problem(data: dict[str, Any]) -> str | None:
    """Optional fields that pages read, when present, must have the right shape too."""
    phases = data.get("phases", [])
    if not isinstance(phases, list) or not all(
            isinstance(p, dict) and isinstance(p.get("name"), str) and _is_count(p.get("tick"))
            for p in phases):
        return "field phases must be a list of {name, tick} objects"
    truth = data.get("ground_truth")
    if truth is not None and (not isinstance(truth, dict) or not all(
            _is_count(v) for k, v in truth.items() if k.endswith("_bytes"))):
        return "field ground_truth must be null or an object of byte counts"
    attention = data.get("attention")
    if attention is not None and not isinstance(attention, str):
        return f"field attention must be a string or null, got {attention!r}"
    seconds = data.get("step_seconds")
    if seconds is not None and (isinstance(seconds, bool) or
                                not isinstance(seconds, (int, float)) or
                                not 0 <= seconds <= MAX_COUNT):
        return f"field step_seconds must be null or a non-negative number, got {shown(seconds)}"
    phases = data.get("phase_max_bytes", {})
    if not isinstance(phases, dict) or not all(
            isinstance(most, dict) and all(_is_count(v) for v in most.values())
            for most in phases.values()):
        return "field phase_max_bytes must map phases to objects of byte counts"
    return None


#: The simulated allocator's figures that pages read, each a byte count (or a count).
_ALLOCATOR_COUNTS = ("peak_allocated_bytes", "peak_reserved_bytes", "workspace_bytes")


def _allocator_problem(allocator: Any) -> str | None:
    """An estimate's allocator figures (shapes.AllocatorPrediction), when there are any."""
    if allocator is None:
        return None
    others = allocator.get("other_workspaces", []) if isinstance(allocator, dict) else []
    parts = [allocator] + (others if isinstance(others, list) else [None])
    if not all(isinstance(part, dict) and all(_is_count(part.get(name))
                                              for name in _ALLOCATOR_COUNTS) for part in parts):
        return f"field allocator must hold {', '.join(_ALLOCATOR_COUNTS)} as byte counts " \
               "(and so must each of its other_workspaces)"
    for name in ("context_bytes", "communicator_bytes"):
        pair = allocator.get(name, [0, 0] if name == "communicator_bytes" else None)
        if not isinstance(pair, list) or len(pair) != 2 or not all(map(_is_count, pair)) \
                or pair[0] > pair[1]:
            return f"field allocator.{name} must be two byte counts, low and high"
    if allocator.get("out_of_memory") is not None and \
            not isinstance(allocator["out_of_memory"], str):
        return "field allocator.out_of_memory must be a string or null"
    return None


STUDY_FIELDS = ("schema_version", "study", "environment", "method_version", "error", "data")


def study_path(results_dir: Path, machine_id: str, name: str) -> Path:
    """Studies live apart from step results: `<results>/studies/<machine-id>/<name>.json`."""
    return result_path(Path(results_dir) / "studies", machine_id, name)


def load_study(path: Path) -> StudyResult:
    """Read and check one study result; every defect is a ResultsError naming the file."""
    data = read_current(path)
    missing = [name for name in STUDY_FIELDS if name not in data]
    if missing:
        raise ResultsError(f"{path}: missing field(s) {', '.join(missing)}")
    if not isinstance(data["study"], dict) or not isinstance(data["data"], dict) or \
            not isinstance(data["environment"], dict):
        raise ResultsError(f"{path}: fields study, environment and data must be objects")
    _own_file(path, "study name", _safe_name(path, "study name", data["study"].get("name")))
    study = data["study"]
    if not isinstance(study.get("kind"), str) or not isinstance(study.get("backend"), str):
        raise ResultsError(f"{path}: fields study.kind and study.backend must be strings")
    if data["error"] is not None and not isinstance(data["error"], str):
        raise ResultsError(f"{path}: field error must be a string or null")
    problem = study_data.problem(study["kind"], data["data"]) if data["error"] is None else None
    if problem:
        raise ResultsError(f"{path}: {problem}")
    data["environment"] = {**data["environment"],
                           "machine_id": _safe_name(path, "folder name", Path(path).parent.name)}
    return data


def load_studies(results_dir: Path) -> list[StudyResult]:
    """Every study result under `results_dir`, sorted by machine and name."""
    return [study for _, study in load_studies_with_paths(results_dir)]


#: Where results lie under a results folder: steps, and studies apart (result_path, study_path).
STEP_FILES, STUDY_FILES = "*/*.json", "studies/*/*.json"


def stored_files(results_dir: Path) -> list[Path]:
    """Every file laid out as a stored result or study under `results_dir`, sorted."""
    folder = Path(results_dir)
    return sorted(folder.glob(STEP_FILES)) + sorted(folder.glob(STUDY_FILES))


def load_studies_with_paths(results_dir: Path) -> list[tuple[Path, StudyResult]]:
    """Every study result under `results_dir` with its file, sorted by machine and name."""
    return [(p, load_study(p)) for p in sorted(Path(results_dir).glob(STUDY_FILES))]


def load_all_with_paths(results_dir: Path) -> list[tuple[Path, StepResult]]:
    """Every result under `results_dir` with its file, sorted by machine and key."""
    return [(path, load(path)) for path in sorted(Path(results_dir).glob(STEP_FILES))]


def load_all(results_dir: Path) -> list[StepResult]:
    """Every result under `results_dir`, sorted by machine and key for stable output."""
    return [result for _, result in load_all_with_paths(results_dir)]


def rewrite_older(folder: Path) -> list[Path]:
    """Every result and study result under `folder` of an older schema, written again as the
    current schema keeps it (atomically; migrate.upgrade); the files rewritten. Every file is
    read first: one that is no result refuses the whole folder (a ResultsError), before any
    is written."""
    found = []
    for path in sorted(Path(folder).rglob("*.json")):
        version = read_object(path).get("schema_version")
        if isinstance(version, int) and migrate.OLDEST <= version < SCHEMA_VERSION:
            found.append((path, read_current(path)))  # upgraded as load reads it
    for path, data in found:
        save(path, data)
    return [path for path, _ in found]
