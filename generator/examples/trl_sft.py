"""Supervised fine-tuning with TRL's SFTTrainer and a LoRA adapter, as its documentation
writes it: a causal language model loaded with `from_pretrained`, a PEFT LoraConfig, an
SFTConfig with bf16, gradient checkpointing and (optionally) packing. The data is generated
here: texts of varied lengths, tokenized by a small word-level tokenizer built in code (a
script would download both). Nothing in it knows about this tool.

    python generator/examples/trl_sft.py --model PATH_OF_A_SMALL_MODEL       # for real
    python -m generator run --gpu "RTX 4090" generator/examples/trl_sft.py  # simulated:
        # meta-llama/Llama-3.2-1B from its configuration alone, no weights read
"""

import argparse
import random

import torch
from datasets import Dataset
from peft import LoraConfig
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast
from trl import SFTConfig, SFTTrainer

WORDS = [f"w{i}" for i in range(500)]


def word_tokenizer() -> PreTrainedTokenizerFast:
    vocab = {word: i for i, word in enumerate(["<pad>", "<eos>", "<unk>", *WORDS])}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>",
                                   eos_token="<eos>", unk_token="<unk>")


def texts(count: int, longest: int) -> Dataset:
    """`count` texts of 16 to `longest` words, the spread of lengths a real corpus has."""
    pick = random.Random(0)
    return Dataset.from_dict({"text": [
        " ".join(pick.choices(WORDS, k=pick.randint(16, longest))) for _ in range(count)]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="meta-llama/Llama-3.2-1B")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--max-length", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--packing", action="store_true")
    parser.add_argument("--rank", type=int, default=16)
    args = parser.parse_args()

    cuda = torch.cuda.is_available()
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16)
    config = SFTConfig(
        output_dir="sft-output", max_steps=args.steps, per_device_train_batch_size=args.batch_size,
        max_length=args.max_length, packing=args.packing, bf16=True, use_cpu=not cuda,
        gradient_checkpointing=True, learning_rate=2e-4, logging_steps=1, report_to=[],
        save_strategy="no")
    trainer = SFTTrainer(model=model, args=config, train_dataset=texts(64, args.max_length),
                         processing_class=word_tokenizer(),
                         peft_config=LoraConfig(r=args.rank, lora_alpha=2 * args.rank,
                                                target_modules="all-linear",
                                                task_type="CAUSAL_LM"))
    trainer.train()
    if cuda:
        print(f"max memory allocated: {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
