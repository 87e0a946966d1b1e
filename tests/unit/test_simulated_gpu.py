"""A script's code on the simulated GPU (generator/simulate): torch.cuda's answers, tensors
placed on the GPU, the caching allocator online (its figures mid-run, out of memory where it
happens), optimizer steps, and the process as it was found afterwards (the placeholders for
values and what cannot be simulated: test_simulated_values.py). Tiny tensors, fake: nothing
is allocated."""

from __future__ import annotations

import importlib
import sys

import pytest
import torch
from process_state import changes, snapshot
from torch import nn
from torch._subclasses.fake_tensor import FakeTensor
from torch.overrides import _get_current_function_mode_stack
from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

import generator as g
from generator.errors import ConfigError, GeneratorError
from generator import gpus

MIB = 2**20
_OPTIMIZER = importlib.import_module("torch.optim.optimizer")
_ANSWERED = ("is_available", "device_count", "get_device_name", "get_device_properties",
             "Event", "Stream", "memory_stats", "current_stream",
             "get_device_capability", "mem_get_info", "memory_allocated", "memory_reserved",
             "max_memory_allocated", "max_memory_reserved", "reset_peak_memory_stats",
             "empty_cache", "synchronize", "_lazy_init", "current_device")


def _state() -> dict:
    """snapshot() and what a run patches: torch.cuda's functions, FakeTensor's device and
    tolist, torch.compile, autocast, the foreach types, cpp_extension, the mode stacks and the
    optimizers' global hooks."""
    import torch.utils.cpp_extension as cpp

    return {**snapshot(),
            "cuda": {name: getattr(torch.cuda, name) for name in _ANSWERED},
            "fake device": FakeTensor.__dict__["device"],
            "fake tolist": FakeTensor.__dict__["tolist"], "compile": torch.compile,
            "autocast": torch.amp.autocast_mode.autocast.__init__,
            "foreach types": list(_OPTIMIZER._foreach_supported_types),
            "cpp_extension": (cpp.load, cpp.load_inline),
            "modes": (list(_get_current_dispatch_mode_stack()),
                      list(_get_current_function_mode_stack())),
            "fake mode": torch._C._get_dispatch_mode(torch._C._TorchDispatchModeKey.FAKE),
            "optimizer hooks": (dict(_OPTIMIZER._global_optimizer_post_hooks),
                                dict(_OPTIMIZER._global_optimizer_pre_hooks))}


def test_torch_cuda_answers_from_the_catalogue_and_the_simulation() -> None:
    gpu = gpus.find("RTX 4090")
    with g.simulated_gpu("4090"):
        assert torch.cuda.is_available() and torch.cuda.device_count() == 1
        assert torch.cuda.get_device_name() == gpu.name == torch.cuda.get_device_name(0)
        properties = torch.cuda.get_device_properties(0)
        assert (properties.name, properties.total_memory) == (gpu.name, gpu.memory_bytes)
        assert torch.cuda.get_device_capability() == (8, 9) == (properties.major,
                                                                properties.minor)
        assert torch.cuda.memory_allocated() == 0 == torch.cuda.memory_reserved()
        x = torch.empty(1000, device="cuda")  # 4,000 B: one 4,096 B block of a 2 MiB segment
        assert torch.cuda.memory_allocated() == 4096
        assert torch.cuda.memory_reserved() == 2 * MIB
        free, total = torch.cuda.mem_get_info()
        assert total == gpu.memory_bytes and free == total - gpu.context_bytes[0] - 2 * MIB
        y = torch.empty(5 * MIB, dtype=torch.uint8, device="cuda")  # a 20 MiB large segment
        assert torch.cuda.memory_reserved() == 22 * MIB
        del y
        assert torch.cuda.memory_allocated() == 4096 and torch.cuda.memory_reserved() == 22 * MIB
        assert torch.cuda.max_memory_allocated() == 4096 + 5 * MIB
        torch.cuda.reset_peak_memory_stats()
        assert torch.cuda.max_memory_allocated() == 4096
        torch.cuda.empty_cache()  # the free 20 MiB segment goes back to the driver
        assert torch.cuda.memory_reserved() == 2 * MIB
        torch.cuda.synchronize()
        del x
    assert not torch.cuda.is_available()


