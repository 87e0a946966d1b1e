"""Bad command-line arguments, and the `estimate` and `models` commands that take them, run
in this process (`generator.cli.main`).

A mistake ends as exactly one line on stderr that names it, exit status 2, and leaves
results/ and docs/ as they were (conftest.assert_refused). The same mistakes in an
experiments.toml: test_bad_suites.py; in a subprocess that measures: slow/test_cli_measure.py.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from conftest import BAD_FACTORIES, assert_refused

ESTIMATE = ["estimate", "tiny", "--batch-size", "1", "--seq-len", "8"]


# --------------------------------------------------------------------------- options


def test_unknown_model_names_it_and_lists_the_choices(cli, seeded: Path) -> None:
    from generator.measure.models import MODELS

    assert_refused(cli, seeded, ["estimate", "nosuchmodel", "--batch-size", "1", "--seq-len", "8"],
                   "nosuchmodel", *MODELS)


@pytest.mark.parametrize(("option", "value"), [("--precision", "fp8"), ("--optimizer", "lion"),
                                               ("--attention", "flash"), ("--device", "tpu")])
def test_unknown_choice_is_named(cli, seeded: Path, option: str, value: str) -> None:
    assert_refused(cli, seeded, [*ESTIMATE, option, value], option, value)


@pytest.mark.parametrize("option", ["--batch-size", "--seq-len"])
@pytest.mark.parametrize("value", ["0", "-3", "abc", "1.5"])
def test_sizes_must_be_positive_integers(cli, seeded: Path, option: str, value: str) -> None:
    args = {"--batch-size": "1", "--seq-len": "8", option: value}
    assert_refused(cli, seeded, ["estimate", "tiny", *[x for kv in args.items() for x in kv]],
                   option, value, "positive integer")


def test_a_required_size_left_out(cli, seeded: Path) -> None:
    assert_refused(cli, seeded, ["estimate", "tiny", "--batch-size", "1"], "--seq-len")


def test_a_batch_or_its_search(cli, seeded: Path) -> None:
    line = assert_refused(cli, seeded, ["estimate", "tiny", "--seq-len", "8"], "--batch-size")
    assert "--largest-batch" in line


def test_the_search_needs_a_budget(cli, seeded: Path) -> None:
    assert_refused(cli, seeded, ["estimate", "tiny", "-s", "8", "--largest-batch"],
                   "--largest-batch", "--gpu-memory")


def test_the_search_checks_its_options_before_estimating(cli, seeded: Path) -> None:
    assert_refused(cli, seeded, ["estimate", "tiny", "-s", "8", "-b", "4", "--micro-batches", "3",
                                 "--gpu-memory", "1GiB", "--largest-batch"], "micro_batches 3")


def test_levers_and_the_batch_search_one_at_a_time(cli, seeded: Path) -> None:
    assert_refused(cli, seeded, ["estimate", "tiny", "-s", "8", "--gpu-memory", "1GiB",
                                 "--largest-batch", "--levers"], "--largest-batch", "--levers")


def test_estimate_needs_a_model(cli, seeded: Path) -> None:
    assert_refused(cli, seeded, ["estimate", "--batch-size", "1", "--seq-len", "8"], "model")


def test_estimate_refuses_two_different_models(cli, seeded: Path) -> None:
    assert_refused(cli, seeded, [*ESTIMATE, "--model", "gpt2-small"], "model")


def test_sequence_longer_than_the_model_allows(cli, seeded: Path) -> None:
    assert_refused(cli, seeded, ["estimate", "tiny", "--batch-size", "1", "--seq-len", "4096"],
                   "4096", "128")


@pytest.mark.parametrize(("size", "needles"), [
    ("24XB", ("XB",)), ("-1GiB", ("-1GiB",)), ("lots", ("lots",)), ("0", ("positive",)),
    ("8388608TiB", ("8388608TiB", "at most 2⁶³ − 1 bytes")),
    ("9" * 400 + "TiB", ("at most 2⁶³ − 1 bytes",))])
def test_unreadable_memory_size(cli, seeded: Path, size: str, needles: tuple[str, ...]) -> None:
    assert_refused(cli, seeded, [*ESTIMATE, f"--gpu-memory={size}"], "--gpu-memory", *needles)


def test_unknown_command(cli, seeded: Path) -> None:
    assert_refused(cli, seeded, ["mesure"], "mesure")


# --------------------------------------------------------------------------- sizes no tensor has


def test_batch_larger_than_any_tensor(cli, seeded: Path) -> None:
    assert_refused(cli, seeded, ["estimate", "tiny", "--batch-size", str(2**64), "--seq-len", "8"],
                   "batch_size", str(2**64), "2⁶³")


def test_batch_whose_tensors_overflow(cli, seeded: Path) -> None:
    """Each size fits in int64 but the logits (batch × seq × vocab) do not: the estimate
    must say so, not print PyTorch's traceback."""
    assert_refused(cli, seeded, ["estimate", "tiny", "--batch-size", str(10**15),
                                 "--seq-len", "128"],
                   "batch_size 1000000000000000", "seq_len 128", "tiny")


# --------------------------------------------------------------------------- user models


