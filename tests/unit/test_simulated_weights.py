"""Checkpoints loaded on the simulated GPU (generator/simulate/weights.py, pretrained.py):
their tensors come from the header alone (safetensors' JSON header, torch.load's pickle with
no record read), are fake, and count where a real load would put them; from_pretrained
answers from a local folder, a config alone or a shipped config, and never from the network;
`Module.to` swaps fake parameters in place (inside the profiler too); a checkpoint the script
saves holds its header (save_pretrained's too). Tiny checkpoints written in tmp_path."""

from __future__ import annotations

import os
import sys

import pytest
import torch
from conftest import assert_refused
from safetensors.torch import save_file
from torch import nn
from torch._subclasses.fake_tensor import FakeTensor

import generator as g
from generator.errors import ModelError
from generator.simulate.pretrained import NotOnThisMachine
from generator.simulate.weights import HeaderOnly, safetensors_header, write_header_only

TENSORS = {"embed.weight": ((64, 16), torch.bfloat16), "head.bias": ((64,), torch.float32),
           "steps": ((), torch.int64)}


def _tiny_llama_config():
    from transformers import LlamaConfig

    return LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64,
                       num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                       max_position_embeddings=64, tie_word_embeddings=False)


def _cut(path, keep: int) -> None:
    """The file's data section cut to `keep` bytes: only its header is whole."""
    header = int.from_bytes(path.read_bytes()[:8], "little")
    os.truncate(path, 8 + header + keep)


def test_a_safetensors_header_gives_shapes_and_dtypes_in_the_data_s_order(tmp_path) -> None:
    path = tmp_path / "x.safetensors"
    save_file({name: torch.zeros(shape, dtype=dtype) for name, (shape, dtype) in
               TENSORS.items()}, str(path), metadata={"format": "pt", "step": "3"})
    entries, metadata = safetensors_header(path)
    assert {n: (e.shape, e.dtype) for n, e in entries.items()} == TENSORS
    assert [e.offsets[0] for e in entries.values()] == sorted(e.offsets[0]
                                                              for e in entries.values())
    assert entries["embed.weight"].nbytes == 64 * 16 * 2 and metadata["step"] == "3"
    written = tmp_path / "header_only.safetensors"
    write_header_only(written, TENSORS)  # the same header, with no data after it
    again, _ = safetensors_header(written)
    assert {n: (e.shape, e.dtype, e.nbytes) for n, e in again.items()} == {
        n: (e.shape, e.dtype, e.nbytes) for n, e in entries.items()}


@pytest.mark.parametrize("content", [b"", b"not a safetensors file at all",
                                     (12).to_bytes(8, "little") + b"[1, 2, 3]   "])
def test_what_is_not_a_safetensors_file_is_one_line(tmp_path, content: bytes) -> None:
    path = tmp_path / "x.safetensors"
    path.write_bytes(content)
    with pytest.raises(ModelError, match="not a safetensors file"):
        safetensors_header(path)


def test_safetensors_loads_are_fake_and_read_no_data(tmp_path) -> None:
    from safetensors.torch import load_file

    path = tmp_path / "x.safetensors"
    save_file({"w": torch.zeros(1024, 256), "b": torch.zeros(256, dtype=torch.bfloat16)},
              str(path))
    _cut(path, 100)  # the data is mostly gone: a load that read it would fail
    with pytest.raises(Exception):
        load_file(str(path))
    with g.simulated_gpu("RTX 4090"):
        loaded = load_file(str(path))  # the script's own `from ... import` finds it too
        assert all(isinstance(t, FakeTensor) for t in loaded.values())
        assert (loaded["w"].shape, loaded["b"].dtype) == ((1024, 256), torch.bfloat16)
        assert torch.cuda.memory_allocated() == 0  # on the host, as asked
        # a view of the one mapping of the file, as safetensors' mmap gives it
        assert loaded["w"].untyped_storage() is loaded["b"].untyped_storage()
        from safetensors import safe_open  # as a script imports it, in the run

        with safe_open(str(path), framework="pt", device="cuda") as f:
            assert f.keys() == ["b", "w"] and f.get_slice("w").get_shape() == [1024, 256]
            part = f.get_slice("w")[:512]  # a slice is its own part only
            assert part.shape == (512, 256) and part.is_cuda
            assert torch.cuda.memory_allocated() == 512 * 256 * 4
            whole = f.get_tensor("w")
            assert whole.is_cuda and torch.cuda.memory_allocated() == 3 * 512 * 256 * 4
    assert sys.modules["safetensors"].safe_open is not HeaderOnly  # put back: it reads again
    with pytest.raises(Exception):
        load_file(str(path))


