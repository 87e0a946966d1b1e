"""What runs a training step: the model's workload, the step itself (step.py), precisions and
optimizers (8-bit AdamW), LoRA and QLoRA's 4-bit base, data parallelism."""
