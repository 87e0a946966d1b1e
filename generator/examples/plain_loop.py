"""A plain PyTorch training loop, as users write one: a small transformer on synthetic
tokens, AdamW, a few steps. Nothing in it knows about this tool.

    python generator/examples/plain_loop.py                     # for real, on this machine
    python -m generator run generator/examples/plain_loop.py    # on a simulated GPU
    python -m generator run --steps all -m generator.examples.plain_loop --batch-size 16
"""

import argparse

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attention = nn.MultiheadAttention(width, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        x = x + self.attention(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab: int, width: int, layers: int, heads: int, seq_len: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.position = nn.Parameter(torch.zeros(seq_len, width))
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens) + self.position[: tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()

    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    vocab = 1000
    model = TinyLM(vocab, width=128, layers=2, heads=4, seq_len=args.seq_len).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    for step in range(args.steps):
        tokens = torch.randint(0, vocab, (args.batch_size, args.seq_len + 1), device=device)
        logits = model(tokens[:, :-1])
        loss = loss_fn(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        print(f"step {step}: loss {loss.item():.4f}")
    if device == "cuda":
        print(f"max memory allocated: {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