def test_torch_load_unpickles_the_header_and_reads_no_record(tmp_path, monkeypatch) -> None:
    path = tmp_path / "state.pt"
    weight = torch.randn(300, 100)
    torch.save({"weight": weight, "rows": weight[:10], "bias": torch.zeros(300).half(),
                "step": 7}, path)
    reader = torch._C.PyTorchFileReader

    def refused(*_args, **_kwargs):
        raise AssertionError("a record of the checkpoint was read")

    monkeypatch.setattr(reader, "get_storage_from_record", refused)
    with g.simulated_gpu(device="cpu") as run:
        state = torch.load(path)  # weights_only, PyTorch's own unpickler
        assert state["step"] == 7 and isinstance(state["weight"], FakeTensor)
        assert (state["weight"].shape, state["bias"].dtype) == ((300, 100), torch.float16)
        # a view stays a view of the one storage, which the CPU allocator would hold
        assert state["rows"].untyped_storage() is state["weight"].untyped_storage()
        model = nn.Linear(100, 300)
        model.load_state_dict({"weight": state["weight"], "bias": state["bias"]})
        layer = 300 * 100 * 4 + 300 * 4
        assert run.memory.allocated_bytes == (300 * 100 * 4 + 300 * 2) + layer
        del state  # the checkpoint's storages go with its tensors, as a real load's do
        assert run.memory.allocated_bytes == layer
    with g.simulated_gpu("RTX 4090"):
        assert not torch.load(path)["weight"].is_cuda
        assert torch.cuda.memory_allocated() == 0
        on_gpu = torch.load(path, map_location="cuda", mmap=True)
        assert on_gpu["weight"].is_cuda and on_gpu["bias"].is_cuda
        assert torch.cuda.memory_allocated() == 120_320 + 1024  # two blocks, in 512 B steps
        cpu = torch.load(path, map_location=lambda storage, location: storage)
        assert not cpu["weight"].is_cuda


@pytest.mark.parametrize("flags", [(False, False), (True, False), (False, True)],
                         ids=["default", "overwrite", "swap"])
@pytest.mark.parametrize("built", ["before the run", "in the run"])
def test_module_to_moves_fake_parameters_and_no_data(flags, built: str) -> None:
    overwrite, swap = torch.__future__.get_overwrite_module_params_on_conversion(), \
        torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_overwrite_module_params_on_conversion(flags[0])
    torch.__future__.set_swap_module_params_on_conversion(flags[1])
    try:
        model = nn.Linear(100, 1000) if built == "before the run" else None
        with g.simulated_gpu("H100"):
            model = model or nn.Linear(100, 1000)
            model.weight.grad = torch.zeros(1000, 100)
            model.to("cuda").to(torch.bfloat16)
            assert isinstance(model.weight, FakeTensor) and model.weight.is_cuda
            assert model.weight.grad.is_cuda and model.weight.dtype == torch.bfloat16
            # weight and its gradient in bf16 (200,000 B in 512 B steps), and the bias
            assert torch.cuda.memory_allocated() == 2 * 200_192 + 2048
    finally:
        torch.__future__.set_overwrite_module_params_on_conversion(overwrite)
        torch.__future__.set_swap_module_params_on_conversion(swap)


def test_from_pretrained_of_a_folder_with_config_and_weights_reads_the_header(tmp_path) -> None:
    from transformers import AutoModelForCausalLM

    real = AutoModelForCausalLM.from_config(_tiny_llama_config())
    real.save_pretrained(tmp_path)
    _cut(tmp_path / "model.safetensors", 64)
    with g.simulated_gpu("H100"):
        model = AutoModelForCausalLM.from_pretrained(tmp_path, dtype=torch.bfloat16,
                                                     device_map="cuda")
        params = dict(model.named_parameters())
        assert all(isinstance(p, FakeTensor) and p.is_cuda and p.dtype == torch.bfloat16
                   for p in params.values())
        assert {n: p.shape for n, p in params.items()} == {
            n: p.shape for n, p in real.named_parameters()}


def test_from_pretrained_of_a_config_alone_builds_the_saved_tensors(tmp_path) -> None:
    from transformers import AutoModelForCausalLM

    config = _tiny_llama_config()
    config.architectures = ["LlamaForCausalLM"]  # as save_pretrained writes it
    config.dtype = torch.float16  # what the checkpoint holds: dtype="auto" keeps it
    config.save_pretrained(tmp_path)
    assert os.listdir(tmp_path) == ["config.json"]
    with g.simulated_gpu("H100"):
        model = AutoModelForCausalLM.from_pretrained(tmp_path, dtype="auto").cuda()
        assert model.lm_head.weight.dtype == torch.float16 and model.lm_head.weight.is_cuda
        count = sum(p.numel() for p in model.parameters())
        assert torch.cuda.memory_allocated() >= 2 * count
        wider = AutoModelForCausalLM.from_pretrained(str(tmp_path), dtype=torch.float32)
        assert wider.lm_head.weight.dtype == torch.float32


