"""A GPT-2-style model small enough for several CPU processes at once (tests/slow/
test_torchrun_cpu.py): the built-in GPT-2 (fused qkv, tied head, GELU MLP, dropout), 2 blocks
of width 64 with 4 heads and a 1000-token vocabulary; named `torchrun_models:gpt2_tiny` with
tests/ on the path."""

from generator.measure.models.gpt2 import GPT2Config, build_gpt2
from generator.measure.training.workload import Workload


def gpt2_tiny() -> Workload:
    return build_gpt2(GPT2Config(vocab_size=1000, hidden_size=64, num_layers=2, num_heads=4,
                                 intermediate_size=256, max_position_embeddings=128))
