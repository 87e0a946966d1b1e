"""A script run on a simulated device: `python -m generator run SCRIPT` and
`generator.simulated_gpu()` (DESIGN.md, "The user's own job: a simulated GPU").

    session    the run's context manager: puts every piece in place, takes it back out
    copies     deep copies of fake tensors: clones in the run's mode
    subclasses parameter subclasses of fake tensors (bitsandbytes' Params4bit)
    device     torch.cuda's answers from the catalogue and the simulation
    placement  which fake tensors are on the GPU; their storages as they come and go
    memory     the caching allocator, driven online (out of memory where it happens)
    recompute  a checkpointed block recomputed in its forward pass's modes
    rng_states the CPU generator's states a script keeps, modelling the CPU
    values     placeholders for what only a real tensor can tell, and where they were read
    weights    checkpoints read from their headers: shapes and dtypes, no data
    pretrained from_pretrained offline: shipped configs, a config alone as a header
    steps      the optimizer steps, as step boundaries and as the run's limit
    report     the run's figures and verdict
    runner     a script or module run as Python runs it (`python -m cProfile`'s way)
    history    the allocator's calls with the script's stack, as _record_memory_history
    snapshot   torch.cuda.memory._snapshot()'s format: written, and read back safely
    compare    a snapshot from a real GPU beside the simulated run
"""

from generator.simulate.report import SimulationReport
from generator.simulate.session import SimulatedGpu, simulated_gpu

__all__ = ["SimulatedGpu", "SimulationReport", "simulated_gpu"]
