"""The command line, run as a user runs it: `python -m generator …` in a subprocess.

Bad input must end as exactly one line on stderr naming the problem, exit status 2, and must
leave results/ and docs/ as they were. The working paths: models, estimate, a user model,
and an end-to-end build with reuse and --force.
"""

from __future__ import annotations

import json
import shutil
import os
import re
import textwrap
from pathlib import Path

import pytest

from conftest import run_cli, tree_state

PAST = 1_000_000_000  # an mtime (2001) that no write during a test can produce

TINY_EXPERIMENT = {"model": "tiny", "batch_size": 2, "seq_len": 16, "precision": "fp32",
                   "optimizer": "adamw", "backend": "estimate", "device": "cuda"}

ONE_ESTIMATE_TOML = """\
[[experiment]]
model = "tiny"
batch_size = 2
seq_len = 16
"""

SMALL_SUITE_TOML = """\
[[experiment]]
model = "tiny"
batch_size = 2
seq_len = 16
precision = ["fp32", "amp-bf16"]
backend = "estimate"

[[experiment]]
model = "tiny"
batch_size = 2
seq_len = 16
precision = "fp32"
backend = "cpu"

[[experiment]]
model = "tiny"
batch_size = 2
seq_len = 16
precision = "fp32"
backend = "estimate"
device = "cpu"
"""

USER_MODULE = '''\
import torch
from torch import nn

VOCAB = 50


def build():
    model = nn.Sequential(nn.Embedding(VOCAB, 8), nn.Linear(8, VOCAB))

    def make_batch(batch_size, seq_len, device):
        ids = torch.randint(0, VOCAB, (batch_size, seq_len), device=device)
        return (ids,), ids

    def loss_fn(output, target):
        return nn.functional.cross_entropy(output.reshape(-1, VOCAB), target.reshape(-1))

    return model, make_batch, loss_fn


def raises():
    raise ValueError("factory exploded on purpose")


def wrong_shape():
    return 42


not_callable = 7


def batch_is_42():
    model, _, loss_fn = build()
    return model, (lambda batch_size, seq_len, device: 42), loss_fn


def batch_raises():
    model, _, loss_fn = build()

    def make_batch(batch_size, seq_len, device):
        raise ValueError("make_batch exploded on purpose")

    return model, make_batch, loss_fn
'''


# --------------------------------------------------------------------------- helpers


def result_dict(*, figures: bool = False, **experiment) -> dict:
    """A result file's content that results.load accepts. Without figures it is the result of
    a step that did not fit (error set), which needs no figures."""
    exp = {**TINY_EXPERIMENT, **experiment}
    data = {
        "schema_version": 1,
        "key": "tiny-b2-s16-fp32-adamw-estimate",
        "experiment": exp,
        "backend": exp["backend"],
        "environment": {"machine_id": "estimate", "torch": "0.0-test"},
        "error": None if figures else "out_of_memory",
        "error_detail": None,
    }
    if figures:
        cats = ("parameters", "gradients", "optimizer_state", "activations",
                "autocast_copies", "temporaries")
        data.update(peak_bytes=6 * 2**20, live_at_peak_bytes=dict.fromkeys(cats, 2**20),
                    category_max_bytes=dict.fromkeys(cats, 2**20), timeline=[],
                    module_activation_bytes={}, parameter_count=1000)
    return data