def test_tensors_made_on_or_moved_to_cuda_are_on_the_simulated_gpu() -> None:
    with g.simulated_gpu():
        host = torch.ones(256)
        assert host.device.type == "cpu" and not host.is_cuda
        assert torch.cuda.memory_allocated() == 0  # the host's memory is not the GPU's
        for moved in (host.cuda(), host.to("cuda"), host.to(torch.device("cuda", 0)),
                      host.to("cuda", torch.float16), torch.zeros(4, device="cuda"),
                      torch.randn(4, device=torch.device("cuda"))):
            assert isinstance(moved, FakeTensor)
            assert moved.device == torch.device("cuda", 0) and moved.is_cuda
            assert moved.get_device() == 0
        on_gpu = host.to("cuda")
        assert (on_gpu * 2 + 1).device.type == "cuda"  # CUDA kernels write CUDA outputs
        assert on_gpu.to("cuda") is on_gpu  # no move, no copy
        back = on_gpu.cpu()
        assert back.device.type == "cpu" and back.get_device() == -1
        before = torch.cuda.memory_allocated()
        host.copy_(on_gpu)  # a copy to the host writes host memory
        assert not host.is_cuda and torch.cuda.memory_allocated() == before
        assert host.to("cuda", None, True, True).is_cuda  # non_blocking, copy: positional
        model = nn.Linear(64, 32)
        assert model.to("cuda") is model and model.weight.device.type == "cuda"
        weights = (64 * 32 + 32) * 4
        assert torch.cuda.memory_allocated() >= weights
        with torch.device("cuda"):  # the user's own device context
            assert torch.empty(3).is_cuda
        made = torch.ops.aten.empty.memory_format([3], device=on_gpu.device)  # below Placement
        assert made.is_cuda and made.fake_device.type == "cpu"


def test_autocast_and_optimizers_take_the_gpu_s_path() -> None:
    with g.simulated_gpu():
        model = nn.Linear(8, 8).cuda()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            assert model(torch.randn(2, 8, device="cuda")).dtype == torch.bfloat16
        with torch.autocast("cuda"):  # CUDA autocast's own default: float16
            assert model(torch.randn(2, 8, device="cuda")).dtype == torch.float16
        params = list(model.parameters())
        assert _OPTIMIZER._default_to_fused_or_foreach(params, False) == (False, True)


def _train(steps: int, done: list[int]) -> None:
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 32)).cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    for step in range(steps):
        model(torch.randn(16, 32, device="cuda")).pow(2).mean().backward()
        optimizer.step()
        optimizer.zero_grad()
        done.append(step)


def test_optimizer_steps_are_the_report_s_steps_and_its_limit() -> None:
    done: list[int] = []
    with g.simulated_gpu("a100 80gb", steps=2) as gpu:
        _train(5, done)
    report = gpu.report()
    assert done == [0] and report.stopped_after_steps and len(report.steps) == 2
    weights = (32 * 64 + 64 + 64 * 32 + 32) * 4
    # weights, gradients and AdamW's two states at the first optimizer step already
    assert all(peaks.tensor_bytes >= 4 * weights for peaks in report.steps)
    assert report.allocated_bytes == max(s.allocated_bytes for s in report.steps)
    assert report.reserved_bytes >= report.allocated_bytes >= report.peak_bytes > 0
    assert report.verdict.word == "yes" and report.gpu == gpus.find("a100 80gb").name
    data = report.to_dict()
    assert [set(s) >= {"allocated_bytes", "reserved_bytes"} for s in data["steps"]] == [True] * 2
    assert (data["peak_bytes"], data["allocated_bytes"], data["reserved_bytes"],
            data["verdict"]) == (report.peak_bytes, report.allocated_bytes,
                                 report.reserved_bytes, "yes")
    done.clear()
    with g.simulated_gpu() as gpu:  # no limit: the block runs to its end
        _train(3, done)
    assert done == [0, 1, 2] and len(gpu.report().steps) == 3
    assert not gpu.report().stopped_after_steps and gpu.report().gpu_assumed



