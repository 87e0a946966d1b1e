"""The exceptions a user can provoke, in one tree.

    GeneratorError            a user mistake: printed as one line, exit status 2
    ├── ConfigError           a bad experiment, option or experiments.toml
    ├── ModelError            an unknown model, or a user model that cannot be built or run
    ├── BackendUnavailable    a backend this machine lacks (cuda without a GPU)
    ├── ResultsError          a results folder or file that cannot be read or is of an
    │                         unknown schema
    ├── OutputError           an output folder that cannot be written
    ├── SiteBuildError        mkdocs refused to build the site
    └── UnmodelledError       a script run on the simulated GPU calls what it cannot model
                              (a custom CUDA extension, a Triton kernel)

Anything else that escapes is a bug in this tool and keeps its traceback. A worker process
sends a user mistake back to the runner as its class name and message (`to_payload`), and
the runner raises the same class again (`from_payload`).
"""

from __future__ import annotations


class GeneratorError(Exception):
    """A mistake in what the user asked for; the message is one line that names it."""


class ConfigError(GeneratorError):
    """An experiment, a command-line option or experiments.toml is invalid."""


class ModelError(GeneratorError):
    """A model name is unknown, or a user model cannot be imported, built or run."""


class BackendUnavailable(GeneratorError):
    """The backend cannot run on this machine (e.g. cuda without a GPU)."""


class ResultsError(GeneratorError):
    """A results folder is missing or empty, or a results file is unreadable, truncated, or
    of a schema this version does not know."""


class OutputError(GeneratorError):
    """An output folder is missing or not writable."""


class SiteBuildError(GeneratorError):
    """mkdocs refused to build the site (a warning under --strict, or a bad config)."""


class UnmodelledError(GeneratorError):
    """A script run on the simulated GPU (generator/simulate) calls what the simulation
    cannot model: a custom CUDA extension, a Triton kernel."""


def shown(value: object) -> str:
    """A value as a one-line message quotes it: its repr, cut short (a 400-digit number or a
    nested list from a hostile file is not read out in full)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _tree(cls: type) -> dict[str, type]:
    found = {cls.__name__: cls}
    for sub in cls.__subclasses__():
        found.update(_tree(sub))
    return found


def to_payload(error: GeneratorError) -> dict[str, str]:
    """A user mistake as JSON, to cross a process boundary."""
    return {"type": type(error).__name__, "message": str(error)}


def from_payload(payload: dict[str, str]) -> GeneratorError:
    """The mistake `to_payload` sent, as the same class (GeneratorError if unknown)."""
    cls = _tree(GeneratorError).get(payload.get("type", ""), GeneratorError)
    return cls(payload.get("message", "unknown error"))
