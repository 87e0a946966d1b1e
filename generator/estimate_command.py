"""The `estimate` command: one step estimated and printed, what the user's GPU makes of it,
the largest batch that fits (--largest-batch) and the levers that would lower it (--levers)."""

from __future__ import annotations

import argparse

from generator.errors import ConfigError, GeneratorError
from generator.experiment import Experiment, option_words, options
from generator.gpu_overheads import nvidia_smi_bytes
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
    if args.largest_batch and args.levers:
        args.usage_error("--largest-batch and --levers are two questions: ask one at a time")
    if args.largest_batch:
        if args.gpu_memory is None:
            args.usage_error("--largest-batch needs --gpu-memory SIZE, the memory to fit in")
        return _largest_batch(model, chosen, args.gpu_memory)
    if args.batch_size is None:
        args.usage_error("the following arguments are required: -b/--batch-size "
                         "(or --largest-batch to search for it)")
    exp = Experiment(model=model, backend="estimate", **chosen)
    result = measure_to_result(exp)
    _print_estimate(exp, result, args.gpu_memory)
    if args.levers:
        _print_levers(exp, result, args.gpu_memory)
    return 0


def _print_levers(exp: Experiment, result: dict, budget: int | None) -> None:
    """Each lever of what_if.py estimated alone on top of `exp`, printed as it comes: the
    peak the verdict reads (reserved where the allocator is simulated), its change, and
    whether the step then fits; then the levers that helped, together."""
    from generator.measure.models import resolve_model
    from generator.what_if import levers_for, together

    levers = levers_for(exp, takes=resolve_model(exp.model).takes,
                        attention_ran=result.get("attention"))
    what = "reserved peak" if result.get("allocator") else "peak of the step's tensors"
    print(f"\nlevers, each alone on top of this step ({what}, change"
          f"{', whether it fits in ' + format_bytes(budget) if budget else ''}):", flush=True)
    saved = []
    for lever in levers:
        outcome = _print_lever(lever.words, lever.cost, lever.apply(exp), result, budget)
        if outcome is not None and _held(outcome) < _held(result):
            saved.append((lever, _held(result) - _held(outcome)))
    combined = together(saved)
    if len(combined) > 1:
        print(flush=True)
        _print_lever("together: " + " + ".join(lever.words for lever in combined), None,
                     combined[0].apply(exp, *combined[1:]), result, budget)


def _print_lever(words: str, cost: str | None, changed: Experiment, result: dict,
                 budget: int | None) -> dict | None:
    from generator.jobs.worker import measure_to_result

    try:
        outcome = measure_to_result(changed)
    except GeneratorError as error:
        print(f"  {words}: not estimated: {str(error).splitlines()[0]}", flush=True)
        return None
    held, base = _held(outcome), _held(result)
    verdict = "" if budget is None else \
        ", " + _fit(budget, outcome["peak_bytes"], outcome.get("allocator"))[0]
    print(f"  {words}: {_mib(held)} ({(held - base) / 2**20:+,.1f} MiB, "
          f"{(held - base) / base:+.1%}){verdict}", flush=True)
    if cost:
        print(f"      cost: {cost}", flush=True)
    return outcome


def _held(result: dict) -> int:
    """What a lever is judged by: the reserved peak where the allocator is simulated."""
    allocator = result.get("allocator")
    return allocator["peak_reserved_bytes"] if allocator else result["peak_bytes"]


def _largest_batch(model: str, chosen: dict, budget: int) -> int:
    """Estimate batch after batch (batch_search.py) and print each as it comes, then the
    whole estimate of the largest batch that fits (of the smallest when none does)."""
    from generator.batch_search import largest_fitting
    from generator.jobs.worker import measure_to_result

    step = chosen["micro_batches"]
    first = chosen["batch_size"] or step
    results: dict[int, dict] = {}

    def experiment(batch: int) -> Experiment:
        return Experiment(model=model, backend="estimate", **{**chosen, "batch_size": batch})

    def needed(batch: int) -> int:
        results[batch] = measure_to_result(experiment(batch))
        if len(results) == 1:
            print(_search_heading(experiment(batch), results[batch], budget))
        need = needed_bytes(results[batch])
        print(f"  {batch:>9,}  {_mib(need):>16}  {'fits' if need <= budget else 'no'}",
              flush=True)
        return need

    experiment(first)  # a bad option fails here, before any estimate
    search = largest_fitting(needed, budget, first=first, step=step)
    shown = search.largest or min(results)
    if search.capped:
        print(f"batch {search.largest:,} fits in {format_bytes(budget)}, and the search "
              "goes no further")
    elif search.largest:
        print(f"largest batch that fits in {format_bytes(budget)}: {search.largest:,} "
              f"(batch {search.largest + step:,} does not)")
    else:
        print(f"no batch fits in {format_bytes(budget)}: batch {shown:,} needs "
              f"{format_bytes(needed_bytes(results[shown]))}")
    print()
    _print_estimate(experiment(shown), results[shown], budget)
    return 0