class _Optimizers(torch.optim.Optimizer):
    """A container of optimizers that is an optimizer itself (torchtitan's
    OptimizersContainer): its step runs each one's step."""

    def __init__(self, model: nn.Module) -> None:
        self.optimizers = [torch.optim.AdamW([p]) for p in model.parameters()]
        super().__init__(list(model.parameters()), {})

    def step(self, closure=None) -> None:
        for optimizer in self.optimizers:
            optimizer.step()


def test_an_optimizer_s_step_inside_another_s_is_one_step() -> None:
    """The inner steps are the outer step's: one training step, one window, and --steps N
    stops after N of the outer steps."""
    for limit, ran in ((None, 3), (2, 2)):
        with g.simulated_gpu("H100", steps=limit) as gpu:
            model = nn.Linear(64, 64).cuda()
            optimizer = _Optimizers(model)
            for _ in range(3):
                model(torch.ones(8, 64, device="cuda")).sum().backward()
                optimizer.step()
                optimizer.zero_grad()
        assert len(gpu.report().steps) == ran

def test_out_of_memory_is_raised_where_the_gpu_cannot_hold_it() -> None:
    # 2 GiB less the H100 generation's smallest CUDA context (450 MiB): 1,598 MiB to allocate
    with g.simulated_gpu(memory="2GiB") as gpu:
        kept = torch.empty(300 * MIB, dtype=torch.uint8, device="cuda")
        with pytest.raises(torch.cuda.OutOfMemoryError, match="CUDA out of memory"):
            torch.empty(1400 * MIB, dtype=torch.uint8, device="cuda")
        assert torch.cuda.memory_allocated() == 300 * MIB  # the refused one holds nothing
        del kept
        torch.empty(1400 * MIB, dtype=torch.uint8, device="cuda")  # room again
    report = gpu.report()
    assert report.out_of_memory and report.verdict.word == "no"


def test_the_memory_summary_is_the_simulations() -> None:
    with g.simulated_gpu("4090"):
        kept = torch.empty(3 * MIB, dtype=torch.uint8, device="cuda")
        summary = torch.cuda.memory_summary()
        assert torch.cuda.memory.memory_summary() == summary  # its home answers too
    assert "(simulated)" in summary and "NVIDIA GeForce RTX 4090" in summary
    allocated = next(line for line in summary.splitlines() if "Allocated memory" in line)
    assert allocated.split("|")[2:4] == [f"{'3.00 MiB':>18} ", f"{'3.00 MiB':>18} "]
    assert "Out-of-memory errors: 0" in summary
    del kept


def test_a_memory_fraction_caps_what_the_allocator_may_reserve() -> None:
    """torch.cuda.set_per_process_memory_fraction, as CUDACachingAllocator's
    setMemoryFraction: the reserved bytes may not pass the fraction of the total memory."""
    total = gpus.find("4090").memory_bytes
    with g.simulated_gpu("4090"):
        assert torch.cuda.get_per_process_memory_fraction() == 1.0
        torch.cuda.set_per_process_memory_fraction(0.25)
        assert torch.cuda.get_per_process_memory_fraction() == 0.25
        kept = torch.empty(int(0.2 * total), dtype=torch.uint8, device="cuda")
        with pytest.raises(torch.cuda.OutOfMemoryError, match="CUDA out of memory"):
            torch.empty(int(0.1 * total), dtype=torch.uint8, device="cuda")
        del kept
        torch.cuda.set_per_process_memory_fraction(1.0)  # the device's own limit again
        torch.empty(int(0.9 * total), dtype=torch.uint8, device="cuda")
        with pytest.raises(ValueError, match="Allowed range"):  # PyTorch's own check
            torch.cuda.set_per_process_memory_fraction(1.5)


