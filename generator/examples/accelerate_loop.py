"""A training loop with accelerate's Accelerator, as users write one: `prepare` places the
model, optimizer and loader, `accelerator.autocast()` and `accelerator.backward` follow the
mixed-precision flag, gradient accumulation by the Accelerator. A small transformer on
generated tokens. Nothing in it knows about this tool.

    python generator/examples/accelerate_loop.py                  # for real, on this machine
    python -m generator run --gpu "RTX 4090" generator/examples/accelerate_loop.py
    python -m generator run --gpu "RTX 4090" -m generator.examples.accelerate_loop \\
        --mixed-precision fp16
    python -m generator run --device cpu generator/examples/accelerate_loop.py
"""

import argparse

import torch
from accelerate import Accelerator
from torch import nn


class TinyLM(nn.Module):
    def __init__(self, vocab: int, width: int, layers: int, heads: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(self.embed(tokens), is_causal=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--grad-accum", type=int, default=2)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--mixed-precision", choices=("no", "bf16", "fp16"), default="bf16")
    args = parser.parse_args()

    torch.manual_seed(0)
    vocab = 1000
    # fp16 needs a GPU: on the CPU, accelerate refuses it (bf16 is the CPU's half type)
    accelerator = Accelerator(mixed_precision=args.mixed_precision,
                              gradient_accumulation_steps=args.grad_accum,
                              cpu=not torch.cuda.is_available())
    tokens = torch.randint(0, vocab, (args.batch_size * args.grad_accum * args.steps,
                                      args.seq_len + 1))
    loader = torch.utils.data.DataLoader(tokens, batch_size=args.batch_size, shuffle=True)
    model = TinyLM(vocab, width=128, layers=2, heads=4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    for step, batch in enumerate(loader):
        with accelerator.accumulate(model):
            with accelerator.autocast():
                logits = model(batch[:, :-1])
                loss = loss_fn(logits.reshape(-1, vocab), batch[:, 1:].reshape(-1))
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        accelerator.print(f"batch {step}: loss {loss.item():.4f}")
    if torch.cuda.is_available():
        print(f"max memory allocated: {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
