"""QLoRA with Hugging Face's Trainer, as users write it: a causal language model loaded in 4
bits by bitsandbytes (`BitsAndBytesConfig`: nf4, double quantization, bf16 compute), made
ready by PEFT's `prepare_model_for_kbit_training`, LoRA adapters on every linear layer, and
TrainingArguments with bf16 and gradient checkpointing. The model is a small Llama built from
its config in code and saved to a temporary folder, as a checkpoint on disk would be; the
data is generated tokens. Nothing in it knows about this tool.

    python generator/examples/hf_qlora.py                       # for real, on this machine
    python -m generator run --gpu "RTX 4090" generator/examples/hf_qlora.py
    python -m generator run --device cpu generator/examples/hf_qlora.py
    python -m generator run --gpu "RTX 4090" generator/examples/hf_qlora.py \\
        --model meta-llama/Llama-3.2-1B --seq-len 512     # simulated: from its config alone

bitsandbytes runs its 4-bit kernels on the CPU too, so the script runs for real without a GPU.
"""

import argparse
import tempfile

import torch
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from transformers import (AutoModelForCausalLM, BitsAndBytesConfig, LlamaConfig,
                          LlamaForCausalLM, Trainer, TrainingArguments)


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


def small_llama(folder: str) -> str:
    """A two-layer Llama saved to `folder` in bf16, as a downloaded checkpoint would be."""
    config = LlamaConfig(vocab_size=1000, hidden_size=128, intermediate_size=256,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=512)
    LlamaForCausalLM(config).to(torch.bfloat16).save_pretrained(folder)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a Hub id or a saved folder (default: a small Llama "
                        "built here)")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--grad-accum", type=int, default=2)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--rank", type=int, default=16)
    args = parser.parse_args()

    torch.manual_seed(0)
    quantization = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                      bnb_4bit_use_double_quant=True,
                                      bnb_4bit_compute_dtype=torch.bfloat16)
    with tempfile.TemporaryDirectory() as folder:
        model = AutoModelForCausalLM.from_pretrained(args.model or small_llama(folder),
                                                     quantization_config=quantization,
                                                     dtype=torch.bfloat16)
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=True)
        model = get_peft_model(model, LoraConfig(r=args.rank, lora_alpha=2 * args.rank,
                                                 lora_dropout=0.05, target_modules="all-linear",
                                                 task_type="CAUSAL_LM"))
        data = Tokens(args.batch_size * args.grad_accum * args.steps, args.seq_len,
                      model.config.vocab_size)
        training = TrainingArguments(
            output_dir=folder, max_steps=args.steps, per_device_train_batch_size=args.batch_size,
            gradient_accumulation_steps=args.grad_accum, bf16=True, gradient_checkpointing=True,
            learning_rate=2e-4, logging_steps=1, report_to=[], save_strategy="no",
            disable_tqdm=True, use_cpu=not torch.cuda.is_available())  # bf16 on the CPU asks
        Trainer(model=model, args=training, train_dataset=data).train()
    if torch.cuda.is_available():
        print(f"max memory allocated: {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