def test_from_pretrained_of_a_shipped_hub_id_is_answered_offline() -> None:
    from huggingface_hub import constants
    from transformers import AutoModelForCausalLM

    offline = constants.HF_HUB_OFFLINE
    with g.simulated_gpu("H100"):
        assert constants.HF_HUB_OFFLINE and os.environ["HF_HUB_OFFLINE"] == "1"
        model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B",
                                                     dtype=torch.bfloat16)
        assert model.lm_head.weight is model.model.embed_tokens.weight  # tied, once
        assert torch.cuda.memory_allocated() == 0  # built on the host, where it was asked
        model.to("cuda")
        count = sum(p.numel() for p in model.parameters())
        assert 1.2e9 < count < 1.3e9
        assert 2 * count <= torch.cuda.memory_allocated() < 2 * count + 2**22  # + buffers
        with pytest.raises(NotOnThisMachine, match="no config.json for it on this machine"):
            AutoModelForCausalLM.from_pretrained("nobody/no-such-model-7B")
    assert constants.HF_HUB_OFFLINE == offline


def test_device_map_auto_puts_a_model_that_fits_on_the_one_gpu() -> None:
    from transformers import AutoModelForCausalLM

    with g.simulated_gpu("H100"):
        model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B", device_map="auto")
        # the whole model on the one GPU (transformers keeps no hf_device_map for one device)
        assert all(p.is_cuda for p in model.parameters())


def test_the_process_is_as_it_was_found_after_loads() -> None:
    import safetensors
    import transformers.modeling_utils as modeling
    import transformers.utils.hub as hub

    import generator.simulate.weights as weights

    before = (torch.load, safetensors.safe_open, modeling.safe_open, hub.cached_files,
              modeling._get_resolved_checkpoint_files, list(sys.meta_path), dict(os.environ),
              torch.save, weights.HeaderOnly)
    for _ in range(2):  # and the second run finds everything to replace again
        with g.simulated_gpu("H100"):
            assert torch.load is not before[0] and modeling.safe_open is HeaderOnly
            assert hub.cached_files is not before[3] and torch.save is not before[7]
            AutoConfig = __import__("transformers").AutoConfig
            AutoConfig.from_pretrained("gpt2")  # a shipped config, through the patched lookup
        after = (torch.load, safetensors.safe_open, modeling.safe_open, hub.cached_files,
                 modeling._get_resolved_checkpoint_files, list(sys.meta_path),
                 dict(os.environ), torch.save, weights.HeaderOnly)
        assert after == before


def test_a_model_built_on_the_meta_device_holds_no_memory() -> None:
    """from_pretrained builds the model under `torch.device("meta")` before it loads: the
    CPU allocator holds nothing for it, and neither does the simulation modelling the CPU."""
    with g.simulated_gpu(device="cpu") as run:
        with torch.device("meta"):
            model = nn.Linear(1000, 1000)
        assert model.weight.device.type == "meta" and run.memory.allocated_bytes == 0


def test_a_hub_id_found_nowhere_ends_the_run_as_one_line(cli, tmp_path) -> None:
    script = tmp_path / "load.py"
    script.write_text("from transformers import AutoModelForCausalLM\n"
                      "AutoModelForCausalLM.from_pretrained('nobody/no-such-model-7B')\n",
                      encoding="utf-8")
    assert_refused(cli, tmp_path, ["run", script], "from_pretrained('nobody/no-such-model-7B')",
                   "never uses the network")


def test_a_folder_whose_weights_transformers_refuses_is_not_a_config_alone(tmp_path) -> None:
    from transformers import AutoModelForCausalLM

    config = _tiny_llama_config()
    config.architectures = ["LlamaForCausalLM"]
    config.save_pretrained(tmp_path)
    (tmp_path / "pytorch_model.bin").write_bytes(b"")
    with g.simulated_gpu("H100"):
        with pytest.raises(OSError, match="model.safetensors"):  # transformers' own error
            AutoModelForCausalLM.from_pretrained(tmp_path, use_safetensors=True)


