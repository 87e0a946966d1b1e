"""The `estimate` command's words: one estimate as a table, the allocator's figures, and
whether the step fits a GPU. Every function writes through `say` (print, or nothing for
--json)."""

from __future__ import annotations

from collections.abc import Callable

from generator.experiment import Experiment, option_words
from generator.gpu_overheads import nvidia_smi_bytes
from generator.results.shapes import CATEGORIES, ONLY_WHEN_SEEN
from generator.units import format_bytes

Say = Callable[[str], None]


def step_words(exp: Experiment, result: dict, *, batch: bool = True) -> str:
    """model · batch · seq · precision · optimizer · the levers chosen."""
    extra = "".join(f" · {words}" for words in option_words(exp.to_dict()))
    # seq_len is an image's side for image models (the result says which it counted)
    size = f"image {exp.seq_len} px" if result.get("inputs") == "image" else f"seq {exp.seq_len}"
    batch_words = f" · batch {exp.batch_size}" if batch else ""
    return f"{exp.model}{batch_words} · {size} · {exp.precision} · {exp.optimizer}{extra}"


def search_heading(exp: Experiment, result: dict, budget: int) -> str:
    rule = (f"the reserved peak plus a CUDA context of up to "
            f"{mib(result['allocator']['context_bytes'][1])}" if result.get("allocator")
            else "the peak of the step's tensors")
    return (f"{step_words(exp, result, batch=False)} — the largest "
            f"batch that fits in {format_bytes(budget)}, estimated for {exp.device} with fake "
            f"tensors, nothing allocated\na batch fits when {rule} is within "
            f"{format_bytes(budget)}\n  {'batch':>9}  {'needs':>16}")


def needed_bytes(result: dict) -> int:
    """What a step needs of a GPU to fit for sure (the verdict's "yes")."""
    return _needed(result["peak_bytes"], result.get("allocator"))


def _needed(peak: int, allocator: dict | None) -> int:
    """The reserved peak and the CUDA context at its high end where the estimate models the
    allocator, else the tensors' peak."""
    if allocator:
        return allocator["peak_reserved_bytes"] + allocator["context_bytes"][1]
    return peak


def print_estimate(exp: Experiment, result: dict, budget: int | None,
                   say: Say = print) -> None:
    say(f"{step_words(exp, result)} — estimated for {exp.device} with fake tensors, "
        "nothing allocated")
    trainable = result.get("trainable_parameter_count")
    frozen = "" if trainable in (None, result["parameter_count"]) else f" ({trainable:,} trainable)"
    attention = result.get("attention")
    ran = "" if not attention else f" · {attention} attention" + (
        " (transformers' choice)" if exp.attention == "auto" else "")
    say(f"{result['parameter_count']:,} parameters{frozen}{ran}")
    for note in result.get("notes", []):
        if note.startswith(("QLoRA:", "LoRA:")):  # what was quantized, where the adapters are
            say(note)
    say("")
    say(f"{'category':<18}{'live at peak':>14}{'own maximum':>14}")
    for cat in CATEGORIES:
        if cat in ONLY_WHEN_SEEN and not result["category_max_bytes"][cat]:
            continue  # real runs' category: an estimate has none
        say(f"{cat:<18}{mib(result['live_at_peak_bytes'][cat]):>14}"
            f"{mib(result['category_max_bytes'][cat]):>14}")
    peak = result["peak_bytes"]
    say(f"\npeak of the step's tensors: {mib(peak)} ({peak / 2**30:.2f} GiB)")
    allocator = result.get("allocator")
    if allocator:
        print_allocator(allocator, say)
    if budget is not None:
        say(f"fits in {format_bytes(budget)}: {fit_verdict(budget, peak, allocator)}")
    for note in result.get("notes", []):
        if note.startswith("not modelled"):  # what the figures above leave out
            say(f"\n{note}")


def print_allocator(allocator: dict, say: Say = print) -> None:
    low, high = allocator["context_bytes"]
    reserved = allocator["peak_reserved_bytes"]
    shown_low, shown_high = nvidia_smi_bytes(allocator)
    say(f"CUDA caching allocator, simulated over {allocator['steps']} steps "
        f"(cuBLAS workspaces {mib(allocator['workspace_bytes'])} included):")
    say(f"  allocated peak  {mib(allocator['peak_allocated_bytes']):>14}"
        "   torch.cuda.max_memory_allocated()")
    say(f"  reserved peak   {mib(reserved):>14}   torch.cuda.max_memory_reserved()")
    if allocator.get("freed_while_building_bytes") is not None:  # --built-on-device
        say(f"  freed building  {mib(allocator['freed_while_building_bytes']):>14}   while the "
            "model was built on the GPU; cached for the steps")
    say(f"  nvidia-smi      {mib(shown_low)} – {mib(shown_high)}"
        f"   reserved + a CUDA context of {mib(low)} – {mib(high)}")


def fit_verdict(budget: int, peak: int, allocator: dict | None) -> str:
    """Whether a step fits in a GPU of `budget` bytes, in words: by the allocator's figures
    and the CUDA context when the estimate models CUDA, else by the tensors' peak alone."""
    word, why = fit_word(budget, peak, allocator)
    return f"{word}{why}"


def fit_word(budget: int, peak: int, allocator: dict | None) -> tuple[str, str]:
    """The verdict's word (yes, maybe, only just, no) and the reason that follows it."""
    needed = _needed(peak, allocator)
    if not allocator:
        return (("yes", f", {format_bytes(budget - needed)} to spare (tensors alone)")
                if needed <= budget else
                ("no", f", {format_bytes(needed - budget)} short (tensors alone)"))
    low, high = allocator["context_bytes"]
    if allocator["peak_allocated_bytes"] + low > budget:
        short = allocator["peak_allocated_bytes"] + low - budget
        return "no", f", at least {format_bytes(short)} short"
    if needed <= budget:
        return "yes", f", {format_bytes(budget - needed)} to spare beyond the reserved peak"
    if allocator["peak_reserved_bytes"] + low <= budget:
        room = budget - allocator["peak_reserved_bytes"]
        return "maybe", (f": if the CUDA context takes at most {mib(room)} (it takes "
                         f"{mib(low)} – {mib(high)}, by GPU, driver and the kernels loaded)")
    return "only just", (": the tensors fit, but not the allocator's cache of free blocks; "
                         "it would free and retake memory (slower), or fail if fragmented")


def mib(nbytes: int) -> str:
    return f"{nbytes / 2**20:,.1f} MiB"
