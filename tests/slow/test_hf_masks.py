"""hf_masks: on fake tensors, transformers' tests of whether an attention mask can be left out
read a padding mask as one without padding, as a real run of the step's batches (no padding)
reads its values. Against real CPU runs: slow/test_hf_runs.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformers", reason="hf: models need transformers (pip install -e '.[hf]')")
masking = pytest.importorskip("transformers.masking_utils",
                              reason="transformers before 4.53 has no masking_utils")

import torch
from hf_offline import go_offline, write_config
from torch._subclasses.fake_tensor import FakeTensorMode

from generator.experiment import Experiment
from generator.measure.models import hf_masks
from generator.measure.run import measure_to_result

# An encoder-decoder whose decoder makes a padding mask of ones when given none (BART)
TINY_BART = {"model_type": "bart", "architectures": ["BartForConditionalGeneration"],
             "d_model": 64, "encoder_layers": 1, "decoder_layers": 1,
             "encoder_attention_heads": 4, "decoder_attention_heads": 4,
             "encoder_ffn_dim": 128, "decoder_ffn_dim": 128, "vocab_size": 1000,
             "max_position_embeddings": 256}
TINY_LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64,
              "intermediate_size": 128, "num_hidden_layers": 1, "num_attention_heads": 4,
              "num_key_value_heads": 2, "vocab_size": 1000, "max_position_embeddings": 256}


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return go_offline(monkeypatch, tmp_path / "hf-home")


def test_a_fake_padding_mask_is_read_as_one_without_padding() -> None:
    with hf_masks.fake_masks_read_as_unpadded(), FakeTensorMode():
        fake = torch.ones(2, 16, dtype=torch.bool)
        assert masking._ignore_causal_mask_sdpa(fake, 16, 16, 0, 0)
        assert masking._ignore_bidirectional_mask_sdpa(fake, 16)
        # a sliding window still needs its mask, padding mask and all
        assert not masking._ignore_causal_mask_sdpa(fake, 16, 16, 0, 0, 8)


def test_real_padding_masks_are_read_for_their_values() -> None:
    padded = torch.ones(2, 16, dtype=torch.bool)
    padded[1, -3:] = False
    with hf_masks.fake_masks_read_as_unpadded():
        assert masking._ignore_causal_mask_sdpa(torch.ones(2, 16, dtype=torch.bool), 16, 16,
                                                0, 0)
        assert not masking._ignore_causal_mask_sdpa(padded, 16, 16, 0, 0)
        assert not masking._ignore_bidirectional_mask_sdpa(padded, 16)


def test_transformers_gets_its_own_tests_back() -> None:
    own = masking._ignore_causal_mask_sdpa
    with hf_masks.fake_masks_read_as_unpadded():
        wrapped = masking._ignore_causal_mask_sdpa
        with hf_masks.fake_masks_read_as_unpadded():  # nested: wrapped once
            assert masking._ignore_causal_mask_sdpa is wrapped
        assert masking._ignore_causal_mask_sdpa is wrapped
    assert wrapped is not own and masking._ignore_causal_mask_sdpa is own


def estimate(tmp_path: Path, config: dict) -> dict:
    source = write_config(tmp_path / config["model_type"] / "config.json", config)
    result = measure_to_result(Experiment(model=f"hf:{source.parent}", batch_size=2,
                                          seq_len=32, device="cpu"))
    assert result["error"] is None, result["error_detail"]
    return result


def test_the_estimate_says_so_where_a_mask_was_read_so(tmp_path: Path) -> None:
    assert {"id": "unpadded_masks", "values": {}} in estimate(tmp_path, TINY_BART)["notes"]


def test_no_note_where_the_batch_has_no_mask_to_read(tmp_path: Path) -> None:
    assert all(n["id"] != "unpadded_masks" for n in estimate(tmp_path, TINY_LLAMA)["notes"])


def test_fake_position_ids_are_read_as_one_sequence_a_row() -> None:
    with hf_masks.fake_masks_read_as_unpadded():
        with FakeTensorMode():
            assert masking.find_packed_sequence_indices(torch.arange(16).expand(2, 16)) is None
        packed = torch.tensor([[0, 1, 2, 0, 1, 2]])  # real values are read: two sequences
        assert masking.find_packed_sequence_indices(packed).tolist() == [[0, 0, 0, 1, 1, 1]]
