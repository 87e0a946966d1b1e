"""Notes as data (generator/results/notes.py): every note the measuring code records is an
identifier with values whose words exist in both languages, and results of schema 1, whose
notes were English sentences, are read as schema 2 with their figures unchanged
(generator/results/migrate.py)."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest

from generator import results
from generator.results import migrate
from generator.results.notes import CATALOGUE, Note, fields, ident, note, text

#: Sentences schema 1 recorded (from results measured before notes were data), with the
#: note each stands for.
SCHEMA_1 = {
    "estimate: fake tensors, nothing allocated; kernels' internal buffers are not seen unless "
    "modelled": ("estimate", {}),
    "models CUDA: sizes rounded up to 512-byte blocks, foreach optimizer kernels":
        ("models_cuda", {"block": 512}),
    "autocast: CUDA's op policy of PyTorch 2.13 in place of the CPU's (pow, exp, sums, "
    "softmax, norms and losses in fp32; cat, stack not cast)": ("cuda_autocast", {"torch": "2.13"}),
    "gradient sums: 96 sums of two gradients made in place, where autograd makes them so in "
    "an untracked step (accumulation.py); a fake or tracked step makes each in a new tensor":
        ("in_place_sums", {"count": 96}),
    "allocated and reserved peaks: the CUDA caching allocator's rules replayed over 5 steps, "
    "with the cuBLAS workspaces of a Hopper (H100, H200, GH200, H800, H20) GPU":
        ("allocator_replay_assumed", {"steps": 5, "gpu": "NVIDIA H100 80GB HBM3"}),
    "LoRA: PEFT 0.21.2 adapters of rank 16 on query, value (PEFT's default for bert); the "
    "model's own weights frozen": ("lora_default", {"peft": "0.21.2", "rank": 16,
                                                    "modules": ["query", "value"],
                                                    "model_type": "bert"}),
    "QLoRA: bitsandbytes 0.50.2 nf4 weights in 112 linear layers (blocks of 64, double "
    "quantization), computed in bfloat16; linear layers not quantized: lm_head":
        ("qlora", {"bitsandbytes": "0.50.2", "quant_type": "nf4", "layers": 112, "block": 64,
                   "dtype": "bfloat16", "kept": ["lm_head"]}),
    "real run on the CPU with 2 threads": ("real_cpu_run", {"threads": 2}),
    "real run on NVIDIA H100 80GB HBM3": ("real_cuda_run", {"gpu": "NVIDIA H100 80GB HBM3"}),
    "real run: 4 processes under torchrun, NCCL, NVIDIA H100 80GB HBM3":
        ("sharding_torchrun_cuda", {"processes": 4, "gpu": "NVIDIA H100 80GB HBM3"}),
    "real run: 2 processes under torchrun, gloo, CPU": ("sharding_torchrun_cpu", {"processes": 2}),
    "LSTM: oneDNN's workspace saved for backward and the buffers its kernels hold while they "
    "run are modelled (kernel_workspaces.py); brgemm's per-thread buffers (bf16) are not":
        ("onednn_lstm", {}),
}


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_note_has_both_languages_and_the_same_values_in_each(name: str) -> None:
    words = CATALOGUE[name]
    assert words.en and words.zh
    in_zh = {f for _, f, _, _ in string.Formatter().parse(words.zh) if f}
    assert in_zh == fields(name)
    sample = {f: ["a", "b"] if f in ("modules", "kept") else 3 for f in fields(name)}
    assert text(note(name, **sample)) and text(note(name, **sample), "zh")


def test_a_note_must_be_known_and_given_its_values() -> None:
    with pytest.raises(KeyError, match="no note 'nonsense'"):
        note("nonsense")
    with pytest.raises(ValueError, match=r"takes \['count'\]"):
        note("in_place_sums")
    with pytest.raises(ValueError, match=r"takes \[\]"):
        note("estimate", extra=1)


def test_values_are_written_in_the_readers_language() -> None:
    built = note("built_on_device", freed_bytes=2000 * 2**20)
    assert "freed 1.95 GiB" in text(built) and "释放了 1.95 GiB" in text(built, "zh")
    qlora = note("qlora", bitsandbytes="0.50", quant_type="nf4", layers=3, block=64,
                 dtype="bfloat16", kept=["lm_head", "score"])
    assert text(qlora).endswith("not quantized: lm_head, score")
    assert text(qlora, "zh").endswith("没有量化的线性层：lm_head、score")
    assert text({**qlora, "values": {**qlora["values"], "kept": []}}).endswith(": none")
    assert text(note("in_place_sums", count=1234)).startswith("gradient sums: 1,234 sums")
    # a note of a later version is shown by its identifier, not dropped; old prose as written
    assert text({"id": "from_the_future", "values": {"x": 1}}) == "from_the_future: {'x': 1}"
    assert text("an old sentence", "zh") == "an old sentence" and ident("prose") is None
    said = Note.of(built)
    assert (said.id, dict(said.values), str(said)) == ("built_on_device",
                                                       {"freed_bytes": 2000 * 2**20}, text(built))


@pytest.mark.parametrize("sentence", SCHEMA_1)
def test_schema_1_sentences_become_their_notes(sentence: str) -> None:
    name, values = SCHEMA_1[sentence]
    assert migrate.read_note(sentence, {}) == {"id": name, "values": values}


def test_a_result_of_schema_1_reads_as_schema_2_its_figures_unchanged(tmp_path: Path) -> None:
    from made_results import hand_made_result

    old = hand_made_result()
    old["schema_version"] = 1
    old["notes"] = [*SCHEMA_1, "a sentence nobody wrote"]
    old["allocator"] = {"source": "a test", "steps": 5, "peak_allocated_bytes": old["peak_bytes"],
                        "peak_reserved_bytes": 2 * old["peak_bytes"], "workspace_bytes": 0,
                        "segments": 1, "out_of_memory": None, "context_bytes": [0, 0],
                        "freed_while_building_bytes": 7}
    old["notes"].append("model built on the GPU: building it freed 7 B (e.g. an output weight "
                        "that tying replaced), which the allocator keeps cached for the steps")
    path = tmp_path / "machine" / f"{old['key']}.json"
    path.parent.mkdir()
    path.write_text(json.dumps(old), encoding="utf-8")
    new = results.load(path)
    assert new["schema_version"] == results.SCHEMA_VERSION == 2
    assert [n["id"] for n in new["notes"][:len(SCHEMA_1)]] == [v[0] for v in SCHEMA_1.values()]
    assert new["notes"][len(SCHEMA_1)] == "a sentence nobody wrote"  # kept as written
    assert new["notes"][-1] == {"id": "built_on_device", "values": {"freed_bytes": 7}}
    for name in ("peak_bytes", "live_at_peak_bytes", "category_max_bytes", "timeline"):
        assert new[name] == old[name]
    assert json.loads(path.read_text())["schema_version"] == 1  # reading rewrites nothing


def test_an_unknown_schema_is_still_refused(tmp_path: Path) -> None:
    path = tmp_path / "m" / "r.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"schema_version": 3}), encoding="utf-8")
    with pytest.raises(results.ResultsError, match="reads schemas 1 to 2"):
        results.load(path)
