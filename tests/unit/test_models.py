"""The model zoo on fake tensors (exact architectures and parameter counts, allocating
nothing), batches, options, and user factories and their one-line errors. Real training
steps: slow/test_training_steps.py."""

from __future__ import annotations

import sys
import textwrap
import uuid
from pathlib import Path

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from generator.errors import ModelError
from generator.measure.models import MODELS, ModelSpec, resolve_model
from generator.measure.models.bert import BERT_TINY, BertConfig, build_bert
from generator.measure.models.gpt2 import GPT2Config, build_gpt2
from generator.measure.training.workload import Workload

CPU = torch.device("cpu")
SMALL_GPT2 = GPT2Config(vocab_size=500, hidden_size=32, num_layers=2, num_heads=4,
                        intermediate_size=64, max_position_embeddings=64)


def _param_count(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


@pytest.fixture(scope="module")
def fake_mode() -> FakeTensorMode:
    return FakeTensorMode()


@pytest.fixture(scope="module")
def fake_big(fake_mode: FakeTensorMode) -> dict[str, Workload]:
    # Fake tensors allocate nothing, so the 110M/124M models build in a fraction of a second.
    with fake_mode:
        return {name: MODELS[name].build() for name in ("bert-base", "gpt2-small")}


def test_registry_order_and_specs() -> None:
    assert list(MODELS) == ["bert-base", "gpt2-small", "tiny", "resnet50", "llama-7b", "llama-tiny",
                            "convnet-small", "conv-lstm", "gru-lm"]
    assert MODELS["bert-base"].max_seq_len == 512
    assert MODELS["gpt2-small"].max_seq_len == 1024
    assert MODELS["tiny"].max_seq_len == 128
    for name, spec in MODELS.items():
        assert resolve_model(name) is spec
        assert spec.name == name and "\n" not in spec.description


@pytest.mark.parametrize(
    ("name", "expected"), [("bert-base", 109_514_298), ("gpt2-small", 124_439_808)]
)
def test_exact_parameter_counts(fake_big: dict[str, Workload], name: str, expected: int) -> None:
    assert _param_count(fake_big[name].model) == expected


def test_tied_weights(fake_big: dict[str, Workload]) -> None:
    bert = fake_big["bert-base"].model
    assert bert.mlm_head.decoder.weight is bert.embeddings.word_embeddings.weight
    assert bert.mlm_head.decoder.bias.shape == (30522,)
    gpt2 = fake_big["gpt2-small"].model
    assert gpt2.lm_head.weight is gpt2.embeddings.token_embeddings.weight
    assert gpt2.lm_head.bias is None


def test_top_level_children(fake_big: dict[str, Workload]) -> None:
    bert_children = dict(fake_big["bert-base"].model.named_children())
    assert list(bert_children) == ["embeddings", "layers", "mlm_head"]
    assert isinstance(bert_children["layers"], torch.nn.ModuleList)
    assert len(bert_children["layers"]) == 12
    gpt2_children = dict(fake_big["gpt2-small"].model.named_children())
    assert list(gpt2_children) == ["embeddings", "layers", "final_norm", "lm_head"]
    assert len(gpt2_children["layers"]) == 12


def test_models_are_in_training_mode(fake_big: dict[str, Workload]) -> None:
    for workload in fake_big.values():
        assert all(m.training for m in workload.model.modules())


@pytest.mark.parametrize("name", ["bert-base", "gpt2-small"])
def test_fake_training_step_shapes(
    fake_mode: FakeTensorMode, fake_big: dict[str, Workload], name: str
) -> None:
    # What the profiler does: the whole step under the mode the model was built in.
    workload = fake_big[name]
    with fake_mode:
        inputs, target = workload.make_batch(2, 16, CPU)
        logits = workload.model(*inputs)
        loss = workload.loss_fn(logits, target)
        loss.backward()
    vocab = 30522 if name == "bert-base" else 50257
    assert logits.shape == (2, 16, vocab)
    assert loss.shape == ()


def test_llama_7b_has_llamas_parameter_count_and_the_zoos_structure() -> None:
    with FakeTensorMode():  # 25 GiB of fp32 weights: never for real here
        model = resolve_model("llama-7b").build().model
    assert sum(p.numel() for p in model.parameters()) == 6_738_415_616
    assert [name for name, _ in model.named_children()] == \
        ["embeddings", "layers", "final_norm", "lm_head"]
    assert len(model.layers) == 32
    assert model.lm_head.weight is not model.embeddings.token_embeddings.weight  # untied
    assert not any(name.endswith("bias") for name, _ in model.named_parameters())
    assert MODELS["llama-7b"].architecture == {"layers": 32, "hidden": 4096, "heads": 32,
                                               "intermediate": 11008, "vocab": 32000,
                                               "attention": "sdpa"}


def test_llama_7b_refuses_to_materialise_on_the_cpu() -> None:
    with pytest.raises(ModelError, match="estimate"):
        resolve_model("llama-7b").build()


@pytest.mark.parametrize(("make", "config"), [(build_bert, BERT_TINY), (build_gpt2, SMALL_GPT2)])
def test_eager_and_sdpa_agree_in_eval(make, config) -> None:  # type: ignore[no-untyped-def]
    torch.manual_seed(0)
    eager = make(config).model.eval()
    sdpa_config = type(config)(**{**config.__dict__, "attention": "sdpa"})
    sdpa = make(sdpa_config).model.eval()
    sdpa.load_state_dict(eager.state_dict())
    ids = torch.randint(0, config.vocab_size, (2, 24))
    with torch.no_grad():
        torch.testing.assert_close(eager(ids), sdpa(ids), rtol=1e-5, atol=1e-5)


def test_batches_are_reproducible_and_labelled() -> None:
    workload = MODELS["tiny"].build()
    (ids_a, types_a), labels_a = workload.make_batch(4, 50, CPU)
    (ids_b, types_b), labels_b = workload.make_batch(4, 50, CPU)
    assert torch.equal(ids_a, ids_b) and torch.equal(labels_a, labels_b)
    assert ids_a.dtype == torch.int64 and ids_a.shape == (4, 50)
    assert int(ids_a.min()) >= 0 and int(ids_a.max()) < BERT_TINY.vocab_size
    assert torch.equal(types_a, torch.zeros_like(types_a))
    labelled = labels_a != -100
    assert int(labelled.sum()) == 30  # exactly 15 % of 200 positions
    assert torch.equal(labels_a[labelled], ids_a[labelled])
    inputs, target = build_gpt2(SMALL_GPT2).make_batch(2, 16, CPU)
    assert torch.equal(target, inputs[0][:, 1:])  # the next token


def test_attention_option_is_validated() -> None:
    with pytest.raises(ValueError, match="attention must be one of 'eager', 'sdpa'; got 'flash'"):
        BertConfig(attention="flash")
    with pytest.raises(ValueError, match="attention"):
        GPT2Config(attention="flash")


def test_sequence_longer_than_positions_is_rejected() -> None:
    workload = MODELS["tiny"].build()
    with pytest.raises(ValueError, match="at most 128 tokens; got 129"):
        workload.make_batch(1, 129, CPU)


# --- user factories -------------------------------------------------------------------


def _user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> str:
    """Write a uniquely named module into tmp_path, put it on sys.path, return its name."""
    name = f"user_models_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def _model_error(name: str, *needles: str, build: bool = False) -> str:
    """The one-line ModelError resolving (and with `build`, building) `name` raises; it
    names the model and holds every needle."""
    with pytest.raises(ModelError) as info:
        spec = resolve_model(name)
        if build:
            spec.build()
    message = str(info.value)
    assert "\n" not in message
    for needle in (repr(name), *needles):
        assert needle in message, f"{needle!r} not in {message!r}"
    return message


def test_unknown_model_name() -> None:
    _model_error("bart", *MODELS, "package.module:function")


def test_module_that_does_not_import() -> None:
    _model_error("no_such_pkg_x.models:build", "cannot import module 'no_such_pkg_x.models'",
                 "ModuleNotFoundError", "no_such_pkg_x")


def test_module_that_raises_on_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mod = _user_module(tmp_path, monkeypatch, 'raise RuntimeError("boom\\nsecond line")\n')
    message = _model_error(f"{mod}:build", f"cannot import module {mod!r}", "RuntimeError: boom")
    assert "second line" not in message


def test_missing_and_not_callable_factory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mod = _user_module(tmp_path, monkeypatch, "build = 3\n")
    _model_error(f"{mod}:missing", "not found", "has no attribute 'missing'")
    _model_error(f"{mod}:build", "is not callable", "int")


def test_malformed_factory_name() -> None:
    _model_error("pkg.mod:", "expected the form package.module:function")


def test_factory_that_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mod = _user_module(tmp_path, monkeypatch, """
        def build():
            raise ValueError("bad size\\nmore detail")
    """)
    spec = resolve_model(f"{mod}:build")  # importing alone must succeed
    assert spec.max_seq_len is None
    message = _model_error(f"{mod}:build", "raised ValueError: bad size", build=True)
    assert "more detail" not in message


@pytest.mark.parametrize(
    ("body", "returned"),
    [("return 3", "int"), ("return (1, 2)", "(int, int)"),
     ("return (1, print, print)", "(int, builtin_function_or_method, builtin_function_or_method)")],
)
def test_factory_with_wrong_return(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, returned: str
) -> None:
    mod = _user_module(tmp_path, monkeypatch, f"def build():\n    {body}\n")
    _model_error(f"{mod}:build", "must return (model, make_batch, loss_fn)",
                 f"it returned {returned}", build=True)


def test_valid_user_factory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mod = _user_module(tmp_path, monkeypatch, """
        import torch
        from torch import nn
        import torch.nn.functional as F

        def build():
            model = nn.Sequential(nn.Embedding(50, 8), nn.Linear(8, 50))
            def make_batch(batch_size, seq_len, device):
                ids = torch.randint(0, 50, (batch_size, seq_len), device=device)
                return (ids,), ids
            def loss_fn(logits, target):
                return F.cross_entropy(logits.reshape(-1, 50), target.reshape(-1))
            return model, make_batch, loss_fn
    """)
    spec = resolve_model(f"{mod}:build")
    assert isinstance(spec, ModelSpec)
    assert spec.name == f"{mod}:build" and spec.description == f"user model {mod}:build"
    with FakeTensorMode():
        workload = spec.build()
        inputs, target = workload.make_batch(2, 5, CPU)
        loss = workload.loss_fn(workload.model(*inputs), target)
    assert isinstance(workload, Workload) and loss.shape == ()


def test_user_factory_may_return_a_workload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mod = _user_module(tmp_path, monkeypatch, """
        from generator.measure.models import MODELS
        def build():
            return MODELS["tiny"].build()
    """)
    workload = resolve_model(f"{mod}:build").build()
    assert isinstance(workload, Workload)
    assert list(dict(workload.model.named_children())) == ["embeddings", "layers", "mlm_head"]


def test_user_module_found_from_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `python -m generator --model my_pkg.mod:build` run from the user's project folder.
    pkg = f"my_project_{uuid.uuid4().hex[:8]}"
    package = tmp_path / pkg
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text("def build():\n    return 1\n")
    monkeypatch.chdir(tmp_path)
    cwd_entries = ("", ".", str(tmp_path))
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in cwd_entries])
    before = list(sys.path)
    assert "it returned int" in _model_error(f"{pkg}.mod:build", build=True)
    assert sys.path == before  # found there, and the caller's sys.path left as it was
