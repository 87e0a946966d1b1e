"""Fine-tuning a pretrained model with a plain loop, as users write one: the model loaded with
`from_pretrained` in bfloat16, moved to the GPU, AdamW on generated tokens with the model's
own loss. Nothing in it knows about this tool.

    python -m generator run generator/examples/from_pretrained_loop.py   # a simulated GPU
    python -m generator run --gpu H100 generator/examples/from_pretrained_loop.py \\
        --model meta-llama/Llama-3.1-8B --seq-len 256                    # 16 GB of weights
    python generator/examples/from_pretrained_loop.py --model FOLDER     # for real, here

On the simulated GPU the weights are never read: a Hub id whose config.json ships with this
tool (`python -m generator models`) loads from that config alone, and a local folder from its
checkpoint's header; for real, `--model` needs the weights on disk (or the Hub).
"""

import argparse

import torch
from transformers import AutoModelForCausalLM


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="Qwen/Qwen2.5-0.5B",
                        help="a Hub id or a folder that save_pretrained wrote")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()

    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16)
    model.to(device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    vocab = model.config.vocab_size
    for step in range(args.steps):
        tokens = torch.randint(0, vocab, (args.batch_size, args.seq_len), device=device)
        loss = model(input_ids=tokens, labels=tokens).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        print(f"step {step}: loss {loss.item():.4f}")
    if device == "cuda":
        print(f"max memory allocated: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
