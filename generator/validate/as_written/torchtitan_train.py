"""torchtitan's own trainer (`python -m torchtitan.train`, torchtitan 0.2.2), unchanged, with a
tokenizer and a text data set shipped beside this file in place of the ones it downloads.

    python -m generator run --gpus 8 -m generator.validate.as_written.torchtitan_train \
        --model.flavor 8B [torchtitan's own options]

torchtitan reads its tokenizer from `--model.hf_assets_path` (Llama 3.1's, from the Hub) and
its data from `--training.dataset_path` (C4, streamed from the Hub). This machine reaches
neither, so both are given here, ahead of the script's own arguments:
torchtitan_assets/tokenizer, a byte-level BPE tokenizer of 300 tokens made with the
`tokenizers` package, and torchtitan_assets/c4_test, two documents in C4's format, which
torchtitan's `c4_test` loader reads. The model's vocabulary is its flavor's (128,256 for
Llama 3.1 8B), whatever the tokenizer's: no token id reaches past it, and a batch's shape is
the local batch × the sequence length however the text is tokenized. Nothing else of
torchtitan's is changed.

Why 0.2.2 and not torchtitan's newest release (0.3.0): 0.3.0 needs a newer PyTorch than
2.13.0 (after its first step it calls `torch.distributed.set_timeout`, which 2.13.0 lacks;
its default `spmd_types` backend needs a `fully_shard` that reads spmd_types' annotations).
"""

from __future__ import annotations

import sys
from pathlib import Path

ASSETS = Path(__file__).resolve().parent / "torchtitan_assets"
#: The shipped tokenizer and data set, in torchtitan's own options (see the module).
ASSET_OPTIONS = ("--model.hf_assets_path", str(ASSETS / "tokenizer"),
                 "--training.dataset", "c4_test",
                 "--training.dataset_path", str(ASSETS / "c4_test"))


def main() -> None:
    # torchtitan's ConfigManager.parse_args reads sys.argv[1:] as its default argument, bound
    # when torchtitan.config.manager is imported: the options go in before that
    sys.argv[1:1] = ASSET_OPTIONS
    from torchtitan.train import Trainer, main as torchtitan_main

    torchtitan_main(Trainer)


if __name__ == "__main__":
    main()
