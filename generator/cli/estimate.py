"""The `estimate` command: what the API answers (generator/api.py), printed. One step
estimated and whether it fits the GPU named (--gpu; --gpu-memory for any other size), the
largest batch that fits (--largest-batch), the fewest GPUs a strategy needs (--fewest-gpus)
and the levers that would lower it (--levers). Over several GPUs (--gpus, --parallel) every
figure is one GPU's.

Every line is said as it comes (a search or the levers take a while), through `say`; with
--json nothing is said and the answers are printed as one JSON object at the end: `result`
is the estimate as the results store keeps it, `fits` its verdict (plan/fit.py).

Exit status (plan/fit.py): DOES_NOT_FIT when the step answered last falls short of the
memory judged against (plan/fit.py: "only just" or "no"): the step asked for, the largest
batch when none fits, one GPU at the fewest when no count fits; else 0."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from generator import api, gpus, units
from generator.errors import ConfigError
from generator.experiment import option_words, options
from generator.experiment.strategies import STRATEGIES
from generator.plan.fit import DOES_NOT_FIT, exit_status
from generator.jobs.progress import ticking
from generator.plan.fit import RESERVED_IS_AN_UPPER_BOUND, WORD_TEXT, Verdict
from generator.results.shapes import CATEGORIES, ONLY_WHEN_SEEN
from generator.results.api_types import Estimate
from generator.units import format_bytes

Say = Callable[[str], None]
#: What the API takes beside the options: the model and the sizes, the GPU and the memory.
_ASKED = ("batch_size", "seq_len", "gpu", "gpu_memory")


def run(args: argparse.Namespace) -> int:
    model = args.model_option or args.model
    if not model or (args.model and args.model_option and args.model != args.model_option):
        raise ConfigError("give one model, as MODEL or --model MODEL")
    chosen = {name: getattr(args, name) for name, opt in options().items()
              if opt.cli and name not in _ASKED}
    gpu, memory = args.gpu or None, args.gpu_memory
    asked = [flag for flag, on in (("--largest-batch", args.largest_batch),
                                   ("--fewest-gpus", args.fewest_gpus),
                                   ("--levers", args.levers)) if on]
    if len(asked) > 1:
        args.usage_error(f"{' and '.join(asked)} are {len(asked)} questions: ask one at a time")
    if args.fewest_gpus:
        if gpu is None and memory is None:
            args.usage_error("--fewest-gpus needs --gpu NAME or --gpu-memory SIZE, the memory "
                             "each GPU has")
        if args.gpus != 1:
            args.usage_error("--fewest-gpus searches for the number of GPUs (1, 2, 4, … "
                             "1024): give no --gpus")
        if args.parallel == "none":
            args.usage_error("--fewest-gpus needs --parallel: the strategy that shares the "
                             f"step ({', '.join(STRATEGIES)})")
    if args.largest_batch and gpu is None and memory is None:
        args.usage_error("--largest-batch needs --gpu NAME or --gpu-memory SIZE, the memory "
                         "to fit in")
    if not args.largest_batch and args.batch_size is None:
        args.usage_error("the following arguments are required: -b/--batch-size "
                         "(or --largest-batch to search for it)")
    say: Say = _silent if args.json else _say
    if args.largest_batch:
        answer, status = _largest_batch(model, args.seq_len, args.batch_size, gpu, memory,
                                        chosen, say)
    elif args.fewest_gpus:
        answer, status = _fewest_gpus(model, args.batch_size, args.seq_len, gpu, memory,
                                      {k: v for k, v in chosen.items() if k != "gpus"}, say)
    else:
        # a large model, or many GPUs, takes a minute: said on stderr while it runs
        with ticking(f"estimating {model} · batch {args.batch_size} · seq {args.seq_len}"
                     + (f" · {args.gpus:,} GPUs" if args.gpus > 1 else "")):
            estimate = api.estimate(model, batch_size=args.batch_size,
                                    seq_len=args.seq_len, gpu=gpu, **chosen)
        verdict = _verdict(estimate, gpu, memory)
        print_estimate(estimate, verdict, say)
        answer = {"result": estimate.to_dict(), "fits": _json(verdict),
                  "per_gpu": per_gpu(estimate)}
        status = exit_status(verdict)
        if args.levers:
            answer.update(_levers(model, args, gpu, memory, chosen, say))
    if args.json:
        print(json.dumps(answer, indent=1))
    return status


def _say(line: str) -> None:
    print(line, flush=True)


def _silent(line: str) -> None:
    """--json: the lines are not said."""


def _verdict(estimate: Estimate, gpu: str | None, memory: int | None) -> Verdict | None:
    """The step on the GPU named (or the one modelled), in `memory` if given; an estimate
    of the CPU only against a memory size."""
    if estimate.reserved_bytes is None and memory is None:
        return None
    return estimate.fits(gpu if estimate.reserved_bytes is not None else None, memory=memory)


def _json(verdict: Verdict | None) -> dict[str, Any] | None:
    return None if verdict is None else asdict(verdict)


# -- one estimate ------------------------------------------------------------------------------
def step_words(estimate: Estimate, *, batch: bool = True) -> str:
    """model · batch · seq · precision · optimizer · the levers chosen."""
    exp = estimate.experiment
    extra = "".join(f" · {words}" for words in option_words(exp.to_dict()))
    # seq_len is an image's side for image models (the result says which it counted)
    image = estimate.to_dict().get("inputs") == "image"
    size = f"image {exp.seq_len} px" if image else f"seq {exp.seq_len}"
    batch_words = f" · batch {exp.batch_size}" if batch else ""
    return f"{exp.model}{batch_words} · {size} · {exp.precision} · {exp.optimizer}{extra}"


def print_estimate(estimate: Estimate, verdict: Verdict | None, say: Say = print) -> None:
    data = estimate.to_dict()
    say(f"{step_words(estimate)} — {estimate.kind} with fake tensors, nothing allocated")
    trainable = data.get("trainable_parameter_count")
    frozen = "" if trainable in (None, data["parameter_count"]) else f" ({trainable:,} trainable)"
    attention = data.get("attention")
    # named as the option names it (the heading's words), whoever chose it
    ran = "" if not attention else f" · {options()['attention'].words(attention)['en']}" + (
        " (transformers' choice)" if estimate.experiment.attention == "auto" else "")
    say(f"{data['parameter_count']:,} parameters{frozen}{ran}")
    for note in estimate.notes:
        if note.id and note.id.startswith(("lora", "qlora", "parallel", "sharding")):
            say(str(note))  # adapters, 4-bit layers, how the GPUs share the step
    say("")
    rows = [("category", "live at peak", "own maximum")] + [
        (cat, mib(estimate.live_at_peak[cat]), mib(estimate.category_max[cat]))
        for cat in CATEGORIES
        # real runs' category: an estimate has none
        if not (cat in ONLY_WHEN_SEEN and not estimate.category_max[cat])]
    for line in columns(rows):
        say(line)
    peak = estimate.peak_bytes
    say(f"\npeak of the step's tensors: {mib(peak)} ({units.gib(peak)} GiB)")
    if estimate.reserved_bytes is not None:
        print_allocator(estimate, say)
    if verdict is not None:
        say(f"\n{fit_line(verdict, each=bool(data.get('parallel')))}")
        if estimate.reserved_bytes is not None:
            say(RESERVED_IS_AN_UPPER_BOUND.en)
    for note in estimate.notes:
        if note.id and note.id.startswith("not_modelled"):  # what the figures leave out
            say(f"\n{note}")


def print_allocator(estimate: Estimate, say: Say = print) -> None:
    allocator = estimate.to_dict()["allocator"]
    low, high = allocator["context_bytes"]
    shown_low, shown_high = estimate.nvidia_smi_bytes
    named = estimate.experiment.gpu
    say(f"CUDA caching allocator, simulated over {allocator['steps']} steps on "
        f"{estimate.gpu}{'' if named else ' (assumed: --gpu NAME for yours)'}, its cuBLAS "
        f"workspaces ({mib(allocator['workspace_bytes'])}) included:")
    rows = [("allocated peak", mib(estimate.allocated_bytes),
             "torch.cuda.max_memory_allocated()"),
            ("reserved peak", mib(estimate.reserved_bytes), "torch.cuda.max_memory_reserved()")]
    if allocator.get("freed_while_building_bytes") is not None:  # --built-on-device
        rows.append(("freed building", mib(allocator["freed_while_building_bytes"]),
                     "while the model was built on the GPU; cached for the steps"))
    for line in columns(rows, indent=2, words_last=True):
        say(line)
    say(f"  nvidia-smi      {mib(shown_low)} – {mib(shown_high)}"
        f"   reserved + a {estimate.context_name} of {mib(low)} – {mib(high)}")
    if estimate.context_name == "CUDA context":  # what its two ends hold (NCCL's: its own)
        say(f"{'':18}the context: {gpus.CONTEXT_ENDS.en.format(low=mib(low), high=mib(high))}")


def fit_line(verdict: Verdict, *, each: bool = False) -> str:
    where = f"{verdict.gpu} ({format_bytes(verdict.memory_bytes)} for a process)" \
        if verdict.gpu else format_bytes(verdict.memory_bytes)
    return f"{'each GPU ' if each else ''}fits in {where}: {verdict.word}, {verdict.reason}"


def per_gpu(estimate: Estimate) -> dict[str, Any] | None:
    """--json: one GPU's figures, which each of the job's `gpus` ranks shares (parallel.py
    says why), and the host memory a rank holds under CPU offload; None on one GPU."""
    layout = estimate.to_dict().get("parallel")
    if not layout:
        return None
    return {"gpus": layout["gpus"], "estimated_rank": layout["rank"],
            "peak_bytes": estimate.peak_bytes, "allocated_bytes": estimate.allocated_bytes,
            "reserved_bytes": estimate.reserved_bytes,
            "nvidia_smi_bytes": (None if estimate.nvidia_smi_bytes is None
                                 else list(estimate.nvidia_smi_bytes)),
            "host_bytes": layout["host_bytes"]}


# -- the largest batch ---------------------------------------------------------------------------
def _largest_batch(model: str, seq_len: int, first: int | None, gpu: str | None,
                   memory: int | None, chosen: dict[str, Any],
                   say: Say) -> tuple[dict[str, Any], int]:
    """Batch after batch, each said as it comes, then the whole estimate of the largest batch
    that fits (of the smallest tried when none does); the answer and the exit status."""
    def said(batch: int, estimate: Estimate, verdict: Verdict) -> None:
        if batch == first_tried[0]:
            say(search_heading(estimate, verdict))
        say(f"  {batch:>9,}  {mib(verdict.needed_bytes):>16}  {WORD_TEXT[verdict.word].en}")

    first_tried = [first or chosen.get("micro_batches", 1)]
    found = api.largest_batch(model, seq_len=seq_len, gpu=gpu, memory=memory, first=first,
                              progress=said, **chosen)
    where = found.verdict.gpu or format_bytes(found.verdict.memory_bytes)
    step = chosen.get("micro_batches", 1)
    if found.capped:
        say(f"batch {found.largest:,} fits in {where}, and the search goes no further")
    elif found.largest:
        say(f"largest batch that fits in {where}: {found.largest:,} "
            f"(batch {found.largest + step:,} does not)")
    else:
        smallest = found.estimate.experiment.batch_size
        say(f"no batch fits in {where}: batch {smallest:,} needs "
            f"{format_bytes(found.verdict.needed_bytes)}")
    say("")
    print_estimate(found.estimate, found.verdict, say)
    return {"largest_batch": found.largest, "capped": found.capped,
            "tried": [{"batch_size": b, "needed_bytes": v.needed_bytes, "fits": v.fits,
                       "word": v.word} for b, v in found.tried.items()],
            "result": found.estimate.to_dict(), "fits": _json(found.verdict)}, \
        exit_status(found.verdict)


def search_heading(estimate: Estimate, verdict: Verdict) -> str:
    rule = (f"the reserved peak plus a {estimate.context_name} of up to "
            f"{mib(verdict.needed_bytes - estimate.reserved_bytes)}"
            if estimate.reserved_bytes is not None else "the peak of the step's tensors")
    where = verdict.gpu or format_bytes(verdict.memory_bytes)
    return (f"{step_words(estimate, batch=False)} — the largest batch that fits in {where}, "
            f"{estimate.kind} with fake tensors, nothing allocated\na batch fits when {rule} "
            f"is within {format_bytes(verdict.memory_bytes)}\n  {'batch':>9}  {'needs':>16}")


# -- the fewest GPUs ------------------------------------------------------------------------------
def _fewest_gpus(model: str, batch: int, seq_len: int, gpu: str | None, memory: int | None,
                 chosen: dict[str, Any], say: Say) -> tuple[dict[str, Any], int]:
    """GPU count after GPU count, each said as it comes, then the whole estimate of one GPU
    at the fewest that fit (at the most tried when none do); the answer and the exit
    status (DOES_NOT_FIT when no count fits, even where none could be estimated)."""
    where = gpu or format_bytes(memory)

    def said(count: int, estimate: Estimate | None, verdict: Verdict | str) -> None:
        if not said.heading:
            said.heading = True
            say(f"{model} · batch {batch} per rank · seq {seq_len} · {chosen['parallel']} — "
                f"the fewest GPUs (1, 2, 4, … 1024) on which each GPU fits in {where}, "
                f"estimated with fake tensors, nothing allocated\n  {'GPUs':>6}  "
                f"{'one GPU needs':>16}  fits")
        if isinstance(verdict, str):
            say(f"  {count:>6,}  {'—':>16}  cannot: {verdict}")
        else:
            say(f"  {count:>6,}  {mib(verdict.needed_bytes):>16}  "
                f"{WORD_TEXT[verdict.word].en}")
    said.heading = False

    found = api.fewest_gpus(model, batch_size=batch, seq_len=seq_len, gpu=gpu, memory=memory,
                            progress=said, **chosen)
    if found.gpus:
        half = found.tried.get(found.gpus // 2) if found.gpus > 1 else None
        say(f"fewest GPUs on which {chosen['parallel']} fits each GPU in {where}: "
            f"{found.gpus:,}" + (f" (on {found.gpus // 2:,}: {WORD_TEXT[half.word].en})"
                                 if isinstance(half, Verdict) else ""))
    else:
        say(f"no GPU count up to 1,024 fits each GPU in {where} with {chosen['parallel']}")
    verdict = None
    if found.estimate is not None:
        verdict = found.tried[found.estimate.experiment.gpus]
        say("")
        print_estimate(found.estimate, verdict, say)
    return {"fewest_gpus": found.gpus,
            "tried": [{"gpus": n, "needed_bytes": v.needed_bytes, "fits": v.fits,
                       "word": v.word} if isinstance(v, Verdict) else
                      {"gpus": n, "cannot": v} for n, v in found.tried.items()],
            "result": None if found.estimate is None else found.estimate.to_dict(),
            "fits": _json(verdict), "per_gpu": None if found.estimate is None
            else per_gpu(found.estimate)}, 0 if found.gpus else DOES_NOT_FIT


# -- the levers ----------------------------------------------------------------------------------
def _levers(model: str, args: argparse.Namespace, gpu: str | None, memory: int | None,
            chosen: dict[str, Any], say: Say) -> dict[str, Any]:
    """Each lever of the registry estimated alone on top of the step, said as it comes: the
    reserved peak it leaves (what runs out) and its change, the tensors' peak and its change,
    whether the step then fits; then the levers that helped, the best of each kind, together."""
    rows: list[dict[str, Any]] = []
    header = [False]

    def said(row: api.LeverRow) -> None:
        if not header[0]:
            header[0] = True
            held = ("reserved peak and its change, the tensors' peak and its change"
                    if row.base.reserved_bytes is not None else
                    "peak of the step's tensors and its change")
            say(f"\nlevers, each alone on top of this step ({held}, whether it then fits):")
        if len(row.levers) > 1:
            say("")
        rows.append(_lever_line(row, gpu, memory, say))

    report = api.levers(model, batch_size=args.batch_size, seq_len=args.seq_len, gpu=gpu,
                        progress=said, **chosen)
    together = rows.pop() if report.together is not None else None
    if together is not None:
        together["levers"] = [lever.id for lever in report.together.levers]
    return {"levers": rows, "together": together}


def _lever_line(row: api.LeverRow, gpu: str | None, memory: int | None,
                say: Say) -> dict[str, Any]:
    lever = row.levers[0]
    name = ("together: " if len(row.levers) > 1 else "") + row.title
    line: dict[str, Any] = {"lever": lever.id if len(row.levers) == 1 else None,
                            "title": row.title, "changes": row.changes,
                            "refused": row.refused,
                            "reserved_bytes": None, "reserved_change_bytes": None,
                            "peak_bytes": None, "peak_change_bytes": None, "fits": None,
                            "cost": None if len(row.levers) > 1 else
                            lever.cost_on(row.base.experiment)}
    if row.estimate is None:
        say(f"  {name}: not estimated: {row.refused}")
        return line
    verdict = _verdict(row.estimate, gpu, memory)
    line.update(reserved_bytes=row.estimate.reserved_bytes,
                reserved_change_bytes=row.reserved_change_bytes,
                peak_bytes=row.estimate.peak_bytes, peak_change_bytes=row.peak_change_bytes,
                fits=None if verdict is None else verdict.word)
    parts = []
    if row.estimate.reserved_bytes is not None:
        parts.append(_change("reserved", row.estimate.reserved_bytes, row.base.reserved_bytes))
    parts.append(_change("tensors", row.estimate.peak_bytes, row.base.peak_bytes))
    say(f"  {name}: {'; '.join(parts)}{'' if verdict is None else ' · ' + verdict.word}")
    if line["cost"]:
        say(f"      cost: {line['cost']}")
    return line


def _change(what: str, now: int, before: int) -> str:
    return f"{what} {mib(now)} ({(now - before) / 2**20:+,.1f} MiB, {(now - before) / before:+.1%})"


def columns(rows: list[tuple[str, ...]], *, indent: int = 0, words_last: bool = False,
            least: int = 14) -> list[str]:
    """Rows of cells as lines: the first column's words left-aligned, the figures after them
    right-aligned, each column as wide as its widest cell (at least `least`), so that a huge
    size widens its column instead of running into the next. words_last: the last column
    is words (the allocator's PyTorch calls), set after the figures as they come."""
    figures = len(rows[0]) - (2 if words_last else 1)
    widths = [max(len(row[i]) for row in rows) for i in range(1 + figures)]
    lines = []
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [row[i].rjust(max(widths[i], least))
                                             for i in range(1, 1 + figures)]
        line = "  ".join(cells) + (f"   {row[-1]}" if words_last else "")
        lines.append((" " * indent + line).rstrip())
    return lines


def mib(nbytes: int) -> str:
    """A size as the command line prints it: MiB, one decimal (units.mib, with its unit)."""
    return f"{units.mib(nbytes)} MiB"
