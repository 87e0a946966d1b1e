"""Bad input, the cases tests/test_cli.py does not cover: each ends as ONE line on stderr that
names the problem, exit status 2, and leaves results/, docs/ (and site/) as they were.

Covered in test_cli.py already: unknown model, precision and optimizer on the command line;
batch size and sequence length 0, negative or non-integer on the command line; a sequence
longer than the model allows; malformed TOML (line); user factories that raise, are not
callable or return the wrong shape; truncated, unknown-schema, missing-field and wrongly
typed results files; a results or docs folder that cannot be written; an unknown unit in
--gpu-memory. Here: the same mistakes in experiments.toml, sizes no tensor can have, a TOML
error's column, files that are no UTF-8 text, an incomplete timeline, and a site folder (or
docs folder) that cannot be written when `build` would only notice after measuring.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import run_cli, tree_state

PAST = 1_000_000_000  # an mtime no write during a test can produce
CATEGORIES = ("parameters", "gradients", "optimizer_state", "activations",
              "autocast_copies", "temporaries")

#: One experiment table per mistake: a suite's problems are all reported on one line.
BAD_TABLES = {
    'model = "nosuchmodel"': "unknown model 'nosuchmodel'",
    'precision = "fp8"': "unknown precision 'fp8'",
    'optimizer = "lion"': "unknown optimizer 'lion'",
    "batch_size = 0": "batch_size must be a positive integer, got 0",
    "batch_size = -3": "batch_size must be a positive integer, got -3",
    "batch_size = 1.5": "batch_size must be a positive integer, got 1.5",
    'batch_size = "two"': "batch_size must be a positive integer, got 'two'",
    "seq_len = 0": "seq_len must be a positive integer, got 0",
    "seq_len = 2.5": "seq_len must be a positive integer, got 2.5",
    "seq_len = 4096": "seq_len 4096 is longer than tiny allows (128 positions)",
    "batch_size = 9223372036854775807\nseq_len = 9223372036854775807":
        "seq_len 9223372036854775807 is longer than tiny allows",
    "batch_size = []": "batch_size = [] gives no experiment",
    'gpu_memory = "24XB"': "unknown memory unit 'XB' in '24XB'",
    'gpu_memory = "-1GiB"': "cannot read memory size '-1GiB'",
    "learning_rate = 0.1": "unknown experiment field(s) learning_rate",
}


def _table(line: str) -> str:
    fields = {"model": '"tiny"', "batch_size": "2", "seq_len": "16"}
    for one in line.splitlines():
        name, value = one.split(" = ", 1)
        fields[name] = value
    return "[[experiment]]\n" + "".join(f"{k} = {v}\n" for k, v in fields.items())


@pytest.fixture
def seeded(project: Path) -> Path:
    """results/ and docs/ hold something (with old mtimes) that bad input must not touch."""
    cats = dict.fromkeys(CATEGORIES, 0)
    stored = project / "results" / "estimate" / "tiny-b2-s16-fp32-adamw-estimate.json"
    stored.parent.mkdir(parents=True)
    stored.write_text(json.dumps({
        "schema_version": 1, "key": stored.stem, "backend": "estimate", "error": None,
        "experiment": {"model": "tiny", "batch_size": 2, "seq_len": 16},
        "environment": {"torch": "0.0-test"}, "peak_bytes": 0, "parameter_count": 1,
        "live_at_peak_bytes": cats, "category_max_bytes": cats, "module_activation_bytes": {},
        "timeline": {"tick": [], "end_tick": 0, "bytes": {c: [] for c in CATEGORIES}}}))
    page = project / "docs" / "index.md"
    page.write_text("# an old page\n", encoding="utf-8")
    for path in (stored, page):
        os.utime(path, (PAST, PAST))
    return project


def run_bad(root: Path, args: list, *needles: str, watch: tuple[str, ...] = ()) -> str:
    """Run the CLI; expect exit 2, one line on stderr holding every needle, and results/,
    docs/, site/ (and the `watch` paths) exactly as before."""
    paths = [root / name for name in ("results", "docs", "site", *watch)]
    before = [tree_state(p) for p in paths]
    proc = run_cli(args, root)
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, f"exit {proc.returncode}, stderr:\n{proc.stderr}"
    assert len(lines) == 1, f"expected one line on stderr, got:\n{proc.stderr}"
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    for path, state in zip(paths, before):
        assert tree_state(path) == state, f"{path.name}/ changed"
    return lines[0]


# --------------------------------------------------------------------------- experiments.toml


def test_every_mistake_of_a_suite_on_one_line(seeded: Path) -> None:
    (seeded / "bad.toml").write_text("\n".join(_table(t) for t in BAD_TABLES), encoding="utf-8")
    line = run_bad(seeded, ["measure", "--config", "bad.toml"], "bad.toml",
                   *BAD_TABLES.values())
    for number in range(1, len(BAD_TABLES) + 1):
        assert f"experiment {number}:" in line, number


def test_malformed_toml_names_line_and_column(seeded: Path) -> None:
    (seeded / "bad.toml").write_text(
        '[[experiment]]\nmodel = "tiny"\nbatch_size = = 2\nseq_len = 8\n', encoding="utf-8")
    run_bad(seeded, ["build", "--config", "bad.toml"], "bad.toml", "line 3, column 14")


def test_toml_that_is_not_utf8(seeded: Path) -> None:
    (seeded / "latin1.toml").write_bytes('[[experiment]]\nmodel = "tïny"\n'.encode("latin-1"))
    run_bad(seeded, ["measure", "--config", "latin1.toml"], "latin1.toml", "UTF-8")


def test_single_bracket_table(seeded: Path) -> None:
    (seeded / "one.toml").write_text('[experiment]\nmodel = "tiny"\nbatch_size = 2\n'
                                     'seq_len = 16\n', encoding="utf-8")
    run_bad(seeded, ["measure", "--config", "one.toml"], "one.toml", "[[experiment]]")


# --------------------------------------------------------------------------- sizes and models


def test_batch_larger_than_any_tensor(seeded: Path) -> None:
    run_bad(seeded, ["estimate", "tiny", "--batch-size", str(2**64), "--seq-len", "8"],
            "batch_size", str(2**64), "2⁶³")


def test_batch_whose_tensors_overflow(seeded: Path) -> None:
    """Each size fits in int64 but the logits (batch × seq × vocab) do not: the estimate
    must say so, not print PyTorch's traceback."""
    run_bad(seeded, ["estimate", "tiny", "--batch-size", str(10**15), "--seq-len", "128"],
            "batch_size 1000000000000000", "seq_len 128", "tiny")


