"""Output folders that cannot be written, run in this process: each command checks its
folders before it works (a build before minutes of measuring), refuses on one line that names
the folder (conftest.assert_refused), and leaves everything as it was, the blocker included.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import assert_refused

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