def test_a_model_moved_to_the_gpu_inside_the_profiler_keeps_its_parameters() -> None:
    """The profiler, recording shapes and memory, holds a weak pointer (C++) to each tensor
    an op met, which `torch.utils.swap_tensors` refuses; `Module.to` of fake parameters
    swaps them, so each parameter's data is set in place instead: the optimizer made
    before the move steps the parameters on the GPU."""
    with g.simulated_gpu("H100"):
        model = nn.Sequential(nn.Linear(100, 100), nn.Linear(100, 10))
        weight = model[0].weight
        optimizer = torch.optim.AdamW(model.parameters())
        with torch.profiler.profile(record_shapes=True, profile_memory=True):
            model(torch.randn(2, 100)).sum().backward()  # the profiler meets every parameter
            model.to("cuda")
        assert model[0].weight is weight and weight.is_cuda and weight.grad.is_cuda
        assert isinstance(weight, nn.Parameter) and weight.requires_grad
        before = torch.cuda.memory_allocated()
        optimizer.step()
        assert optimizer.state[weight]["exp_avg"].is_cuda
        # Adam's two moments of each of the four tensors, on the GPU (in 512 B steps), and
        # its step counts, which stay on the host
        assert torch.cuda.memory_allocated() - before == 2 * (40_448 + 512 + 4_096 + 512)


def test_save_pretrained_of_a_simulated_model_writes_each_weight_s_header(tmp_path) -> None:
    """transformers refuses to save weights that share a storage; the simulated storages
    hold no data, and an address of their own each (addresses.py), so a model of many
    weights of one size saves (the Trainer's checkpoint) and a tied weight is saved once."""
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(vocab_size=64, n_positions=16, n_embd=16, n_layer=2, n_head=2)
    with g.simulated_gpu("H100"):
        model = GPT2LMHeadModel(config).cuda()
        model.save_pretrained(tmp_path)
        first, second = model.transformer.h[0].attn.c_attn.weight, \
            model.transformer.h[1].attn.c_attn.weight
        storage = first.untyped_storage()
        assert storage.data_ptr() != 0 and storage.data_ptr() != \
            second.untyped_storage().data_ptr()
        assert first[1:].untyped_storage().data_ptr() == storage.data_ptr()  # a view's own
        assert torch.empty(0).untyped_storage().data_ptr() == 0  # no bytes: no address
        assert first.data_ptr() == 0  # nothing reads a simulated tensor's bytes
    entries, _ = safetensors_header(tmp_path / "model.safetensors")
    saved = {name: (tuple(t.shape), t.dtype) for name, t in model.state_dict().items()
             if name != "lm_head.weight"}  # tied to the embedding: saved once
    assert {name: (e.shape, e.dtype) for name, e in entries.items()} == saved
    # the process as it was found: PyTorch's own data_ptr again
    assert "data_ptr" not in torch.Tensor.__dict__ | torch.UntypedStorage.__dict__


def test_a_checkpoint_the_script_saves_holds_its_header_and_no_data(tmp_path) -> None:
    """torch.save and safetensors' save_file write what a simulated tensor has: its header;
    the data's place is left empty (a sparse file of the real file's size), and the script
    loads its checkpoint again, onto the device it was saved from."""
    with g.simulated_gpu("H100"):
        model = nn.Linear(1000, 1000).cuda()
        torch.save(model.state_dict(), tmp_path / "state.pt")
        from safetensors.torch import load_file, save_file

        save_file(model.state_dict(), str(tmp_path / "state.safetensors"))
        assert torch.cuda.memory_allocated() == 4_000_256 + 4096  # the model alone
        again = torch.load(tmp_path / "state.pt")
        assert again["weight"].is_cuda and isinstance(again["weight"], FakeTensor)
        assert load_file(str(tmp_path / "state.safetensors"))["bias"].shape == (1000,)
    for name in ("state.pt", "state.safetensors"):
        written = (tmp_path / name).stat()
        assert written.st_size > 4_000_000 > written.st_blocks * 512  # sized, not written


@pytest.mark.parametrize("tied", [False, True], ids=["untied", "tied"])
def test_save_pretrained_of_a_model_built_in_the_run_tells_tied_weights(tmp_path,
                                                                        tied: bool) -> None:
    """save_pretrained finds tied weights by their storages' data pointers: each simulated
    storage answers one of its own (a view its base's; addresses.py), so an untied model saves every
    weight and a tied one its shared weight once, and the model loads again."""
    from transformers import AutoModelForCausalLM, LlamaForCausalLM

    before = torch.UntypedStorage.data_ptr, torch.Tensor.data_ptr
    config = _tiny_llama_config()
    config.tie_word_embeddings = tied
    with g.simulated_gpu("H100"):
        a, b = torch.empty(4), torch.empty(4)
        assert a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr() != 0
        assert a[2:].untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
        assert a[2:].data_ptr() == 0  # nothing reads or writes through it (addresses.py)
        LlamaForCausalLM(config).save_pretrained(tmp_path)
        again = AutoModelForCausalLM.from_pretrained(tmp_path)
        assert (again.lm_head.weight is again.model.embed_tokens.weight) == tied
    assert (torch.UntypedStorage.data_ptr, torch.Tensor.data_ptr) == before
    saved, _ = safetensors_header(tmp_path / "model.safetensors")
    assert ("lm_head.weight" in saved) != tied and "model.embed_tokens.weight" in saved
