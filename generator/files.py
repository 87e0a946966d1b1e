"""Writing a file whole or not at all: results and pages alike."""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from generator.errors import OutputError

TEMP_GLOB = ".*.tmp"  # what write_atomic writes before the rename
#: Where results are stored by default, relative to the project: one copy, in the site's data
#: folder, which the pages link and mkdocs publishes as it is (`<machine-id>/<key>.json`,
#: `studies/<machine-id>/<name>.json`).
RESULTS_DIR = Path("docs") / "data"


def read_limited(path: Path, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes: files that people send are read
    whole, so a device (/dev/zero never ends), a FIFO (blocks until written to) or a huge
    file is refused before it is read. Raises OSError where the file cannot be read, and
    ValueError saying which of these it is."""
    if not stat.S_ISREG(os.stat(path).st_mode):  # follows a symbolic link, as open does
        raise ValueError("not a regular file")
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"larger than {limit // 2**20} MiB")
    return data


def write_atomic(path: Path, text: str | bytes, *, what: str, durable: bool = False) -> Path:
    """Write `text` (UTF-8; or bytes as they are) via a temporary file in the same folder
    renamed into place, so a reader or an interrupted run never sees half a file; `what`
    names the output in errors. durable: fsync before the rename (results, which cost
    minutes to measure again). A file that already holds `text` is left alone, so its mtime
    stays."""
    path = Path(path)
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    if path.is_file() and path.read_bytes() == data:
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _create_temp(path)
    except OSError as error:
        raise OutputError(f"cannot write {what} to {path.parent}: "
                          f"{error.strerror or error}") from None
    try:
        opened = (os.fdopen(fd, "wb") if isinstance(text, bytes)
                  else os.fdopen(fd, "w", encoding="utf-8"))
        with opened as handle:
            handle.write(text)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _create_temp(path: Path) -> tuple[int, Path]:
    """A new, empty temporary file beside `path` (matching TEMP_GLOB), opened for writing.
    Made with mode 0o666, which the process's umask narrows as for any file it creates:
    tempfile.mkstemp makes 0o600, and results and pages are files others read."""
    while True:
        tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:  # another writer's name: draw again
            continue
