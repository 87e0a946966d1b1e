"""Does a step fit a GPU? The one rule, for every surface: the command line, the API, the
pages and the calculator (docs/assets/planning.js mirrors `judge`, and a test holds the two
against each other).

A step fits a GPU when the memory the process asks of it stays within what the GPU lets a
process have (`torch.cuda.get_device_properties().total_memory`; nvidia-smi's total is larger
by what the driver keeps). What it asks is the caching allocator's reserved peak plus the CUDA
context, whose size is a range (generator/gpus.py), and the words follow from where the memory
falls among those figures:

    yes        reserved peak + the context at the high end of its range fits
    maybe      it fits with the context at the low end, not at the high end
    only just  the tensors (the allocated peak) and the context fit, the reserved peak does not
    no         not even the allocated peak with the smallest context fits

The reserved peak of an estimate or of a run measured on a GPU with memory to spare is an upper
bound of what the step needs: before it raises out of memory, the caching allocator frees the
cached blocks it holds and retries, so a step the verdict calls "only just" may still run,
slower, or fail if what is free is fragmented. Where no allocator was modelled (an estimate or
a run on the CPU) the tensors' peak is all there is, and the words are yes and no.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.units import format_bytes
from generator.words import Words

#: The verdict's words, from best to worst, as the API and the command line give them.
WORDS = ("yes", "maybe", "only just", "no")
#: How pages and the calculator say them.
WORD_TEXT: dict[str, Words] = {
    "yes": Words("fits", "放得下"),
    "maybe": Words("may fit", "可能放得下"),
    "only just": Words("only just", "勉强"),
    "no": Words("does not fit", "放不下"),
}
#: The exit status of the commands that judge a step (`estimate`, `run`) when it falls short
#: (Verdict.falls_short), so that a CI job can gate on it; its one home. Besides it: 0, 1 (a
#: script `run` ran raised), 2 (a user's mistake, one line), 130 (interrupted).
DOES_NOT_FIT = 3
#: What the reserved peak means wherever a fit is judged.
RESERVED_IS_AN_UPPER_BOUND = Words(
    "The reserved peak was found without memory pressure, so it is an upper bound: before it "
    "raises out of memory, PyTorch's caching allocator frees the blocks it keeps cached and "
    "tries again.",
    "已预留峰值是在显存宽裕时得到的，所以是上限：PyTorch 的缓存分配器在报显存不足（out of "
    "memory）之前，会先释放它缓存着的空闲块再试一次。")


@dataclass(frozen=True)
class Verdict:
    """Whether a step fits a GPU, and by how much."""

    word: str
    """One of WORDS: yes, maybe, only just, no."""
    fits: bool
    """word == "yes": the step fits whatever the CUDA context takes."""
    needed_bytes: int
    """What the step needs to fit for sure: the reserved peak and the CUDA context at the
    high end of its range (the tensors' peak where no allocator was modelled)."""
    spare_bytes: int
    """memory_bytes − needed_bytes: negative when it falls short."""
    memory_bytes: int
    """The memory judged against: what the GPU lets a process have, or a size given."""
    reason: str
    """Why, in one clause of English."""
    gpu: str | None = None
    """The GPU judged against, by name; None for a memory size alone."""

    @property
    def falls_short(self) -> bool:
        """The step may not run: only its tensors fit ("only just"), or not even they ("no").
        The commands that judge a step exit with a status of their own on it
        (DOES_NOT_FIT), so that a CI job can gate on it."""
        return self.word in ("only just", "no")


def exit_status(verdict: Verdict | None) -> int:
    """The status a command that judged a step ends with: DOES_NOT_FIT when the verdict falls
    short, else 0 (also with no verdict: nothing was judged, as on the CPU without a size)."""
    return DOES_NOT_FIT if verdict is not None and verdict.falls_short else 0


def needed_bytes(*, allocated: int, reserved: int | None,
                 context: tuple[int, int] = (0, 0)) -> int:
    """What a step needs of a GPU to fit for sure (the verdict's "yes"): its reserved peak
    and the CUDA context at its high end; the tensors' peak where no allocator was modelled.
    The largest-batch search compares this with the memory (plan/search.py)."""
    return allocated if reserved is None else reserved + context[1]


def judge(memory_bytes: int, *, allocated: int, reserved: int | None,
          context: tuple[int, int] = (0, 0), gpu: str | None = None,
          context_name: str = "CUDA context") -> Verdict:
    """The verdict for a step whose allocated peak is `allocated` and reserved peak
    `reserved` (None: no allocator modelled, the tensors' peak is `allocated`), on a GPU
    with `memory_bytes` for a process and a CUDA context of `context` (low, high);
    context_name: what that range holds, in words (a multi-GPU rank's adds NCCL's)."""
    low, high = context
    need = needed_bytes(allocated=allocated, reserved=reserved, context=context)
    spare = memory_bytes - need

    def verdict(word: str, reason: str) -> Verdict:
        return Verdict(word, word == "yes", need, spare, memory_bytes, reason, gpu)

    if reserved is None:
        if spare >= 0:
            return verdict("yes", f"{format_bytes(spare)} to spare (the tensors alone)")
        return verdict("no", f"{format_bytes(-spare)} short (the tensors alone)")
    if allocated + low > memory_bytes:
        return verdict("no", f"at least {format_bytes(allocated + low - memory_bytes)} short: "
                             f"the allocated peak with the smallest {context_name} is more")
    if spare >= 0:
        return verdict("yes", f"{format_bytes(spare)} to spare beyond the reserved peak and a "
                              f"{context_name} of up to {format_bytes(high)}")
    if reserved + low <= memory_bytes:
        return verdict("maybe", f"if the {context_name} takes at most "
                                f"{format_bytes(memory_bytes - reserved)} (it takes "
                                f"{format_bytes(low)} to {format_bytes(high)}, by GPU, driver "
                                "and the kernels loaded)")
    return verdict("only just", "the tensors fit, but not the allocator's cache of free "
                                "blocks: it frees its cache and retries before it raises out of "
                                "memory, so the step may run, slower, or fail if fragmented")
