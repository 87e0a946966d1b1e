"""The values a simulated tensor cannot give (generator/simulate/values.py), each kind
answered by its stated placeholder and listed in the report at the script's own line; and
what the simulation cannot run (unmodelled.py): an op with no fake kernel or a shape that
depends on values, refused in one line naming the op and the line; torch.compile, run
eagerly and noted. Tiny tensors, fake: nothing is allocated."""

from __future__ import annotations

import copy
import math
import sys

import pytest
import torch
from torch import nn
from torch._subclasses.fake_tensor import FakeTensor

import generator as g
from generator.cli.run import print_report
from generator.errors import UnmodelledError
from generator.results.notes import CATALOGUE, note, text
from generator.simulate.values import KINDS, SHOWN


def _here() -> int:
    """The caller's next line: where the read under test is."""
    return sys._getframe(1).f_lineno + 1


def _reads(gpu) -> list[tuple[int, str, int]]:
    """(line, kind, count) of each read, all of them at this file's lines."""
    reads = gpu.report().placeholders
    assert {r.file for r in reads} == {__file__}, reads
    return [(r.line, r.what, r.count) for r in reads]


def test_each_kind_of_read_gets_its_placeholder_at_the_script_s_line() -> None:
    with g.simulated_gpu() as gpu:
        x = torch.randn(2, 3, device="cuda")
        loss = x.sum()
        at = {"item": _here()}
        assert loss.item() == 0.0 and float(loss) == 0.0 and int(loss) == 0
        at["bool"] = _here()
        assert bool(loss > 0) is False and torch.equal(x, x) is False
        at["tolist"] = _here()
        assert x.tolist() == [[0.0] * 3] * 2
        at["numpy"] = _here()
        array = x.cpu().numpy()
        assert array.shape == (2, 3) and array.dtype.name == "float32" and not array.any()
        at["print"] = _here()
        shown = (repr(loss), str(x), f"{x}", f"{loss:.2f}")
        assert all(SHOWN in text and "cuda:0" in text for text in shown[:3])
        assert "size=(2, 3)" in shown[1] and shown[3] == "0.00"
        assert torch.tensor(3.0, device="cuda").item() == 3.0  # a constant: its own value
    assert _reads(gpu) == [(at["item"], "item", 3), (at["bool"], "bool", 2),
                           (at["tolist"], "tolist", 1), (at["numpy"], "numpy", 1),
                           (at["print"], "print", 4)]
    assert set(KINDS) >= {what for _, what, _ in _reads(gpu)}
    assert SHOWN in text(note("placeholder_print"))


def test_nan_and_inf_checks_find_none() -> None:
    """A check states the answer a healthy step gives, however the script combines it, so a
    loop that stops or skips its step on NaN goes on."""
    with g.simulated_gpu() as gpu:
        x = torch.randn(4, device="cuda")
        line = _here()
        answers = (bool(torch.isnan(x).any()), bool(torch.isinf(x).any()),
                   bool(torch.isfinite(x).all()), x.isfinite().all().item(),
                   bool((torch.isnan(x) | torch.isinf(x)).any()),
                   bool(torch.logical_not(torch.isfinite(x)).any()),
                   bool(torch.isfinite(x).all().cpu()))
        assert answers == (False, False, True, True, False, False, True)
        assert math.isfinite(x.sum().item())  # the number's placeholder is finite too
        weight = nn.Parameter(torch.randn(4, device="cuda"))
        weight.grad = torch.randn(4, device="cuda")
        clipped = _here()
        nn.utils.clip_grad_norm_([weight], 1.0, error_if_nonfinite=True)
    assert sum(count for at, what, count in _reads(gpu)
               if line <= at < line + 6 and what == "nan_check") == 7  # each, its line
    assert (clipped, "nan_check", 1) in _reads(gpu)  # torch's own check, at the call


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_grad_scaler_finds_no_inf_and_its_step_goes_on(dtype: torch.dtype) -> None:
    with g.simulated_gpu("4090") as gpu:
        model = nn.Linear(8, 8).cuda()
        optimizer = torch.optim.AdamW(model.parameters())
        scaler = torch.amp.GradScaler("cuda")
        for _ in range(3):
            with torch.autocast("cuda", dtype=dtype):
                loss = model(torch.randn(4, 8, device="cuda")).float().pow(2).mean()
            scaler.scale(loss).backward()
            line = _here()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
        assert optimizer.state[model.weight]["step"] is not None
    assert len(gpu.report().steps) == 3  # each step taken
    assert _reads(gpu) == [(line, "found_inf", 3)]


def test_the_report_lists_each_read_with_what_its_kind_reads(capsys) -> None:
    with g.simulated_gpu() as gpu:
        loss = torch.randn(4, device="cuda").sum()
        for _ in range(2):
            line = _here()
            print(f"loss {loss.item():.3f}", bool(torch.isnan(loss)))
    report = gpu.report()
    assert report.to_dict()["placeholders"] == [
        {"file": __file__, "line": line, "what": "item", "count": 2},
        {"file": __file__, "line": line, "what": "nan_check", "count": 2}]
    capsys.readouterr()
    print_report(report, steps_limit=None)
    out = capsys.readouterr().out
    assert f"  {__file__}:{line}: item (2 times)\n" in out
    assert f"  {__file__}:{line}: nan_check (2 times)\n" in out
    said = text(note("placeholder_nan_check")).replace("`", "")
    assert f"    nan_check: {said}\n" in out and "none found" in said
    assert "torch.compile" not in out


