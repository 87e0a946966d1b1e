"""How an experiment option is declared: once, as metadata on its field of `Experiment`.

From one declaration come the `estimate` command's flag (choices, default, help), the part of
the experiment's key and of its progress label that names a non-default value, the words
pages use for it in both languages, and, for a lever, the value of the levers page's
baseline. `generator/experiment.py` declares the options; nothing else restates them.
"""

from __future__ import annotations

import re
from dataclasses import MISSING, Field, dataclass, field
from typing import Any, Callable

from generator import units
from generator.words import Words, same

#: Not a lever: the levers page never varies it.
NOT_A_LEVER = object()


@dataclass(frozen=True)
class Option:
    """One experiment field, as users give it and readers see it."""

    help: str
    """What it does, for --help."""
    choices: tuple | None = None
    """The values it takes, or None for numbers and free text."""
    cli: bool = True
    """Whether the `estimate` command takes it as a flag (--name-with-dashes)."""
    short: str | None = None
    """A one-letter flag beside the long one (-b for --batch-size), for the options every
    command line gives."""
    metavar: str | None = None
    parse: Callable[[str], Any] | None = None
    """Reads the flag's text (e.g. a size such as 24GiB)."""
    step_option: bool = False
    """Beyond a plain training step: named in the key, the label and report headings when
    it differs from its default; results of plain steps are what the article is about."""
    tag: Callable[[Any], str] | None = None
    """Its part of the key when not the default (step options only)."""
    label: Callable[[Any], str] | None = None
    """Its word in progress lines when not the default (step options only)."""
    words: Callable[[Any], Words] | None = None
    """How pages name a non-default value, in both languages (step options only)."""
    lever: Any = NOT_A_LEVER
    """The value the levers page's baseline uses; NOT_A_LEVER for other options."""


def option(default: Any = MISSING, **declaration: Any) -> Any:
    """A dataclass field carrying its Option; without a default the field is required."""
    return field(default=default, metadata={"option": Option(**declaration)})


def option_of(f: Field) -> Option | None:
    return f.metadata.get("option")


# -- values in words -------------------------------------------------------------------------
_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str) -> int:
    """'24GiB' → bytes. Decimal (GB) and binary (GiB) units; a bare number means GiB."""
    from generator.errors import ConfigError

    match = _SIZE.match(text)
    if not match:
        raise ConfigError(f"cannot read memory size {text!r}; write e.g. 24GiB or 80GB")
    number, unit = float(match.group(1)), match.group(2).lower() or "gib"
    if unit not in _UNITS:
        raise ConfigError(f"unknown memory unit {match.group(2)!r} in {text!r}; "
                          "use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB")
    size = int(number * _UNITS[unit])
    if size <= 0:
        raise ConfigError(f"memory size must be positive, got {text!r}")
    return size


def size_text(nbytes: int) -> str:
    """1048576 → '1 MiB': a budget in a progress line, readable beside two like it."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= size:
            return f"{nbytes / size:.4g} {unit}"
    return f"{nbytes} B"


def size_tag(nbytes: int) -> str:
    """24 GiB → '24gib'; sizes that are no whole GiB or MiB stay in bytes."""
    for unit, size in (("gib", 2**30), ("mib", 2**20)):
        if isinstance(nbytes, int) and nbytes % size == 0:
            return f"{nbytes // size}{unit}"
    return f"{nbytes}b"


def budget_words(nbytes: int) -> Words:
    return Words(f"budget {units.size(nbytes)}", f"显存预算 {units.size(nbytes)}")


def resolved_optimizer_impl(impl: str, device: str) -> str:
    """"auto" is what PyTorch itself picks on the device: foreach kernels on CUDA, the
    for-loop on the CPU."""
    if impl != "auto":
        return impl
    return "foreach" if device == "cuda" else "for-loop"


__all__ = ["NOT_A_LEVER", "Option", "option", "option_of", "parse_size", "same",
           "resolved_optimizer_impl"]
