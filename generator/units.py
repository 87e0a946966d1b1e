"""How sizes, shares and durations are printed everywhere (pages, charts, the command line): binary
units (1 MiB = 2²⁰ bytes, as PyTorch and nvidia-smi count), thousands separators, and '–'
for a missing value."""

from __future__ import annotations

import math
from collections.abc import Callable


def mib(nbytes: float | None) -> str:
    """Bytes → MiB, number only: '1,024.0'; -0.0 prints as 0.0."""
    return "–" if nbytes is None else f"{round(nbytes / 2**20, 1) + 0.0:,.1f}"


def gib(nbytes: float | None) -> str:
    """Bytes → GiB, number only: '5.64'; -0.00 prints as 0.00."""
    return "–" if nbytes is None else f"{round(nbytes / 2**30, 2) + 0.0:,.2f}"


def size(nbytes: int | None) -> str:
    """With its unit: MiB as a rule, GiB from 1 GiB on, KiB and B for tiny models."""
    if nbytes is None:
        return "–"
    if nbytes >= 2**30:
        return f"{gib(nbytes)} GiB"
    if nbytes >= 2**20:
        return f"{mib(nbytes)} MiB"
    return f"{nbytes / 2**10:,.1f} KiB" if nbytes >= 2**10 else f"{nbytes} B"


def print_alike(a: int | None, b: int | None,
                unit: Callable[[int | None], str] = size) -> bool:
    """Whether two sizes print the same in `unit` (`size` by default; `gib`, `mib`): a page
    then says "the same" instead of printing one figure twice as if they differed. The one
    test of sameness every page's sentences use."""
    return unit(a) == unit(b)


def pct(fraction: float | None, digits: int = 1) -> str:
    """A share or saving in percent; -0.0 prints as 0.0."""
    if fraction is None:
        return "–"
    return f"{round(fraction * 100, digits) + 0.0:.{digits}f} %"


def pct_figures(fraction: float | None, figures: int = 2) -> str:
    """A small deviation in percent to `figures` significant figures, so that 0.004 % does
    not print as 0.00 %; at least as many decimals as pct(…, 2)."""
    if fraction is None or fraction == 0:
        return pct(fraction, 2)
    magnitude = math.floor(math.log10(abs(fraction * 100)))
    return pct(fraction, max(2, figures - 1 - magnitude))


def gb(nbytes: float | None) -> str:
    """Bytes → decimal GB, for setting our figures beside the article's (it writes GB)."""
    if nbytes is None:
        return "–"
    value = nbytes / 1e9
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"  # '12', '13.7', '6.05'


def mb(nbytes: float | None) -> str:
    """Bytes → decimal MB, the article's unit for small figures."""
    return "–" if nbytes is None else f"{nbytes / 1e6:,.0f}"


def format_bytes(nbytes: float) -> str:
    """Binary units, as PyTorch and nvidia-smi count: 1 GiB = 1024³ bytes."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{int(nbytes)} B"


def duration(seconds: float) -> str:
    """A rough length of time, for saying how long something would take: '40 seconds',
    '3 hours', '16 years' (whole units, the largest that fits)."""
    for unit, length in (("year", 365 * 86400), ("day", 86400), ("hour", 3600),
                         ("minute", 60)):
        if seconds >= length:
            count = round(seconds / length)
            return f"{count:,} {unit}{'s' if count != 1 else ''}"
    return f"{round(seconds)} second{'s' if round(seconds) != 1 else ''}"
