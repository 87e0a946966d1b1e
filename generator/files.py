"""Writing a file whole or not at all: results and pages alike."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from generator.errors import OutputError

TEMP_GLOB = ".*.tmp"  # what write_atomic writes before the rename


def write_atomic(path: Path, text: str, *, what: str, durable: bool = False) -> Path:
    """Write `text` via a temporary file in the same folder renamed into place, so a reader
    or an interrupted run never sees half a file; `what` names the output in errors.
    durable: fsync before the rename (results, which cost minutes to measure again).
    A file that already holds `text` is left alone, so its mtime stays."""
    path = Path(path)
    if path.is_file() and path.read_bytes() == text.encode("utf-8"):
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:
        raise OutputError(f"cannot write {what} to {path.parent}: "
                          f"{error.strerror or error}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
