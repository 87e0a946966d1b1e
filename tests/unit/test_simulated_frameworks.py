"""What frameworks ask of the simulated GPU below torch.cuda's public functions
(simulate/device.py `answered`, recompute.py, copies.py): torch.accelerator, CUDA's random
generator, the current device's exchange, autocast's state as "cuda", pinned memory,
torch._C's functions a CPU build lacks, a checkpointed block recomputed in its forward
pass's modes, and deep copies in the run's fake mode; each put back afterwards. Tiny fake
tensors; the frameworks themselves run in tests/slow/test_run_frameworks.py."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
import torch.utils.checkpoint as torch_checkpoint
from torch import nn
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

import generator as g

MIB = 2**20


def _patched() -> dict:
    """Everything a run replaces here, as found."""
    return {
        "accelerator": {name: getattr(torch.accelerator, name) for name in
                        ("is_available", "current_accelerator", "device_count",
                         "memory_allocated", "current_stream")},
        "accelerator memory": torch.accelerator.memory.memory_allocated,
        "cuda random": {name: getattr(module, name) for module in (torch.cuda,
                                                                   torch.cuda.random)
                        for name in ("manual_seed", "get_rng_state", "initial_seed")},
        "cuda memory": torch.cuda.memory.max_memory_allocated,
        "exchange": (torch.cuda._exchange_device, torch.cuda.is_current_stream_capturing),
        "torch._C": [hasattr(torch._C, name) for name in ("_cuda_getCurrentRawStream",
                                                          "_cuda_getDevice")],
        "autocast": (torch.is_autocast_enabled, torch.get_autocast_dtype),
        "pin_memory": "pin_memory" in torch.Tensor.__dict__,
        "checkpoint": (torch_checkpoint._checkpoint_without_reentrant_generator,
                       torch_checkpoint.CheckpointFunction),
        "deepcopy": ("__deepcopy__" in FakeTensorMode.__dict__,
                     "__deepcopy__" in FakeTensor.__dict__),
    }


def test_torch_accelerator_is_the_simulated_gpu() -> None:
    """accelerate picks its device here (get_torch_accelerator_backend)."""
    with g.simulated_gpu("4090"):
        assert torch.accelerator.is_available()
        assert torch.accelerator.current_accelerator() == torch.device("cuda")
        assert torch.accelerator.device_count() == 1
        assert torch.accelerator.current_device_index() == 0
        x = torch.empty(1000, device="cuda")
        assert torch.accelerator.memory_allocated() == 4096 == torch.cuda.memory_allocated()
        assert torch.accelerator.memory.max_memory_allocated() == 4096
        assert torch.accelerator.get_memory_info() == torch.cuda.mem_get_info()
        assert not torch.accelerator.current_stream().is_capturing()  # torch.optim asks
        assert torch.cuda.memory.max_memory_allocated() == 4096  # torch.cuda.memory's own
        del x
    assert not torch.accelerator.is_available()  # this CPU build has none


def test_cuda_s_random_generator_takes_seeds_and_keeps_its_state() -> None:
    with g.simulated_gpu():
        torch.manual_seed(1234)  # torch's own seeds CUDA's too (every set_seed does)
        assert torch.cuda.initial_seed() == 1234 == torch.cuda.random.initial_seed()
        state = torch.cuda.get_rng_state()
        assert not isinstance(state, FakeTensor) and state.dtype == torch.uint8
        assert state.tolist() == list((1234).to_bytes(8, "little")) + [0] * 8
        torch.cuda.manual_seed_all(7)
        assert torch.cuda.get_rng_state_all()[0].tolist()[:8] == [7] + [0] * 7
        torch.cuda.set_rng_state_all([state])  # a checkpoint's, loaded back
        assert torch.cuda.get_rng_state().tolist() == state.tolist()
        torch.cuda.seed()
        assert torch.cuda.initial_seed() != 7


def test_the_current_device_is_exchanged_and_nothing_is_captured() -> None:
    """bitsandbytes enters `torch.cuda.device_of(t)`; torch.cuda.device(i) the same way."""
    with g.simulated_gpu():
        on_gpu = torch.ones(2, device="cuda")
        with torch.cuda.device(0), torch.cuda.device_of(on_gpu):
            assert torch.cuda.current_device() == 0
        assert not torch.cuda.is_current_stream_capturing()
        assert torch.cuda.current_stream().cuda_stream == 0
        assert torch._C._cuda_getCurrentRawStream(0) == 0  # bitsandbytes' CUDA backend
        assert torch.cuda.random.get_rng_state().numel() == 16  # by torch._C._cuda_getDevice


def test_autocast_as_cuda_answers_as_the_cpu_autocast_it_became() -> None:
    """PEFT's LoRA over bitsandbytes asks torch.is_autocast_enabled(); checkpoint reads both."""
    with g.simulated_gpu():
        assert not torch.is_autocast_enabled() and not torch.is_autocast_enabled("cuda")
        assert torch.get_autocast_dtype("cuda") == torch.float16  # CUDA autocast's default
        with torch.autocast("cuda", dtype=torch.bfloat16):
            assert torch.is_autocast_enabled() and torch.is_autocast_enabled("cuda")
            assert torch.get_autocast_dtype("cuda") == torch.bfloat16
            assert torch.is_autocast_enabled("cpu")  # what CUDA's autocast became