def test_estimate_of_a_model_module_that_does_not_import(seeded: Path) -> None:
    run_bad(seeded, ["estimate", "--model", "no_such_pkg.models:build",
                     "--batch-size", "2", "--seq-len", "4"],
            "no_such_pkg.models", "ModuleNotFoundError")


def test_estimate_of_a_missing_factory(seeded: Path) -> None:
    run_bad(seeded, ["estimate", "--model", "json:no_such_function",
                     "--batch-size", "2", "--seq-len", "4"], "json:no_such_function", "not found")


# --------------------------------------------------------------------------- results files


def _bad_result(root: Path, name: str, content: bytes) -> None:
    path = root / "results" / "estimate" / name
    path.write_bytes(content)
    os.utime(path, (PAST, PAST))


@pytest.mark.parametrize(("content", "needle"), [
    (b"\x89PNG\r\n\x1a\n\x00\x00", "UTF-8"),
    (b"peak_bytes = 12\n", "not valid JSON"),
    (b"", "not valid JSON"),
    (b"[1, 2]", "JSON object"),
], ids=["binary", "toml-not-json", "empty", "a-list"])
def test_render_refuses_a_file_that_is_not_a_json_object(seeded: Path, content: bytes,
                                                        needle: str) -> None:
    _bad_result(seeded, "bad.json", content)
    run_bad(seeded, ["render"], "bad.json", needle)


def test_render_refuses_an_incomplete_timeline(seeded: Path) -> None:
    stored = seeded / "results" / "estimate" / "tiny-b2-s16-fp32-adamw-estimate.json"
    data = json.loads(stored.read_text())
    data["timeline"] = {"tick": [0, 1], "bytes": {c: [0, 1] for c in CATEGORIES}}  # no end_tick
    _bad_result(seeded, "short.json", json.dumps(data).encode())
    run_bad(seeded, ["render"], "short.json", "end_tick")


def test_render_refuses_a_study_of_an_unknown_schema(seeded: Path) -> None:
    path = seeded / "results" / "studies" / "cpu-test" / "future.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"schema_version": 7}', encoding="utf-8")
    os.utime(path, (PAST, PAST))
    run_bad(seeded, ["render"], "future.json", "schema_version 7")


# --------------------------------------------------------------------------- output folders


@pytest.mark.parametrize("option", ["--docs", "--site", "--results"])
def test_build_checks_every_output_folder_before_measuring(seeded: Path, option: str) -> None:
    """A build that would measure first and fail at the end must fail at once, having
    measured and written nothing."""
    (seeded / "blocker").write_text("a file, not a folder\n", encoding="utf-8")
    (seeded / "one.toml").write_text(_table("precision = \"amp-bf16\""), encoding="utf-8")
    run_bad(seeded, ["build", "--config", "one.toml", option, "blocker/out"],
            "blocker", "not a folder", watch=("blocker",))


def test_site_folder_is_a_file(seeded: Path) -> None:
    (seeded / "blocker").write_text("a file, not a folder\n", encoding="utf-8")
    run_bad(seeded, ["site", "--site", "blocker"], "the site", "blocker", watch=("blocker",))


def test_build_without_mkdocs_config(seeded: Path) -> None:
    (seeded / "mkdocs.yml").unlink()
    (seeded / "one.toml").write_text(_table("precision = \"amp-bf16\""), encoding="utf-8")
    run_bad(seeded, ["build", "--config", "one.toml"], "mkdocs")