def test_estimate_of_a_model_module_that_does_not_import(cli, seeded: Path) -> None:
    assert_refused(cli, seeded, ["estimate", "--model", "no_such_pkg.models:build",
                                 "--batch-size", "2", "--seq-len", "4"],
                   "no_such_pkg.models", "ModuleNotFoundError")


def test_estimate_of_a_missing_factory(cli, seeded: Path) -> None:
    assert_refused(cli, seeded, ["estimate", "--model", "json:no_such_function",
                                 "--batch-size", "2", "--seq-len", "4"],
                   "json:no_such_function", "not found")


@pytest.mark.parametrize("factory", sorted(BAD_FACTORIES))
def test_bad_user_factory(cli, seeded: Path, user_package, factory: str) -> None:
    user_package(seeded)
    assert_refused(cli, seeded, ["estimate", "--model", f"userpkg.mod:{factory}",
                                 "--batch-size", "2", "--seq-len", "4"], *BAD_FACTORIES[factory])


def test_bad_user_make_batch(cli, seeded: Path, user_package) -> None:
    """A user make_batch that returns the wrong thing is the user's mistake (user.py: "Every
    failure is a ModelError of one line"), so it should not end in a traceback."""
    user_package(seeded)
    assert_refused(cli, seeded, ["estimate", "userpkg.mod:batch_is_42", "--batch-size", "2",
                                 "--seq-len", "4"], "userpkg.mod:batch_is_42",
                   "make_batch must return (inputs, target)", "int")


def test_a_bare_tensor_is_the_models_one_input(cli, project: Path, user_package) -> None:
    """model(*inputs) on a bare tensor would split it along the batch (8 arguments for a
    batch of 8): a tensor is taken as the model's one argument."""
    user_package(project)
    proc = cli(["estimate", "userpkg.mod:one_tensor_input", "-b", "8", "-s", "1"], project)
    assert proc.returncode == 0, proc.stderr
    assert "676 parameters\n" in proc.stdout  # 16*32 + 32 + 32*4 + 4, all trained


def test_a_factory_that_converts_its_model(cli, project: Path, user_package) -> None:
    user_package(project)
    proc = cli(["estimate", "userpkg.mod:cast_to_bf16", "-b", "8", "-s", "1"], project)
    assert proc.returncode == 0, proc.stderr
    assert "676 parameters\n" in proc.stdout


def test_frozen_parameters_get_no_gradients(cli, project: Path, user_package) -> None:
    from generator.experiment import Experiment
    from generator.measure.run import measure_to_result

    user_package(project)
    proc = cli(["estimate", "userpkg.mod:frozen_first_layer", "-b", "8", "-s", "1"], project)
    assert proc.returncode == 0, proc.stderr
    assert "676 parameters (132 trainable)" in proc.stdout  # the second layer's 32*4 + 4
    result = measure_to_result(Experiment(model="userpkg.mod:frozen_first_layer",
                                          batch_size=8, seq_len=1, device="cpu"))
    assert result["trainable_parameter_count"] == 132
    assert result["category_max_bytes"]["gradients"] == 132 * 4
    assert result["category_max_bytes"]["optimizer_state"] >= 2 * 132 * 4


BREAKS_IN_THE_STEP = """
import torch
from torch import nn


def build():
    model = nn.Linear(8, 8)

    def make_batch(batch_size, seq_len, device):
        return (torch.randn(batch_size, seq_len, 8, device=device),), None

    return model, make_batch, lambda output, _target: (output + torch.ones(3, 5)).sum()
"""


def test_a_model_that_breaks_in_the_step_is_one_line_without_a_logged_traceback(
        cli, seeded: Path, user_package) -> None:
    """On fake tensors the op that fails is logged with its traceback by FakeTensorMode
    before the error reaches the command, which prints it as one line: the log is held back."""
    user_package(seeded, BREAKS_IN_THE_STEP)
    logged: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = logged.append  # type: ignore[method-assign]
    logger = logging.getLogger("torch._subclasses.fake_tensor")
    logger.addHandler(handler)
    try:
        assert_refused(cli, seeded, ["estimate", "userpkg.mod:build", "--batch-size", "2",
                                     "--seq-len", "4"], "failed in the training step",
                       "RuntimeError")
    finally:
        logger.removeHandler(handler)
    assert not logged, [record.getMessage() for record in logged]


def test_checkpointing_a_model_without_layers_names_the_way_that_works(
        cli, seeded: Path, user_package) -> None:
    user_package(seeded)  # nn.Sequential: no `layers` list of blocks
    assert_refused(cli, seeded, ["estimate", "userpkg.mod:build", "-b", "2", "-s", "4",
                                 "--checkpointing"], "`layers`", "--checkpoint-classes")
    proc = cli(["estimate", "userpkg.mod:build", "-b", "2", "-s", "4",
                "--checkpoint-classes", "Linear"], seeded)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("form", [["userpkg.mod:build"], ["--model", "userpkg.mod:build"]],
                         ids=["positional", "option"])
