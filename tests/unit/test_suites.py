"""The built-in suite (generator/experiment/suites/*.toml): it loads, and measures what each page
needs, cheaply enough for `python -m generator build` on a small machine."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from generator.errors import ConfigError
from generator.experiment import Experiment
from generator.jobs.load import DEFAULT_SUITE, load_suite
from generator.experiment.suite import expand, file_tables
from generator.measure.studies import Study
from generator.site.derived import ARTICLE
from generator.site import lever_results as levers


def _experiments(jobs: list) -> list[Experiment]:
    return [j for j in jobs if isinstance(j, Experiment)]


def _studies(jobs: list, kind: str) -> dict[str, Study]:
    return {j.name: j for j in jobs if isinstance(j, Study) and j.kind == kind}


def test_the_built_in_suite_is_every_file_and_measures_the_torch_facts() -> None:
    jobs = load_suite()
    files = sorted(DEFAULT_SUITE.glob("*.toml"))
    assert len(files) >= 6
    assert len(jobs) == len({(type(j), j.key) for j in jobs})  # each job once
    assert {j.key for f in files for j in load_suite(f)} == {j.key for j in jobs}
    [facts] = _studies(jobs, "torch_facts").values()
    assert facts.backend == "estimate"  # what the installed PyTorch says, no device needed


def test_the_article_example_in_every_precision_on_both_backends() -> None:
    article = [j for j in _experiments(load_suite(DEFAULT_SUITE / "article.toml"))
               if all(getattr(j, k) == v for k, v in ARTICLE.items())]
    assert {(j.precision, j.backend) for j in article} == {
        (p, b) for p in ("fp32", "amp-fp16", "amp-bf16") for b in ("estimate", "cuda")}


def test_the_levers_suite_measures_each_lever_on_the_article_example() -> None:
    jobs = _experiments(load_suite())
    article = [j for j in jobs if j.backend == "estimate" and j.device == "cuda" and
               all(getattr(j, k) == ARTICLE[k] for k in ("model", "batch_size", "seq_len"))]
    found = [levers.options({"experiment": j.to_dict()}) for j in article]
    for ident, chosen in {**levers.LEVERS, **levers.COMBOS}.items():
        assert {**levers.BASELINE, **levers.use(chosen)} in found, ident
        assert {**levers.BASELINE, **levers.use(chosen), **levers.reference(chosen)} in found, \
            ident
    # The baseline and AMP are article.toml's own experiments, so the suite measures them once.
    theirs = {j.key for j in _experiments(load_suite(DEFAULT_SUITE / "article.toml"))
              if j.batch_size == 32 and j.backend == "estimate"}
    assert theirs and theirs <= {j.key for j in load_suite(DEFAULT_SUITE / "levers.toml")}


def test_the_precision_suite() -> None:
    jobs = load_suite(DEFAULT_SUITE / "precision.toml")
    assert {(j.kind, j.backend) for j in jobs} == {("training_curves", "cpu"),
                                                   ("training_curves", "cuda"),
                                                   ("underflow", "cpu")}
    for job in jobs:
        if job.kind == "training_curves":
            assert job.params["device"] == job.backend  # run() is not told the backend


def test_the_sweeps() -> None:
    jobs = _experiments(load_suite(DEFAULT_SUITE / "sweeps.toml"))
    assert len(jobs) == 3 * (8 + 5 - 1)  # batch 32 at sequence 128 is in both sweeps
    assert {(j.model, j.backend, j.device, j.optimizer, j.attention) for j in jobs} == \
        {("bert-base", "estimate", "cuda", "adamw", "eager")}
    by_batch = {j.batch_size for j in jobs if j.seq_len == 128}
    by_seq = {j.seq_len for j in jobs if j.batch_size == 32}
    assert by_batch == {1, 2, 4, 8, 16, 32, 64, 128} and by_seq == {64, 128, 256, 384, 512}
    assert {j.precision for j in jobs} == {"fp32", "amp-fp16", "amp-bf16"}


def test_the_scale_suite_is_plain_estimates_and_cheap() -> None:
    """The scale page's points are experiments on the one engine (gpus, parallel), no
    study: a few GPT-2 small ranks and about twenty of Llama 3.1 8B (about 25 s each
    here), DDP, FSDP2 (with and without CPU offload) and tensor parallelism in one regime and
    FSDP2's policy as its own row."""
    import tomllib

    tables = tomllib.loads((DEFAULT_SUITE / "scale.toml").read_text())
    assert "study" not in tables
    exps = [Experiment.from_dict(f) for _, t in file_tables(tables) for f in expand(t)]
    assert len(exps) <= 36 and {e.backend for e in exps} == {"estimate"}
    big = [e for e in exps if "8B" in e.model]
    assert len(big) <= 21 and ("ddp", 8) in {(e.parallel, e.gpus) for e in big}
    assert {e.gpus for e in big if e.cpu_offload} >= {2, 8}
    assert {e.parallel for e in big} >= {"tp", "fsdp2-tp"}
    assert {e.gpus for e in big if e.parallel == "fsdp2"} >= {2, 8, 64}
    # DDP and FSDP2 in the same precision; the policy in fp32 with bf16 gathered
    plain = {e.precision for e in exps if e.fsdp_mixed_precision == "none"}
    assert plain == {"amp-bf16"}
    assert {(e.precision, e.fsdp_mixed_precision) for e in exps
            if e.fsdp_mixed_precision != "none"} == {("fp32", "bf16/fp32")}
    assert not list((DEFAULT_SUITE / "optional").glob("sharding*"))


