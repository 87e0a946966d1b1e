"""Output folders this tool may empty: the pages folder `render` fills and the site folder
mkdocs builds, each known by a marker file of its own.

Both remove what they find: `render` the files under data/, en/ and zh/ that it did not write
this time (so that no page lingers without data), mkdocs everything in the site folder
(`--clean`). Pointed at the wrong folder, `site --site results` deleted every committed
result and exited 0. So a command writes only into a folder that does not exist yet, is empty,
or holds its marker, which it writes when it takes the folder; anything else is refused
before a file is touched. The repository's docs/ commits its marker (beside the hand-written
assets/); site/ gets one on its first build. Hidden entries do not count: mkdocs never
removes them, and the markers are hidden (mkdocs neither publishes nor cleans them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generator.errors import OutputError


@dataclass(frozen=True)
class Owner:
    """A kind of output folder: its marker, and what the folder holds, in words."""

    marker: str
    what: str
    note: str
    """The marker's text: what it means, for whoever finds the file."""


PAGES = Owner(".generator-pages", "pages",
              "Written by `python -m generator render`, which writes into this folder only while "
              "this file is here, and replaces data/, en/, zh/ and .nav.yml on each render.\n")
SITE = Owner(".generator-site", "the site",
             "Written by `python -m generator site`, which builds into this folder only while "
             "this file is here, and empties it first (mkdocs build --clean).\n")


def check_folder(folder: Path, owner: Owner) -> None:
    """Refuse `folder` unless it is new, empty or marked as `owner`'s; writes nothing."""
    folder = Path(folder)
    if not folder.exists() or (folder / owner.marker).is_file():
        return
    if not folder.is_dir():
        raise OutputError(f"cannot write {owner.what} to {folder}: it is a file, not a folder")
    if any(not entry.name.startswith(".") for entry in folder.iterdir()):
        raise OutputError(f"refusing to write {owner.what} into {folder}: it holds files this "
                          f"tool did not write there (no {owner.marker}); give a new or empty "
                          "folder")


def claim_folder(folder: Path, owner: Owner) -> None:
    """Check `folder`, then create it with `owner`'s marker where it has none."""
    check_folder(folder, owner)
    marker = Path(folder) / owner.marker
    if not marker.is_file():
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(owner.note, encoding="utf-8")
        except OSError as error:
            raise OutputError(f"cannot write {owner.what} to {folder}: "
                              f"{error.strerror or error}") from None
