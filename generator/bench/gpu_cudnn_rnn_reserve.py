"""cuDNN's RNN reserve space, measured: the table the CUDA estimate of LSTM/GRU/RNN lacks.

    python -m generator.bench.gpu_cudnn_rnn_reserve OUT.csv

Needs a CUDA GPU with cuDNN. On CUDA, `nn.LSTM`, `nn.GRU` and `nn.RNN` run cuDNN's
`_cudnn_rnn`, which returns a "reserve" buffer that autograd keeps for backward. Its size
comes from cuDNN (cudnnGetRNNTempSpaceSizes), which is closed source, so the estimate cannot
compute it and says so ("not modelled"). This script tabulates it over a grid of shapes: for
each mode, dtype, size, layer count, direction, batch and length, one training-mode forward
pass, and the bytes of the reserve tensor autograd saved (`_saved_result3` of the
CudnnRnnBackward node), beside what the forward pass left allocated beyond its outputs and
the transient peak during it (cuDNN's workspace). A size rule fitted to this table, with the
GPU, cuDNN and PyTorch versions it came from, can then stand in the estimate.
"""

from __future__ import annotations

import csv
import itertools
import sys
from pathlib import Path

MODES = ("LSTM", "GRU", "RNN")
DTYPES = ("float32", "float16", "bfloat16")
HIDDEN = (128, 512, 1024)
LAYERS = (1, 2)
BIDIRECTIONAL = (False, True)
BATCH = (8, 64)
SEQ_LEN = (32, 256)
COLUMNS = ("mode", "dtype", "input_size", "hidden_size", "num_layers", "bidirectional",
           "batch", "seq_len", "reserve_bytes", "kept_beyond_outputs_bytes",
           "transient_bytes", "error")


def saved_reserve(output) -> int | None:
    """The bytes of the reserve tensor the cuDNN RNN node saved, found from `output`."""
    pending, seen = [output.grad_fn], set()
    while pending:
        node = pending.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if node.name().startswith("CudnnRnnBackward"):
            reserve = getattr(node, "_saved_result3", None)
            return None if reserve is None else reserve.untyped_storage().nbytes()
        pending.extend(next_node for next_node, _ in node.next_functions)
    return None


def measure_one(torch, mode: str, dtype: str, hidden: int, layers: int, bidirectional: bool,
                batch: int, seq_len: int, device: str = "cuda") -> dict:
    row = {"mode": mode, "dtype": dtype, "input_size": hidden, "hidden_size": hidden,
           "num_layers": layers, "bidirectional": bidirectional, "batch": batch,
           "seq_len": seq_len}
    module_class = getattr(torch.nn, mode)
    try:
        rnn = module_class(hidden, hidden, num_layers=layers, bidirectional=bidirectional)
        rnn = rnn.to(device=device, dtype=getattr(torch, dtype)).train()
        x = torch.randn(seq_len, batch, hidden, device=device, dtype=rnn.weight_ih_l0.dtype,
                        requires_grad=True)
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        output, state = rnn(x)
        torch.cuda.synchronize()
        states = state if isinstance(state, tuple) else (state,)
        outputs = sum(t.untyped_storage().nbytes() for t in (output, *states))
        after = torch.cuda.memory_allocated()
        row.update(reserve_bytes=saved_reserve(output),
                   kept_beyond_outputs_bytes=after - before - outputs,
                   transient_bytes=torch.cuda.max_memory_allocated() - after, error="")
        del output, state, states, x, rnn
    except Exception as error:  # a dtype or size this cuDNN refuses is a row, not a crash
        row.update(reserve_bytes=None, kept_beyond_outputs_bytes=None, transient_bytes=None,
                   error=f"{type(error).__name__}: {str(error).splitlines()[0][:120]}")
    return row


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m generator.bench.gpu_cudnn_rnn_reserve OUT.csv", file=sys.stderr)
        return 2
    import torch

    if not torch.cuda.is_available():
        print("needs a CUDA GPU: torch.cuda.is_available() is False here", file=sys.stderr)
        return 2
    torch.backends.cudnn.enabled = True
    grid = itertools.product(MODES, DTYPES, HIDDEN, LAYERS, BIDIRECTIONAL, BATCH, SEQ_LEN)
    with open(Path(argv[0]), "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        handle.write(f"# {torch.cuda.get_device_name()}, PyTorch {torch.__version__}, "
                     f"cuDNN {torch.backends.cudnn.version()}\n")
        writer.writeheader()
        rows = 0
        for shape in grid:
            writer.writerow(measure_one(torch, *shape))
            rows += 1
    print(f"{rows} shapes written to {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