def test_measure_runs_only_the_backend_asked_for(cli, tmp_path, monkeypatch) -> None:
    """`measure --backend cuda` on a suite of estimates and real runs hands the runner the
    cuda jobs alone (a GPU machine measures them without estimating everything again)."""
    from generator.jobs import runner

    (tmp_path / "suite.toml").write_text(
        '[[experiment]]\nmodel = "tiny"\nbatch_size = 2\nseq_len = 16\n'
        'backend = ["estimate", "cpu", "cuda"]\n', encoding="utf-8")
    handed = []
    monkeypatch.setattr(runner, "run_all", lambda jobs, *a, **k: handed.extend(jobs) or [])
    assert cli(["measure", "--config", "suite.toml", "--backend", "cuda"], tmp_path) \
        .returncode == 0
    assert [job.backend for job in handed] == ["cuda"]


def test_reference_runs_on_another_backend() -> None:
    """The validation-cuda suite is the built-in validation suite's steps on the GPU: the same
    experiments but for the backend, and the runs this project can build come first."""
    from generator.jobs.load import load_suite
    from generator.results import reference_runs

    folder = Path(__file__).resolve().parents[2] / "generator" / "experiment" / "suites"
    estimates = load_suite(folder / "validation.toml")
    on_gpu = load_suite(folder / "optional" / "validation-cuda.toml")
    assert {job.backend for job in on_gpu} == {"cuda"}
    assert [dataclasses.replace(job, backend="estimate") for job in on_gpu] == estimates
    skipped = [run.skipped is not None for run in reference_runs.runs()]
    assert sorted(skipped) == [job.model.startswith("timm:") for job in estimates]


def test_a_list_of_names_is_one_value_and_a_list_of_lists_expands() -> None:
    from generator.experiment.suite import expand

    base = {"model": "llama-tiny", "batch_size": 1, "seq_len": 8, "lora_rank": 8}
    one = expand({**base, "lora_targets": ["q_proj", "v_proj"]})
    assert [Experiment.from_dict(e).lora_targets for e in one] == [("q_proj", "v_proj")]
    two = expand({**base, "lora_targets": [["q_proj"], ["q_proj", "v_proj"]],
                  "checkpoint_classes": ["LlamaMLP", "LlamaRMSNorm"]})
    assert [(e["lora_targets"], e["checkpoint_classes"]) for e in two] == [
        (["q_proj"], ["LlamaMLP", "LlamaRMSNorm"]),
        (["q_proj", "v_proj"], ["LlamaMLP", "LlamaRMSNorm"])]
    # other fields still expand a list into one experiment per value
    assert len(expand({**base, "precision": ["fp32", "amp-bf16"]})) == 2


def test_sizes_give_batch_and_sequence_in_pairs() -> None:
    from generator.experiment.suite import expand

    found = expand({"model": "tiny", "sizes": [[1, 64], [8, 128]], "precision": ["fp32", "amp-bf16"]})
    assert [(e["batch_size"], e["seq_len"], e["precision"]) for e in found] == [
        (1, 64, "fp32"), (1, 64, "amp-bf16"), (8, 128, "fp32"), (8, 128, "amp-bf16")]
    assert all("sizes" not in e and "size" not in e for e in found)
    with pytest.raises(ConfigError, match="one or the other"):
        expand({"model": "tiny", "sizes": [[1, 64]], "batch_size": 2})
    with pytest.raises(ConfigError, match="pairs"):
        expand({"model": "tiny", "sizes": [[1, 64, 3]]})
