"""The `estimate` command: one step estimated, what a GPU of --gpu-memory makes of it, the
largest batch that fits (--largest-batch) and the levers that would lower it (--levers).

Each question is answered as data, its lines said as they come; with --json nothing is said
and the data is printed as one JSON object at the end: `result` is the estimate as the
results store keeps it, `fits` the budget's verdict. Every printing function writes through
`say` (print, or nothing for --json)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from generator.errors import ConfigError, GeneratorError
from generator.experiment import Experiment, option_words, options
from generator.plan.gpus import nvidia_smi_bytes
from generator.results.shapes import CATEGORIES, ONLY_WHEN_SEEN
from generator.units import format_bytes


def run(args: argparse.Namespace) -> int:
    from generator.jobs.worker import measure_to_result

    model = args.model_option or args.model
    if not model or (args.model and args.model_option and args.model != args.model_option):
        raise ConfigError("give one model, as MODEL or --model MODEL")
    # The budget is answered below, beside the figures, rather than turning the estimate
    # into an out-of-memory result.
    chosen = {name: getattr(args, name) for name, opt in options().items()
              if opt.cli and name != "gpu_memory"}
    budget = args.gpu_memory
    if args.largest_batch and args.levers:
        args.usage_error("--largest-batch and --levers are two questions: ask one at a time")
    if args.largest_batch and budget is None:
        args.usage_error("--largest-batch needs --gpu-memory SIZE, the memory to fit in")
    if not args.largest_batch and args.batch_size is None:
        args.usage_error("the following arguments are required: -b/--batch-size "
                         "(or --largest-batch to search for it)")
    say: Say = _silent if args.json else _say
    if args.largest_batch:
        answer = _largest_batch(model, chosen, budget, say)
    else:
        exp = Experiment(model=model, backend="estimate", **chosen)
        result = measure_to_result(exp)
        print_estimate(exp, result, budget, say)
        answer = {"result": result, "fits": _fits(result, budget)}
        if args.levers:
            answer.update(_levers(exp, result, budget, say))
    if args.json:
        print(json.dumps(answer, indent=1))
    return 0


def _say(line: str) -> None:
    print(line, flush=True)  # as it comes: a search or the levers take a while


def _silent(line: str) -> None:
    """--json: the lines are not said."""


def _fits(result: dict, budget: int | None) -> dict[str, Any] | None:
    if budget is None:
        return None
    return {"budget_bytes": budget, "needed_bytes": needed_bytes(result),
            "verdict": fit_word(budget, result["peak_bytes"], result.get("allocator"))[0]}


def _largest_batch(model: str, chosen: dict, budget: int, say: Say) -> dict[str, Any]:
    """Estimate batch after batch (plan/search.py), saying each as it comes, then the whole
    estimate of the largest batch that fits (of the smallest when none does)."""
    from generator.plan.search import largest_fitting
    from generator.jobs.worker import measure_to_result

    step = chosen["micro_batches"]
    first = chosen["batch_size"] or step
    results: dict[int, dict] = {}

    def experiment(batch: int) -> Experiment:
        return Experiment(model=model, backend="estimate", **{**chosen, "batch_size": batch})

    def needed(batch: int) -> int:
        exp = experiment(batch)
        results[batch] = measure_to_result(exp)
        if len(results) == 1:
            say(search_heading(exp, results[batch], budget))
        need = needed_bytes(results[batch])
        say(f"  {batch:>9,}  {mib(need):>16}  {'fits' if need <= budget else 'no'}")
        return need

    experiment(first)  # a bad option fails here, before any estimate
    search = largest_fitting(needed, budget, first=first, step=step)
    shown = search.largest or min(results)
    if search.capped:
        say(f"batch {search.largest:,} fits in {format_bytes(budget)}, and the search goes "
            "no further")
    elif search.largest:
        say(f"largest batch that fits in {format_bytes(budget)}: {search.largest:,} "
            f"(batch {search.largest + step:,} does not)")
    else:
        say(f"no batch fits in {format_bytes(budget)}: batch {shown:,} needs "
            f"{format_bytes(needed_bytes(results[shown]))}")
    say("")
    print_estimate(experiment(shown), results[shown], budget, say)
    return {"largest_batch": search.largest, "capped": search.capped,
            "tried": [{"batch_size": b, "needed_bytes": n, "fits": n <= budget}
                      for b, n in search.needed.items()],
            "result": results[shown], "fits": _fits(results[shown], budget)}


def _levers(exp: Experiment, result: dict, budget: int | None, say: Say) -> dict[str, Any]:
    """Each lever of plan/levers.py estimated alone on top of `exp`, said as it comes: the peak
    a lever is judged by (reserved where the allocator is simulated), its change, whether
    the step then fits; then the levers that helped, the best of each kind, together."""
    from generator.measure.models import resolve_model
    from generator.plan.levers import levers_for, together

    levers = levers_for(exp, takes=resolve_model(exp.model).takes,
                        attention_ran=result.get("attention"))
    what = "reserved peak" if result.get("allocator") else "peak of the step's tensors"
    say(f"\nlevers, each alone on top of this step ({what}, change"
        f"{', whether it fits in ' + format_bytes(budget) if budget else ''}):")
    rows, saved = [], []
    for lever in levers:
        row = _lever_row(lever.words, lever.apply(exp), result, budget, say)
        rows.append({**row, "changes": lever.changes, "cost": lever.cost})
        if row["refused"] is None:
            say(f"      cost: {lever.cost}")
        if row["change_bytes"] is not None and row["change_bytes"] < 0:
            saved.append((lever, -row["change_bytes"]))
    combined = together(saved)
    both = None
    if len(combined) > 1:
        say("")
        both = _lever_row("together: " + " + ".join(lever.words for lever in combined),
                          combined[0].apply(exp, *combined[1:]), result, budget, say)
        both["levers"] = [lever.words for lever in combined]
    return {"levers": rows, "together": both}


def _lever_row(words: str, changed: Experiment, result: dict, budget: int | None,
               say: Say) -> dict[str, Any]:
    """One lever's estimate, said in a line and returned as a row."""
    from generator.jobs.worker import measure_to_result

    row: dict[str, Any] = {"lever": words, "refused": None, "held_bytes": None,
                           "change_bytes": None, "peak_bytes": None, "fits": None}
    try:
        outcome = measure_to_result(changed)
    except GeneratorError as error:
        row["refused"] = str(error).splitlines()[0]
        say(f"  {words}: not estimated: {row['refused']}")
        return row
    held, base = _held(outcome), _held(result)
    fits = None if budget is None else fit_word(budget, outcome["peak_bytes"],
                                                outcome.get("allocator"))[0]
    row.update(held_bytes=held, change_bytes=held - base, peak_bytes=outcome["peak_bytes"],
               fits=fits)
    say(f"  {words}: {mib(held)} ({(held - base) / 2**20:+,.1f} MiB, "
        f"{(held - base) / base:+.1%}){'' if fits is None else ', ' + fits}")
    return row


def _held(result: dict) -> int:
    """What a lever is judged by: the reserved peak where the allocator is simulated."""
    allocator = result.get("allocator")
    return allocator["peak_reserved_bytes"] if allocator else result["peak_bytes"]


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
