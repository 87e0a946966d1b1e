"""Factory models of the multi-GPU tests, named `torchrun_models:FUNCTION` with tests/ on the
path: the model of PyTorch's FSDP2 memory test (tests/unit/test_fsdp2_memory_bounds.py). The
torchrun cases' GPT-2 is generator.validate.torchrun:gpt2_tiny."""

from generator.measure.models.llama import LlamaConfig, build_llama
from generator.measure.training.workload import Workload


def fsdp2_memory_test_model() -> Workload:
    """The shape of the Transformer in PyTorch's own FSDP2 memory test
    (test/distributed/_composable/fsdp/test_fully_shard_memory.py): 3 blocks of width 768,
    12 heads, a 32-token vocabulary, untied head; as the built-in LLaMA (its SwiGLU of 2048
    holds as many weights as that test's GELU MLP of 3072)."""
    return build_llama(LlamaConfig(vocab_size=32, hidden_size=768, num_layers=3, num_heads=12,
                                   intermediate_size=2048, max_position_embeddings=16))