def _step_words(exp: Experiment, result: dict, *, batch: bool = True) -> str:
    """model · batch · seq · precision · optimizer · the levers chosen."""
    extra = "".join(f" · {words}" for words in option_words(exp.to_dict()))
    # seq_len is an image's side for image models (the result says which it counted)
    size = f"image {exp.seq_len} px" if result.get("inputs") == "image" else f"seq {exp.seq_len}"
    batch_words = f" · batch {exp.batch_size}" if batch else ""
    return f"{exp.model}{batch_words} · {size} · {exp.precision} · {exp.optimizer}{extra}"


def _search_heading(exp: Experiment, result: dict, budget: int) -> str:
    rule = (f"the reserved peak plus a CUDA context of up to "
            f"{_mib(result['allocator']['context_bytes'][1])}" if result.get("allocator")
            else "the peak of the step's tensors")
    return (f"{_step_words(exp, result, batch=False)} — the largest "
            f"batch that fits in {format_bytes(budget)}, estimated for {exp.device} with fake "
            f"tensors, nothing allocated\na batch fits when {rule} is within "
            f"{format_bytes(budget)}\n  {'batch':>9}  {'needs':>16}")


def needed_bytes(result: dict) -> int:
    """What a step needs of a GPU to fit for sure: the reserved peak and the CUDA context at
    its high end where the estimate models the allocator, else the tensors' peak."""
    allocator = result.get("allocator")
    if allocator:
        return allocator["peak_reserved_bytes"] + allocator["context_bytes"][1]
    return result["peak_bytes"]


def _print_estimate(exp: Experiment, result: dict, budget: int | None) -> None:
    print(f"{_step_words(exp, result)} — estimated for {exp.device} with fake tensors, "
          "nothing allocated")
    trainable = result.get("trainable_parameter_count")
    frozen = "" if trainable in (None, result["parameter_count"]) else f" ({trainable:,} trainable)"
    attention = result.get("attention")
    ran = "" if not attention else f" · {attention} attention" + (
        " (transformers' choice)" if exp.attention == "auto" else "")
    print(f"{result['parameter_count']:,} parameters{frozen}{ran}\n")
    print(f"{'category':<18}{'live at peak':>14}{'own maximum':>14}")
    for cat in CATEGORIES:
        if cat in ONLY_WHEN_SEEN and not result["category_max_bytes"][cat]:
            continue  # real runs' category: an estimate has none
        print(f"{cat:<18}{_mib(result['live_at_peak_bytes'][cat]):>14}"
              f"{_mib(result['category_max_bytes'][cat]):>14}")
    peak = result["peak_bytes"]
    print(f"\npeak of the step's tensors: {_mib(peak)} ({peak / 2**30:.2f} GiB)")
    allocator = result.get("allocator")
    if allocator:
        _print_allocator(allocator)
    if budget is not None:
        print(f"fits in {format_bytes(budget)}: {fit_verdict(budget, peak, allocator)}")
    for note in result.get("notes", []):
        if note.startswith("not modelled"):  # what the figures above leave out
            print(f"\n{note}")


def _print_allocator(allocator: dict) -> None:
    low, high = allocator["context_bytes"]
    reserved = allocator["peak_reserved_bytes"]
    shown_low, shown_high = nvidia_smi_bytes(allocator)
    print(f"CUDA caching allocator, simulated over {allocator['steps']} steps "
          f"(cuBLAS workspaces {_mib(allocator['workspace_bytes'])} included):")
    print(f"  allocated peak  {_mib(allocator['peak_allocated_bytes']):>14}"
          "   torch.cuda.max_memory_allocated()")
    print(f"  reserved peak   {_mib(reserved):>14}   torch.cuda.max_memory_reserved()")
    print(f"  nvidia-smi      {_mib(shown_low)} – {_mib(shown_high)}"
          f"   reserved + a CUDA context of {_mib(low)} – {_mib(high)}")


def fit_verdict(budget: int, peak: int, allocator: dict | None) -> str:
    """Whether a step fits in a GPU of `budget` bytes, in words: by the allocator's figures
    and the CUDA context when the estimate models CUDA, else by the tensors' peak alone."""
    word, why = _fit(budget, peak, allocator)
    return f"{word}{why}"


def _fit(budget: int, peak: int, allocator: dict | None) -> tuple[str, str]:
    """(yes | maybe | only just | no, the reason that follows it)."""
    if not allocator:
        return (("yes", f", {format_bytes(budget - peak)} to spare (tensors alone)")
                if peak <= budget else
                ("no", f", {format_bytes(peak - budget)} short (tensors alone)"))
    low, high = allocator["context_bytes"]
    needed = allocator["peak_reserved_bytes"] + high
    if allocator["peak_allocated_bytes"] + low > budget:
        short = allocator["peak_allocated_bytes"] + low - budget
        return "no", f", at least {format_bytes(short)} short"
    if needed <= budget:
        return "yes", f", {format_bytes(budget - needed)} to spare beyond the reserved peak"
    if allocator["peak_reserved_bytes"] + low <= budget:
        room = budget - allocator["peak_reserved_bytes"]
        return "maybe", (f": if the CUDA context takes at most {_mib(room)} (it takes "
                         f"{_mib(low)} – {_mib(high)}, by GPU, driver and the kernels loaded)")
    return "only just", (": the tensors fit, but not the allocator's cache of free blocks; "
                         "it would free and retake memory (slower), or fail if fragmented")


def _mib(nbytes: int) -> str:
    return f"{nbytes / 2**20:,.1f} MiB"
