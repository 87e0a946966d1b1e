"""显存去哪了 · Where did the GPU memory go? Measure the memory of a PyTorch training step."""

__version__ = "0.1.0"