def test_the_process_is_as_it_was_found_after_a_run_however_it_ends() -> None:
    with g.simulated_gpu("4090", steps=1):  # the first run's imports (sympy) add warning
        _train(3, [])                        # filters for good: no run's doing
    before = _state()
    with g.simulated_gpu("4090", steps=1):
        _train(3, [])
    assert changes(before, _state()) == {}
    with pytest.raises(RuntimeError, match="the user's"):
        with g.simulated_gpu():
            torch.ones(2, device="cuda")
            raise RuntimeError("the user's")
    assert changes(before, _state()) == {}
    with g.simulated_gpu(device="cpu"):
        torch.ones(2).sum().item()
    assert changes(before, _state()) == {}


def test_a_custom_cuda_extension_is_refused_by_name() -> None:
    import torch.utils.cpp_extension as cpp

    with pytest.raises(GeneratorError, match="torch.utils.cpp_extension.load "):
        with g.simulated_gpu():
            cpp.load(name="mine", sources=["mine.cu"])


def test_modelling_the_cpu_counts_every_storage_and_answers_no_gpu() -> None:
    with g.simulated_gpu(device="cpu") as gpu:
        assert not torch.cuda.is_available()
        x = torch.empty(1000)
        del x
    report = gpu.report()
    assert report.allocated_bytes == 4000 == report.peak_bytes  # no blocks, no cache
    assert report.reserved_bytes is None and report.verdict is None


@pytest.mark.parametrize("kwargs, needle", [
    ({"gpu": "no such gpu"}, "not a GPU of the catalogue"),
    ({"memory": "lots"}, "cannot read memory size"),
    ({"steps": 0}, "steps must be a positive"),
    ({"device": "tpu"}, "device must be one of"),
    ({"device": "cpu", "gpu": "4090"}, "takes no GPU"),
])
def test_bad_arguments_are_config_errors(kwargs: dict, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        g.simulated_gpu(**kwargs)


def test_the_report_is_there_after_the_block_only() -> None:
    with g.simulated_gpu() as gpu:
        with pytest.raises(ConfigError, match="after the `with` block"):
            gpu.report()
        with pytest.raises(ConfigError, match="one run at a time"):
            with g.simulated_gpu():
                pass
    with g.simulated_gpu():  # one after the other
        pass


def test_a_loop_s_small_tensors_are_freed_each_step() -> None:
    """Nothing the run itself holds keeps a step's tensors alive: the same loop body
    peaks at the same bytes every step (AMP with a GradScaler, moves, constants)."""
    with g.simulated_gpu(steps=4) as gpu:
        model = nn.Linear(16, 16).cuda()
        optimizer = torch.optim.AdamW(model.parameters())
        scaler = torch.amp.GradScaler("cuda")
        while True:
            x = torch.arange(16.0).to("cuda", non_blocking=True) + torch.tensor(1.0).cuda()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x.expand(4, 16)).float().pow(2).mean()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    later = gpu.report().steps[1:]
    assert len({(p.tensor_bytes, p.allocated_bytes, p.reserved_bytes) for p in later}) == 1


def test_a_triton_kernel_is_refused_by_name(monkeypatch) -> None:
    """Where Triton is installed its kernels launch through JITFunction.run (a stand-in
    Triton here: this machine has none)."""
    import importlib.machinery
    import types

    class JITFunction:
        def __init__(self, fn):
            self.fn = fn

        def run(self, *args, **kwargs):
            return "launched"

    modules = {name: types.ModuleType(name) for name in
               ("triton", "triton.runtime", "triton.runtime.jit")}
    for name, module in modules.items():
        module.__spec__ = importlib.machinery.ModuleSpec(name, None)
        monkeypatch.setitem(sys.modules, name, module)
    modules["triton.runtime.jit"].JITFunction = JITFunction

    def add_kernel():
        pass

    kernel = JITFunction(add_kernel)
    with pytest.raises(GeneratorError, match=r"Triton kernel \(add_kernel\)"):
        with g.simulated_gpu():
            kernel.run(grid=(1,))
    assert kernel.run() == "launched"