def test_user_model_estimate_works_from_the_project_folder(cli, project: Path, user_package,
                                                           form: list[str]) -> None:
    user_package(project)
    proc = cli(["estimate", *form, "--batch-size", "2", "--seq-len", "4"], project)
    assert proc.returncode == 0, proc.stderr
    assert "userpkg.mod:build" in proc.stdout
    assert "850 parameters" in proc.stdout  # 50*8 + 8*50 + 50
    assert [line for line in proc.stdout.splitlines() if line.startswith("peak of the step's tensors:")]
    assert not (project / "docs" / "data").exists()  # an estimate stores nothing


# --------------------------------------------------------------------------- working paths


def test_models_lists_the_zoo(cli, project: Path) -> None:
    from generator.measure.models import MODELS

    proc = cli(["models"], project)
    assert proc.returncode == 0, proc.stderr
    names = [line.split()[0] for line in proc.stdout.splitlines()[:len(MODELS)]]
    assert names == list(MODELS)
    assert "package.module:function" in proc.stdout


def test_gpus_lists_the_catalogue_with_the_memory_a_process_gets(cli, project: Path) -> None:
    from generator import gpus

    proc = cli(["gpus"], project)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split("  ")[0]: line for line in proc.stdout.splitlines()}
    for gpu in gpus.CATALOGUE:
        assert f"{gpu.memory_bytes / 2**30:,.2f} GiB" in rows[gpu.short_name]
    assert "2 × 32.0 MiB" in rows["H100 80GB HBM3"] and "450–1,024 MiB" in rows["H100 80GB HBM3"]
    assert f"models the {gpus.assumed().short_name}" in proc.stdout


def _estimate_budget(cli, project: Path, budget: str, status: int = 0) -> tuple[int, str]:
    """The estimated peak (bytes, from the printed MiB) and the budget's verdict line."""
    proc = cli(["estimate", "tiny", "--batch-size", "2", "--seq-len", "16",
                "--precision", "amp-bf16", "--gpu-memory", budget], project)
    assert proc.returncode == status, proc.stderr
    peaks = [line for line in proc.stdout.splitlines()
             if line.startswith("peak of the step's tensors:")]
    assert len(peaks) == 1, proc.stdout
    found = re.match(r"peak of the step's tensors: ([\d,.]+) MiB \(", peaks[0])
    assert found, peaks[0]
    fits = [line for line in proc.stdout.splitlines() if line.startswith("fits in")]
    assert len(fits) == 1, proc.stdout
    return float(found.group(1).replace(",", "")) * 2**20, fits[0]


def test_estimate_says_whether_the_step_fits(cli, project: Path) -> None:
    from generator.plan.fit import DOES_NOT_FIT

    peak, fits = _estimate_budget(cli, project, "4GiB")  # room for a CUDA context too
    assert 2**10 < peak < 2**30
    assert fits.startswith("fits in 4.00 GiB: yes"), fits
    _, short = _estimate_budget(cli, project, "1KiB", status=DOES_NOT_FIT)
    assert short.startswith("fits in 1.00 KiB: no"), short



def test_short_flags_for_the_sizes(cli, project: Path) -> None:
    long = cli(["estimate", "tiny", "--batch-size", "2", "--seq-len", "16"], project)
    short = cli(["estimate", "tiny", "-b", "2", "-s", "16"], project)
    assert long.returncode == short.returncode == 0, short.stderr
    assert short.stdout == long.stdout and "batch 2 · seq 16" in short.stdout


def test_the_heading_names_an_image_side_as_such(cli, project: Path) -> None:
    proc = cli(["estimate", "convnet-small", "-b", "2", "-s", "16"], project)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("convnet-small · batch 2 · image 16 px · fp32")


def test_a_reader_gone_away_ends_quietly(cli, project: Path, monkeypatch) -> None:
    """`python -m generator models | head -1`: the rest of the output has nowhere to go,
    which is no error of the user's (the real pipe: slow/test_cli_measure.py)."""
    from generator.cli import commands

    def reader_gone(args) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(commands, "models", reader_gone)
    proc = cli(["models"], project)
    assert (proc.returncode, proc.stderr) == (141, "")


@pytest.mark.parametrize("size", [2**63, "8388608TiB", 0, -1, "0.0000000001"])
def test_a_memory_size_is_one_rule_wherever_it_is_given(size) -> None:
    """The API's memory= and gpu_memory=, a suite's gpu_memory and --gpu-memory hold a size to
    one rule (option.memory_problem): the CLI took sizes past 2⁶³ that the API refused."""
    from generator.errors import ConfigError
    from generator.experiment import Experiment
    from generator.experiment.option import memory_bytes
    from generator.results.api_types import budget_bytes

    for refuse in (lambda: memory_bytes(size), lambda: budget_bytes(None, size),
                   lambda: Experiment.from_dict({"model": "tiny", "batch_size": 1,
                                                 "seq_len": 8, "gpu_memory": size})):
        with pytest.raises(ConfigError, match="memory size"):
            refuse()
    assert memory_bytes(2**63 - 1) == 2**63 - 1
    assert memory_bytes("8388607TiB") == 8388607 * 2**40
    assert memory_bytes("0.1GiB") == 2**30 // 10  # exact, not a float's rounding