def test_an_op_with_no_fake_kernel_is_refused_in_one_line_naming_it() -> None:
    library = torch.library.Library("simulated_values_test", "DEF")
    try:
        library.define("mine(Tensor x) -> Tensor")
        library.impl("mine", lambda x: x * 2, "CUDA")  # a CUDA kernel only, as extensions have
        with pytest.raises(UnmodelledError) as refused:
            with g.simulated_gpu():
                x = torch.randn(4, device="cuda")
                line = _here()
                torch.ops.simulated_values_test.mine(x)
    finally:
        library._destroy()
    message = str(refused.value)
    assert message.startswith(f"{__file__}:{line} calls simulated_values_test.mine.default, "
                              "an op with no fake kernel")
    assert "\n" not in message and "cannot run it" in message


@pytest.mark.parametrize("code, op", [("x[x > 0]", "aten.index.Tensor"),
                                      ("torch.nonzero(x)", "aten.nonzero.default")])
def test_a_shape_that_depends_on_values_is_refused_naming_the_op(code: str, op: str) -> None:
    with pytest.raises(UnmodelledError, match=f"calls {op}, an op whose output's shape "
                                              "depends on the tensor's values"):
        with g.simulated_gpu():
            x = torch.randn(4, device="cuda")
            eval(code)


def test_unique_of_values_the_simulation_lacks_is_of_their_placeholders() -> None:
    """torch.unique of a model's predictions (torchmetrics counts the classes so) gives the
    placeholders' one value, noted where it was read; of the script's data, its values."""
    with g.simulated_gpu() as gpu:
        predicted = torch.randn(12, 2, device="cuda").argmax(1)
        line = _here()
        found, counts = torch.unique(predicted, return_counts=True)
        assert found.shape == (1,) and found.is_cuda and counts.shape == (1,)
        labels = torch.tensor([1, 0, 1, 1]).cuda()
        assert torch.unique(labels).tolist() == [0, 1]  # the data's own values
    assert _reads(gpu) == [(line, "unique", 1)]


def test_the_script_s_data_copied_by_its_storage_stays_real() -> None:
    """A deep copy (torchmetrics' default states), a storage's clone and a tensor passed
    between processes (DataLoader's workers, rebuilt from its storage) go through a tensor of
    nothing that PyTorch sets to the host storage: the copies are real, with their values."""
    from multiprocessing.reduction import ForkingPickler

    import torch.multiprocessing  # noqa: F401  (registers the tensors' reductions)

    with g.simulated_gpu() as gpu:
        data = torch.arange(6).reshape(2, 3)
        copied = copy.deepcopy(data)
        storage = data.untyped_storage().clone()
        passed = ForkingPickler.loads(bytes(ForkingPickler.dumps(data)))
        for tensor in (copied, passed, torch.empty(0).set_(storage)):
            assert not isinstance(tensor, FakeTensor)
        assert copied.tolist() == passed.tolist() == [[0, 1, 2], [3, 4, 5]]
        assert bytes(storage) == bytes(data.untyped_storage())
        assert isinstance(torch.empty(1, 3), FakeTensor)  # a tensor to fill is the run's
    assert not gpu.report().placeholders


def test_torch_compile_runs_eagerly_and_the_report_says_where(capsys) -> None:
    with g.simulated_gpu() as gpu:
        model = nn.Linear(4, 4).cuda()
        line = _here()
        compiled = torch.compile(model, mode="max-autotune")

        @torch.compile(fullgraph=True)
        def double(x):
            return x * 2

        other = nn.Linear(4, 4).cuda()
        other.compile()
        x = torch.randn(2, 4, device="cuda")
        assert compiled is model and double(x).shape == (2, 4) and other(x).shape == (2, 4)
    report = gpu.report()
    assert [place[1:] for place in report.compiled] == [(line, 1), (line + 2, 1),
                                                       (line + 7, 1)]
    assert {place[0] for place in report.compiled} == {__file__}
    assert report.to_dict()["compiled"][0] == {"file": __file__, "line": line, "count": 1}
    capsys.readouterr()
    print_report(report, steps_limit=None)
    out = capsys.readouterr().out
    said = text(note("compiled_eagerly"))
    assert said in out and f"  {__file__}:{line}: torch.compile\n" in out
    assert "a different set of tensors" in said


def test_every_kind_is_a_note_said_in_both_languages() -> None:
    assert {"item", "bool", "tolist", "numpy", "print", "nan_check", "found_inf",
            "elapsed_time", "unique"} == set(KINDS)
    for kind in KINDS:
        assert text(note(f"placeholder_{kind}"), "en") and text(note(f"placeholder_{kind}"), "zh")
    assert "{loss:.4f}" in text(note("placeholder_print"), "zh")  # braces kept, not a field
    assert "compiled_eagerly" in CATALOGUE