def write_json(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    os.utime(path, (PAST, PAST))
    return path


def write_user_module(root: Path) -> None:
    (root / "userpkg").mkdir()
    (root / "userpkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "userpkg" / "mod.py").write_text(USER_MODULE, encoding="utf-8")


def assert_one_line_error(proc, *needles: str) -> str:
    """Exit status 2 and exactly one line on stderr that contains every needle."""
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, f"exit {proc.returncode}, stderr:\n{proc.stderr}"
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n{proc.stderr}"
    line = lines[0]
    assert "Traceback" not in line
    for needle in needles:
        assert needle in line, f"{needle!r} not in {line!r}"
    return line


@pytest.fixture
def seeded(project: Path) -> Path:
    """A project whose results/ and docs/ already hold something that bad input must leave
    alone (with old mtimes, so any rewrite shows)."""
    write_json(project / "results" / "estimate" / "tiny-b2-s16-fp32-adamw-estimate.json",
               result_dict())
    page = project / "docs" / "index.md"
    page.parent.mkdir(exist_ok=True)
    page.write_text("# an old page\n", encoding="utf-8")
    os.utime(page, (PAST, PAST))
    return project


class Unchanged:
    """Snapshot results/ and docs/ (and any extra folder) before a command; check after."""

    def __init__(self, root: Path, *extra: Path) -> None:
        self.paths = [root / "results", root / "docs", *extra]
        self.before = [tree_state(p) for p in self.paths]

    def check(self) -> None:
        for path, before in zip(self.paths, self.before):
            assert tree_state(path) == before, f"{path} changed"


def run_bad(root: Path, args: list, *needles: str, extra: tuple[Path, ...] = ()) -> str:
    unchanged = Unchanged(root, *extra)
    proc = run_cli(args, root)
    line = assert_one_line_error(proc, *needles)
    unchanged.check()
    return line


ESTIMATE = ["estimate", "tiny", "--batch-size", "1", "--seq-len", "8"]


# --------------------------------------------------------------------------- bad input: estimate


def test_unknown_model_names_it_and_lists_the_choices(seeded: Path) -> None:
    run_bad(seeded, ["estimate", "nosuchmodel", "--batch-size", "1", "--seq-len", "8"],
            "nosuchmodel", "bert-base", "gpt2-small", "tiny")


@pytest.mark.parametrize(("option", "value"), [("--precision", "fp8"), ("--optimizer", "lion")])
def test_unknown_choice_is_named(seeded: Path, option: str, value: str) -> None:
    run_bad(seeded, [*ESTIMATE, option, value], option, value)


@pytest.mark.parametrize("option", ["--batch-size", "--seq-len"])
@pytest.mark.parametrize("value", ["0", "-3", "abc", "1.5"])
def test_sizes_must_be_positive_integers(seeded: Path, option: str, value: str) -> None:
    args = {"--batch-size": "1", "--seq-len": "8", option: value}
    run_bad(seeded, ["estimate", "tiny", *[x for kv in args.items() for x in kv]],
            option, value, "positive integer")


def test_estimate_needs_a_model(seeded: Path) -> None:
    run_bad(seeded, ["estimate", "--batch-size", "1", "--seq-len", "8"], "model")


def test_estimate_refuses_two_different_models(seeded: Path) -> None:
    run_bad(seeded, [*ESTIMATE, "--model", "gpt2-small"], "model")


def test_sequence_longer_than_the_model_allows(seeded: Path) -> None:
    run_bad(seeded, ["estimate", "tiny", "--batch-size", "1", "--seq-len", "4096"],
            "4096", "128")


def test_unknown_memory_unit(seeded: Path) -> None:
    run_bad(seeded, [*ESTIMATE, "--gpu-memory", "24XB"], "--gpu-memory", "XB")


# --------------------------------------------------------------------------- bad input: suites


def test_malformed_toml_names_the_line(seeded: Path) -> None:
    (seeded / "bad.toml").write_text(
        '[[experiment]]\nmodel = "tiny"\nbatch_size = = 2\nseq_len = 8\n', encoding="utf-8")
    run_bad(seeded, ["measure", "--config", "bad.toml"], "bad.toml", "line 3")


def test_missing_config_file(seeded: Path) -> None:
    run_bad(seeded, ["measure", "--config", "nowhere.toml"], "nowhere.toml")


def test_every_problem_of_an_experiment_in_one_line(seeded: Path) -> None:
    (seeded / "two.toml").write_text(
        '[[experiment]]\nmodel = "tiny"\nbatch_size = 0\nseq_len = 8\nprecision = "fp8"\n',
        encoding="utf-8")
    run_bad(seeded, ["measure", "--config", "two.toml"], "two.toml", "batch_size", "fp8")


def test_unimportable_model_module(seeded: Path) -> None:
    (seeded / "nomod.toml").write_text(
        '[[experiment]]\nmodel = "no_such_pkg.mod:build"\nbatch_size = 1\nseq_len = 8\n',
        encoding="utf-8")
    run_bad(seeded, ["measure", "--config", "nomod.toml"], "no_such_pkg")


# --------------------------------------------------------------------------- user models


BAD_FACTORIES = [
    ("raises", ("userpkg.mod:raises", "ValueError", "factory exploded on purpose")),
    ("wrong_shape", ("userpkg.mod:wrong_shape", "(model, make_batch, loss_fn)", "int")),
    ("not_callable", ("userpkg.mod:not_callable", "not callable")),
]


@pytest.mark.parametrize(("factory", "needles"), BAD_FACTORIES, ids=[f for f, _ in BAD_FACTORIES])
def test_bad_user_factory_in_estimate(seeded: Path, factory: str, needles: tuple) -> None:
    write_user_module(seeded)
    run_bad(seeded, ["estimate", "--model", f"userpkg.mod:{factory}",
                     "--batch-size", "2", "--seq-len", "4"], *needles)


@pytest.mark.parametrize(("factory", "needles"), BAD_FACTORIES, ids=[f for f, _ in BAD_FACTORIES])
def test_bad_user_factory_in_measure(seeded: Path, factory: str, needles: tuple) -> None:
    """The factory is called in the measuring subprocess; its error still comes out as one
    line with exit status 2."""
    write_user_module(seeded)
    (seeded / "user.toml").write_text(
        f'[[experiment]]\nmodel = "userpkg.mod:{factory}"\nbatch_size = 2\nseq_len = 4\n',
        encoding="utf-8")
    run_bad(seeded, ["measure", "--config", "user.toml"], *needles)


def test_bad_user_make_batch_in_estimate(seeded: Path) -> None:
    """A user make_batch that returns the wrong thing is the user's mistake (user.py: "Every
    failure is a ModelError of one line"), so it should not end in a traceback."""
    write_user_module(seeded)
    run_bad(seeded, ["estimate", "userpkg.mod:batch_is_42", "--batch-size", "2", "--seq-len", "4"],
            "userpkg.mod:batch_is_42")


def test_bad_user_make_batch_in_measure(seeded: Path) -> None:
    """The same, in the measuring subprocess: one line and exit 2, not a 'failed' outcome."""
    write_user_module(seeded)
    (seeded / "user.toml").write_text(
        '[[experiment]]\nmodel = "userpkg.mod:batch_raises"\nbatch_size = 2\nseq_len = 4\n',
        encoding="utf-8")
    run_bad(seeded, ["measure", "--config", "user.toml"], "userpkg.mod:batch_raises")


@pytest.mark.parametrize("form", [["userpkg.mod:build"], ["--model", "userpkg.mod:build"]],
                         ids=["positional", "option"])
def test_user_model_estimate_works_from_the_project_folder(project: Path, form: list) -> None:
    write_user_module(project)
    proc = run_cli(["estimate", *form, "--batch-size", "2", "--seq-len", "4"], project)
    assert proc.returncode == 0, proc.stderr
    assert "userpkg.mod:build" in proc.stdout
    assert "850 parameters" in proc.stdout  # 50*8 + 8*50 + 50
    assert [line for line in proc.stdout.splitlines() if line.startswith("peak:")]
    assert not (project / "results").exists()  # an estimate stores nothing


# --------------------------------------------------------------------------- bad results files


def test_render_refuses_unknown_schema(seeded: Path) -> None:
    write_json(seeded / "results" / "estimate" / "future.json", {"schema_version": 99})
    run_bad(seeded, ["render"], "future.json", "schema", "99")


def test_render_refuses_truncated_json(seeded: Path) -> None:
    path = seeded / "results" / "estimate" / "cut.json"
    path.write_text(json.dumps(result_dict(figures=True), indent=1)[:120], encoding="utf-8")
    os.utime(path, (PAST, PAST))
    run_bad(seeded, ["render"], "cut.json")


def test_render_refuses_a_missing_field(seeded: Path) -> None:
    data = result_dict(figures=True)
    del data["peak_bytes"]
    write_json(seeded / "results" / "estimate" / "partial.json", data)
    run_bad(seeded, ["render"], "partial.json", "peak_bytes")


def test_render_refuses_a_wrongly_typed_field(seeded: Path) -> None:
    """A field of the wrong type is a defect of the file like a missing one (results.load:
    "every defect is a ResultsError naming the file"), not a crash of the renderer."""
    real = result_dict(figures=True, backend="cpu", device="cpu")
    real["key"] = "tiny-b2-s16-fp32-adamw-cpu"
    real["ground_truth"] = {"peak_bytes": 6 * 2**20}
    real["peak_bytes"] = "lots"
    write_json(seeded / "results" / "cpu-test" / "typed.json", real)
    write_json(seeded / "results" / "estimate" / "tiny-b2-s16-fp32-adamw-estimate-as-cpu.json",
               result_dict(figures=True, device="cpu"))
    run_bad(seeded, ["render"], "typed.json", "peak_bytes")


def test_render_control_a_good_result_renders(seeded: Path) -> None:
    """The files above are refused for their defect, not because any result is refused."""
    proc = run_cli(["render"], seeded)
    assert proc.returncode == 0, proc.stderr
    page = (seeded / "docs" / "en" / "reports" / "tiny.md").read_text(encoding="utf-8")
    assert "out_of_memory" in page, page  # the seeded result: a step that did not fit


def test_measure_refuses_a_stored_result_with_a_wrongly_typed_field(seeded: Path) -> None:
    """Reusing a stored result reads `environment` as a mapping; a file where it is not one
    must be reported as a bad file, not crash."""
    (seeded / "one.toml").write_text(ONE_ESTIMATE_TOML, encoding="utf-8")
    path = seeded / "results" / "estimate" / "tiny-b2-s16-fp32-adamw-estimate.json"
    path.unlink()
    first = run_cli(["measure", "--config", "one.toml"], seeded)  # a genuine, reusable result
    assert first.returncode == 0, first.stderr
    data = json.loads(path.read_text(encoding="utf-8"))
    data["environment"] = None
    write_json(path, data)
    run_bad(seeded, ["measure", "--config", "one.toml"], path.name)


# --------------------------------------------------------------------------- unwritable output


def test_results_folder_not_writable(seeded: Path) -> None:
    target = seeded / "readonly"
    target.mkdir()
    target.chmod(0o555)
    try:
        writable = os.access(target, os.W_OK)
        if not writable:
            try:
                (target / ".probe").write_text("x")
            except OSError:
                pass
            else:
                writable = True
                (target / ".probe").unlink()
        if writable:
            pytest.skip("running as root (or with CAP_DAC_OVERRIDE): chmod 0o555 does not stop "
                        "writes, so a read-only folder cannot be made here")
        (seeded / "one.toml").write_text(ONE_ESTIMATE_TOML, encoding="utf-8")
        run_bad(seeded, ["measure", "--config", "one.toml", "--results", "readonly"],
                "readonly", extra=(target,))
    finally:
        target.chmod(0o755)


def test_results_folder_is_a_file(seeded: Path) -> None:
    """Unwritable even for root: the results path is an ordinary file."""
    blocker = seeded / "blocker"
    blocker.write_text("not a folder\n", encoding="utf-8")
    (seeded / "one.toml").write_text(ONE_ESTIMATE_TOML, encoding="utf-8")
    run_bad(seeded, ["measure", "--config", "one.toml", "--results", "blocker"],
            "blocker", extra=(blocker,))


def test_docs_folder_is_a_file(seeded: Path) -> None:
    blocker = seeded / "blocker"
    blocker.write_text("not a folder\n", encoding="utf-8")
    run_bad(seeded, ["render", "--docs", "blocker"], "blocker", extra=(blocker,))


# --------------------------------------------------------------------------- working paths


def test_models_lists_the_zoo(project: Path) -> None:
    proc = run_cli(["models"], project)
    assert proc.returncode == 0, proc.stderr
    names = [line.split()[0] for line in proc.stdout.splitlines()[:3]]
    assert names == ["bert-base", "gpt2-small", "tiny"]


def _estimate_budget(project: Path, budget: str):
    proc = run_cli(["estimate", "tiny", "--batch-size", "2", "--seq-len", "16",
                    "--precision", "amp-bf16", "--gpu-memory", budget], project)
    assert proc.returncode == 0, proc.stderr
    peaks = [line for line in proc.stdout.splitlines() if line.startswith("peak:")]
    assert len(peaks) == 1, proc.stdout
    assert re.match(r"peak: [\d,.]+ MiB \(", peaks[0])
    fits = [line for line in proc.stdout.splitlines() if line.startswith("fits in")]
    assert len(fits) == 1, proc.stdout
    return fits[0]


def test_estimate_fits(project: Path) -> None:
    assert _estimate_budget(project, "1GiB").startswith("fits in 1.00 GiB: yes")


def test_estimate_does_not_fit(project: Path) -> None:
    assert _estimate_budget(project, "1KiB").startswith("fits in 1.00 KiB: no")


# --------------------------------------------------------------------------- end to end


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    """One `build --config small.toml` in a fresh project folder, shared by the tests below."""
    root = tmp_path_factory.mktemp("build")
    repo = Path(__file__).resolve().parent.parent
    (root / "mkdocs.yml").write_bytes((repo / "mkdocs.yml").read_bytes())
    shutil.copytree(repo / "overrides", root / "overrides")
    (root / "small.toml").write_text(SMALL_SUITE_TOML, encoding="utf-8")
    proc = run_cli(["build", "--config", "small.toml"], root)
    return root, proc


def _progress_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if re.match(r"\[\d+/\d+\] ", line)]


def _result_files(root: Path) -> list[Path]:
    return sorted((root / "results").glob("*/*.json"))


@pytest.mark.slow
def test_build_end_to_end(built) -> None:
    root, proc = built
    assert proc.returncode == 0, proc.stderr
    assert len(list((root / "results" / "estimate").glob("*.json"))) == 3
    cpu = list((root / "results").glob("cpu-*/tiny-b2-s16-fp32-adamw-cpu.json"))
    assert len(cpu) == 1
    assert (root / "site" / "index.html").is_file()

    # The page shows the fp32 estimate's peak (estimate for the cpu, beside the real cpu run)
    # in MiB, on the row of that configuration.
    estimate = json.loads((root / "results" / "estimate" /
                           "tiny-b2-s16-fp32-adamw-estimate-as-cpu.json").read_text())
    peak_mib = f"{estimate['peak_bytes'] / 2**20:,.1f}"
    page = (root / "docs" / "en" / "methodology.md").read_text(encoding="utf-8")
    label = "| tiny b2 s16 FP32 (measured on the CPU)"
    rows = [line for line in page.splitlines() if line.startswith(label)]
    assert len(rows) == 1, page
    cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert cells[4] == peak_mib, rows[0]
    html = (root / "site" / "en" / "methodology" / "index.html").read_text(encoding="utf-8")
    assert "tiny b2 s16 FP32 (measured on the CPU)" in html


@pytest.mark.slow
def test_build_progress_is_one_line_per_experiment(built) -> None:
    root, proc = built
    assert "\r" not in proc.stderr and "\x1b" not in proc.stderr
    progress = _progress_lines(proc.stderr)
    assert len(progress) == 4, proc.stderr
    for number, line in enumerate(progress, start=1):
        assert line.startswith(f"[{number}/4] measured in "), line
    assert "4 jobs: 4 measured" in proc.stderr


@pytest.mark.slow
def test_second_build_reuses_everything(built) -> None:
    root, _ = built
    files = _result_files(root)
    assert len(files) == 4
    for path in files:
        os.utime(path, (PAST, PAST))
    before = tree_state(root / "results")
    proc = run_cli(["build", "--config", "small.toml"], root)
    assert proc.returncode == 0, proc.stderr
    progress = _progress_lines(proc.stderr)
    assert len(progress) == 4, proc.stderr
    assert all(line.split("] ", 1)[1].startswith("reused:") for line in progress), proc.stderr
    assert "4 jobs: 4 reused" in proc.stderr
    assert tree_state(root / "results") == before  # not rewritten, nothing added


@pytest.mark.slow
def test_force_measures_again(built) -> None:
    root, _ = built
    for path in _result_files(root):
        os.utime(path, (PAST, PAST))
    (root / "one.toml").write_text(ONE_ESTIMATE_TOML, encoding="utf-8")
    proc = run_cli(["build", "--config", "one.toml", "--force"], root)
    assert proc.returncode == 0, proc.stderr
    progress = _progress_lines(proc.stderr)
    assert len(progress) == 1 and progress[0].startswith("[1/1] measured in "), proc.stderr
    forced = root / "results" / "estimate" / "tiny-b2-s16-fp32-adamw-estimate.json"
    for path in _result_files(root):
        rewritten = path.stat().st_mtime_ns != PAST * 10**9
        assert rewritten == (path == forced), path
