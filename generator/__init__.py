"""显存去哪了 · Where did the GPU memory go? The memory of a PyTorch training step.

    import generator
    e = generator.estimate("bert-base", batch_size=32, seq_len=128, precision="amp-bf16")
    e.reserved_bytes, e.fits("RTX 4090").word
    generator.estimate("hf:meta-llama/Llama-3.2-1B", batch_size=2, seq_len=2048,
                       precision="bf16", gpus=8, parallel="fsdp2")   # one GPU of eight

One function per question (generator/api.py): `estimate`, `measure_step`, `largest_batch`,
`fewest_gpus`, `levers`, `track`, and `simulated_gpu` (unmodified training code run on a
simulated GPU); `Estimate.fits` judges a step on a GPU of the catalogue. Importing the
package imports no PyTorch, and no call changes the caller's process for good.
"""

from generator.api import (
    Estimate,
    FewestGpus,
    LargestBatch,
    LeverReport,
    LeverRow,
    Measurement,
    OutOfMemory,
    StepMemory,
    Verdict,
    estimate,
    fewest_gpus,
    largest_batch,
    levers,
    measure_step,
    simulated_gpu,
    track,
)
from generator.errors import ConfigError, GeneratorError, ModelError

__version__ = "0.1.0"

__all__ = ["ConfigError", "Estimate", "FewestGpus", "GeneratorError", "LargestBatch",
           "LeverReport", "LeverRow", "Measurement", "ModelError", "OutOfMemory", "StepMemory",
           "Verdict", "estimate", "fewest_gpus", "largest_batch", "levers", "measure_step",
           "simulated_gpu", "track"]