def test_pinned_host_memory_is_not_the_gpu_s() -> None:
    """DataLoader pins each batch once an accelerator is there (Trainer's default)."""
    with g.simulated_gpu():
        batch = torch.ones(256)
        pinned = batch.pin_memory()
        assert isinstance(pinned, FakeTensor) and not pinned.is_cuda
        assert torch.cuda.memory_allocated() == 0


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv, self.out = nn.Linear(32, 96), nn.Linear(32, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).view(2, 16, 3, 2, 16).permute(2, 0, 3, 1, 4)
        attention = F.scaled_dot_product_attention(q, k, v, dropout_p=0.1, is_causal=True)
        made_inside = torch.ones(32, device="cuda")  # Placement, also while recomputing
        return F.dropout(self.out(attention.transpose(1, 2).reshape(2, 16, 32)) * made_inside,
                         0.1)


@pytest.mark.parametrize("reentrant", [False, True])
def test_a_checkpointed_block_recomputes_with_the_gpu_s_kernels(reentrant: bool) -> None:
    """Without the forward's modes in backward, the recomputation would run the CPU's
    dropout and attention, save other tensors and stop at checkpoint's own check (the
    non-reentrant variant), or make a CUDA device's tensor the run cannot place. The modes
    entered again for it are left as they were (FakeTensor.tolist is the run's, then none)."""
    from torch._subclasses.fake_tensor import FakeTensor

    tolist = FakeTensor.__dict__["tolist"]
    with g.simulated_gpu():
        block = _Block().cuda()
        x = torch.randn(2, 16, 32, device="cuda", requires_grad=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y = torch_checkpoint.checkpoint(block, x, use_reentrant=reentrant)
        y.float().sum().backward()
        assert x.grad.is_cuda and block.qkv.weight.grad.is_cuda
    assert FakeTensor.__dict__["tolist"] is tolist


def test_a_deep_copy_stays_in_the_run_s_fake_mode() -> None:
    """nn.TransformerEncoder copies its layer; the parameters made before it can still move."""
    with g.simulated_gpu():
        embed = nn.Embedding(100, 32)
        encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(32, 2, 64), 2,
                                        enable_nested_tensor=False)
        assert encoder.layers[1].linear1.weight.fake_mode is embed.weight.fake_mode
        assert copy.deepcopy(embed).weight.fake_mode is embed.weight.fake_mode
        nn.Sequential(embed, encoder).to("cuda")
        assert embed.weight.is_cuda and encoder.layers[0].linear1.weight.is_cuda
        before = torch.cuda.memory_allocated()
        twin = copy.deepcopy(embed)  # a copy of its own, on the GPU, a parameter still
        assert twin.weight is not embed.weight and twin.weight.is_cuda
        assert isinstance(twin.weight, nn.Parameter) and twin.weight.requires_grad
        assert torch.cuda.memory_allocated() == before + 100 * 32 * 4


def test_everything_is_put_back_however_the_run_ends() -> None:
    before = _patched()
    with g.simulated_gpu():
        torch.cuda.manual_seed(3)
    assert _patched() == before
    with pytest.raises(RuntimeError, match="the user's"):
        with g.simulated_gpu():
            raise RuntimeError("the user's")
    assert _patched() == before
    with g.simulated_gpu(device="cpu"):  # the CPU has no torch.cuda answers, the rest it has
        assert not torch.accelerator.is_available()
    assert _patched() == before