def test_streams_events_and_memory_stats() -> None:
    with g.simulated_gpu() as gpu:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        with torch.cuda.stream(torch.cuda.Stream()):
            torch.empty(100, device="cuda")
        end.record()
        torch.cuda.current_stream().synchronize()
        line = sys._getframe().f_lineno + 1
        assert start.elapsed_time(end) == 0.0 and end.query()
        stats = torch.cuda.memory_stats()
        assert stats["allocated_bytes.all.peak"] == 512 == torch.cuda.max_memory_allocated()
        assert stats["reserved_bytes.all.current"] == torch.cuda.memory_reserved()
    assert [(r.line, r.what) for r in gpu.report().placeholders] == [(line, "elapsed_time")]


def test_the_script_s_data_is_real_until_it_meets_the_gpu() -> None:
    """A shuffled loader reads real indices (randperm), token ids stay real on the host, and
    a batch moved to the GPU is fake there: no placeholder is read on the way."""
    from torch.utils.data import DataLoader

    lengths = [3, 9, 5, 7]
    with g.simulated_gpu("4090") as gpu:
        torch.manual_seed(0)
        order = torch.randperm(4).tolist()
        assert sorted(order) == [0, 1, 2, 3]
        ids = torch.tensor([1, 2, 3])
        assert not isinstance(ids, FakeTensor) and ids.sum().item() == 6
        loader = DataLoader([torch.arange(n) for n in lengths], batch_size=1, shuffle=True)
        seen = sorted(len(batch[0]) for batch in loader)
        assert seen == sorted(lengths)  # every sample once, at its own length
        on_gpu = ids.to("cuda")
        assert isinstance(on_gpu, FakeTensor) and on_gpu.is_cuda
    assert not gpu.report().placeholders


def test_data_on_the_gpu_keeps_its_values_and_shapes_that_depend_on_them() -> None:
    """Token ids moved to the GPU are fake there, their values kept beside them: a count of
    tokens reads as it is, and a boolean mask selects the shape it would on a GPU."""
    with g.simulated_gpu("4090") as gpu:
        labels = torch.tensor([[5, 7, -100, -100], [1, -100, -100, -100]]).to("cuda")
        assert isinstance(labels, FakeTensor) and labels.is_cuda
        valid = labels != -100
        assert int(valid.sum()) == 3 and valid.sum().item() == 3
        assert labels[valid].shape == (3,) and labels[valid].tolist() == [5, 7, 1]
        weights = torch.randn(4, 4, device="cuda")  # made on the GPU: no values
        (weights * 2).sum().item()
    assert [read.what for read in gpu.report().placeholders] == ["item"]


@pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile")
def test_flex_attention_keeps_its_fused_kernel_s_outputs_alone() -> None:
    """flex_attention, a higher-order op, runs whole: its outputs (out, logsumexp and the
    row maxima), as the compiled kernel's, not its reference implementation's full score
    matrix (which would be 2 MiB here), on the GPU, and its backward runs."""
    from torch.nn.attention.flex_attention import flex_attention

    with g.simulated_gpu("H100"):
        q = torch.ones(2, 4, 256, 64, device="cuda", requires_grad=True)  # 512 KiB
        before = torch.cuda.memory_allocated()
        out = flex_attention(q, q, q)
        assert out.is_cuda and out.shape == q.shape
        rows = 2 * 4 * 256 * 4  # 8 KiB each: logsumexp, row maxima (float32)
        grown = torch.cuda.memory_allocated() - before
        assert 512 * 1024 + 2 * rows <= grown < 512 * 1024 + 2 * rows + 16 * 1024
        out.sum().backward()
        assert q.grad.is_cuda
