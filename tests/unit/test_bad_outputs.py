"""Output folders that cannot be written, run in this process: each command checks its
folders before it works (a build before minutes of measuring), refuses on one line that names
the folder (conftest.assert_refused), and leaves everything as it was, the blocker included.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO_ROOT, assert_refused
from made_results import write_old

from generator.errors import OutputError
from generator.site import owned

ONE_ESTIMATE = '[[experiment]]\nmodel = "tiny"\nbatch_size = 2\nseq_len = 16\n'


@pytest.fixture
def blocked(seeded: Path) -> Path:
    """The seeded project with `one.toml` and `blocker`, a file where a folder would go."""
    (seeded / "one.toml").write_text(ONE_ESTIMATE, encoding="utf-8")
    (seeded / "blocker").write_text("a file, not a folder\n", encoding="utf-8")
    return seeded


@pytest.mark.parametrize("args", [
    ["measure", "--config", "one.toml", "--results", "blocker"],
    ["measure", "--config", "one.toml", "--results", "blocker/deeper"],
    ["render", "--docs", "blocker"],
    ["site", "--site", "blocker"],
], ids=["measure-results", "measure-below-a-file", "render-docs", "site"])
def test_an_output_folder_that_is_a_file(cli, blocked: Path, args: list[str]) -> None:
    """Unwritable even for root: the path is an ordinary file."""
    assert_refused(cli, blocked, args, "blocker", watch=("blocker",))


@pytest.mark.parametrize("option", ["--docs", "--site", "--results"])
def test_build_checks_every_output_folder_before_measuring(cli, blocked: Path,
                                                           option: str) -> None:
    """A build that would measure first and fail at the end must fail at once, having
    measured and written nothing."""
    assert_refused(cli, blocked, ["build", "--config", "one.toml", option, "blocker/out"],
                   "blocker", "not a folder", watch=("blocker",))


def test_build_without_mkdocs_config(cli, blocked: Path) -> None:
    (blocked / "mkdocs.yml").unlink()
    assert_refused(cli, blocked, ["build", "--config", "one.toml"], "mkdocs")


def test_results_folder_not_writable(cli, blocked: Path) -> None:
    target = blocked / "readonly"
    target.mkdir()
    target.chmod(0o555)
    try:
        try:
            (target / ".probe").write_text("x")
        except OSError:
            pass
        else:
            (target / ".probe").unlink()
            pytest.skip("running as root (or with CAP_DAC_OVERRIDE): chmod 0o555 does not stop "
                        "writes, so a read-only folder cannot be made here")
        assert_refused(cli, blocked, ["measure", "--config", "one.toml", "--results", "readonly"],
                       "readonly", watch=("readonly",))
    finally:
        target.chmod(0o755)


# --------------------------------------------------------------------------- folders not ours


@pytest.fixture
def occupied(seeded: Path) -> Path:
    """The seeded project with `mine/notes.txt`: a folder of someone else's."""
    (seeded / "one.toml").write_text(ONE_ESTIMATE, encoding="utf-8")
    write_old(seeded / "mine" / "notes.txt", "not the tool's\n")
    return seeded


@pytest.mark.parametrize("args", [
    ["render", "--docs", "mine"],
    ["site", "--site", "mine"],
    ["site", "--site", "docs/data"],  # mkdocs --clean would empty it
    ["site", "--site", "docs"],     # render's, not the site's
    ["build", "--config", "one.toml", "--docs", "mine"],
    ["build", "--config", "one.toml", "--site", "mine"],
], ids=["render-docs", "site", "site-into-results", "site-into-docs", "build-docs", "build-site"])
def test_a_folder_holding_files_the_tool_did_not_write(cli, occupied: Path,
                                                       args: list[str]) -> None:
    """Refused on one line before anything is written (a build before measuring), every
    file in it left as it was."""
    folder = args[-1]
    assert_refused(cli, occupied, args, folder, "did not write", watch=("mine",))
    assert not (occupied / "site").exists()


def test_a_new_or_empty_folder_is_taken_and_then_its_owners(tmp_path: Path) -> None:
    """A folder that does not exist, or holds only hidden files (mkdocs removes none), gets
    the marker; marked, it is not refused again, except by another kind of output. (A real
    render into a folder, twice: slow/test_render.py.)"""
    new, empty = tmp_path / "new" / "pages", tmp_path / "empty"
    empty.mkdir()
    (empty / ".hidden").write_text("x\n", encoding="utf-8")
    owned.claim_folder(new, owned.PAGES)
    owned.claim_folder(empty, owned.SITE)
    assert (new / owned.PAGES.marker).is_file()
    assert sorted(p.name for p in empty.iterdir()) == sorted([".hidden", owned.SITE.marker])
    (new / "page.md").write_text("# a page\n", encoding="utf-8")
    owned.check_folder(new, owned.PAGES)  # marked: its files are the tool's
    with pytest.raises(OutputError, match="did not write"):
        owned.check_folder(new, owned.SITE)


def test_the_repositorys_docs_are_renders(occupied: Path) -> None:
    """The committed docs/ (hand-written assets beside the pages) carries render's marker,
    and the default site folder, new on a fresh clone, is taken."""
    owned.check_folder(REPO_ROOT / "docs", owned.PAGES)
    owned.check_folder(occupied / "site", owned.SITE)
    with pytest.raises(OutputError, match="did not write"):
        owned.check_folder(REPO_ROOT / "docs", owned.SITE)
