"""A training loop with Lightning Fabric, as users write one: `fabric.setup` places the model
and optimizer, `fabric.setup_dataloaders` the loader, `fabric.backward` follows the precision
flag. A small transformer on generated tokens. Nothing in it knows about this tool.

    python generator/examples/fabric_loop.py                     # for real, on this machine
    python -m generator run --gpu "RTX 4090" generator/examples/fabric_loop.py
    python -m generator run --gpu "RTX 4090" generator/examples/fabric_loop.py --precision 16-mixed
    python -m generator run --device cpu generator/examples/fabric_loop.py

Needs Lightning (`pip install lightning`).
"""

import argparse

import lightning as L
import torch
from torch import nn

PRECISIONS = ("32-true", "bf16-mixed", "16-mixed", "bf16-true")


class TinyLM(nn.Module):
    def __init__(self, vocab: int, width: int, layers: int, heads: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(self.embed(tokens)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--steps", type=int, default=3)
    # 16-mixed needs a GPU: Lightning runs the CPU's mixed precision in bf16 only
    parser.add_argument("--precision", choices=PRECISIONS, default="bf16-mixed")
    args = parser.parse_args()

    fabric = L.Fabric(accelerator="cuda" if torch.cuda.is_available() else "cpu", devices=1,
                      precision=args.precision)
    fabric.seed_everything(0)
    vocab = 1000
    tokens = torch.randint(0, vocab, (args.batch_size * args.steps, args.seq_len + 1))
    loader = fabric.setup_dataloaders(
        torch.utils.data.DataLoader(tokens, batch_size=args.batch_size, shuffle=True))
    model = TinyLM(vocab, width=128, layers=2, heads=4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model, optimizer = fabric.setup(model, optimizer)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    for step, batch in enumerate(loader):
        logits = model(batch[:, :-1])
        loss = loss_fn(logits.reshape(-1, vocab), batch[:, 1:].reshape(-1))
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        fabric.print(f"step {step}: loss {loss.item():.4f}")
    if torch.cuda.is_available():
        print(f"max memory allocated: {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
