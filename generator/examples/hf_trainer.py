"""Hugging Face's Trainer, as users write it: a small GPT-2 built from its config in code, a
dataset of generated tokens, TrainingArguments with bf16 (or fp32), gradient checkpointing and
gradient accumulation, an optimizer chosen by name, optionally PEFT's LoRA. Nothing in it
knows about this tool.

    python generator/examples/hf_trainer.py                     # for real, on this machine
    python -m generator run --gpu "RTX 4090" generator/examples/hf_trainer.py --lora
    python -m generator run --device cpu generator/examples/hf_trainer.py --optim adamw_torch_fused

The optimizers: adamw_torch, adamw_torch_fused (PyTorch's fused kernel) and adamw_bnb_8bit
(bitsandbytes' 8-bit AdamW).
"""

import argparse
import tempfile

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

OPTIMIZERS = ("adamw_torch", "adamw_torch_fused", "adamw_bnb_8bit")


class Tokens(torch.utils.data.Dataset):
    """Generated token sequences, each its own (seeded by its index)."""

    def __init__(self, size: int, seq_len: int, vocab: int) -> None:
        self.size, self.seq_len, self.vocab = size, seq_len, vocab

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> dict:
        generator = torch.Generator().manual_seed(index)
        ids = torch.randint(0, self.vocab, (self.seq_len,), generator=generator)
        return {"input_ids": ids, "labels": ids}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--grad-accum", type=int, default=2)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--optim", choices=OPTIMIZERS, default="adamw_torch")
    parser.add_argument("--lora", action="store_true", help="train PEFT LoRA adapters only")
    parser.add_argument("--precision", choices=("bf16", "fp32"), default="bf16")
    args = parser.parse_args()

    torch.manual_seed(0)
    config = GPT2Config(vocab_size=1000, n_positions=args.seq_len, n_embd=128, n_layer=2,
                        n_head=4, bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config)
    if args.lora:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16,
                                                 target_modules=["c_attn", "c_proj"],
                                                 fan_in_fan_out=True, task_type="CAUSAL_LM"))
    data = Tokens(args.batch_size * args.grad_accum * args.steps, args.seq_len,
                  config.vocab_size)
    with tempfile.TemporaryDirectory() as output:
        training = TrainingArguments(
            output_dir=output, max_steps=args.steps, per_device_train_batch_size=args.batch_size,
            gradient_accumulation_steps=args.grad_accum, bf16=args.precision == "bf16",
            gradient_checkpointing=True,
            optim=args.optim, learning_rate=1e-4, logging_steps=1, report_to=[],
            save_strategy="no", disable_tqdm=True,
            use_cpu=not torch.cuda.is_available())  # bf16 on the CPU asks for it
        Trainer(model=model, args=training, train_dataset=data).train()
    if torch.cuda.is_available():
        print(f"max memory allocated: {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
