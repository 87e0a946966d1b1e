"""Measuring one training step, and the other measurements (studies).

    experiment ─► backends.measure ─► models (the workload) ─► step.Trainer (the step)
                                    └► tracker + timeline (labels every storage, sums bytes)
    study ─────► studies.<kind>.run

`backends/` holds the three ways to run a step (estimate with fake tensors, cpu, cuda),
`cuda_emulation.py` what the estimate models of CUDA, `environment.py` where a result was
measured. Everything here may import PyTorch; nothing downstream of the results does.
"""
