"""Study `training_curves`: does mixed precision change what a model learns?

The `tiny` BERT of the zoo learns to sort: each input is `seq_len` random numbers from
1…`values`, the target at position i is the i-th smallest. It needs attention across the
whole sequence and takes a few hundred steps to learn. The same model is trained from the
same initial weights on the same batches, in the same order, once per precision; dropout is
off so that rounding is the only difference between the runs. One more fp32 run with another
seed (other initial weights, other batches) measures how far two runs drift apart anyway.
One pair of seeds cannot tell noise from an effect, so every precision is trained again at
each of `noise_seeds` (the fp32 run at the reference seed is reused): the paired differences
(precision minus fp32, seed by seed) and the fp32 runs' spread over seeds are the yardstick.

Params: device (cpu or cuda; set it to the study's backend), precisions (fp32 first; default
fp32 and amp-bf16 on the CPU, plus amp-fp16 on CUDA: fp16 matmuls are emulated and slow on
most CPUs), steps (300), batch_size (32), seq_len (16), values (32), lr (0.003),
seed (0), reference_seed (1), noise_seeds ([1, 2, 3, 4]), eval_size (512), max_points (300).
"""

from __future__ import annotations

import math
import time
from typing import Any

import torch
import torch.nn.functional as F

from generator.errors import ConfigError
from generator.measure.studies import unknown_params
from generator.measure.training.precision import AUTOCAST_DTYPE, autocast_context, make_grad_scaler
from generator.measure.training.threads import one_thread

VERSION = 2  # 2: every precision again at each of noise_seeds
DEFAULTS: dict[str, Any] = {"device": "cpu", "precisions": None, "steps": 300,
                            "batch_size": 32, "seq_len": 16, "values": 32, "lr": 3e-3,
                            "seed": 0, "reference_seed": 1, "noise_seeds": [1, 2, 3, 4],
                            "eval_size": 512, "max_points": 300}
DEFAULT_PRECISIONS = {"cpu": ["fp32", "amp-bf16"], "cuda": ["fp32", "amp-bf16", "amp-fp16"]}
#: The held-out batch is the same for every run and never trained on.
EVAL_SEED = 2**31 - 1
#: The final training loss is the mean over this fraction of the last steps: one batch's
#: loss is noisy, and both runs see the same batches, so the mean compares like with like.
FINAL_FRACTION = 0.1
_POSITIVE = ("steps", "batch_size", "seq_len", "eval_size", "max_points")
#: The smallest number to sort: token 0 is BERT's padding token, whose embedding stays 0.
FIRST_NUMBER = 1


def problems(params: dict[str, Any]) -> list[str]:
    found = unknown_params("training_curves", params, DEFAULTS)
    p = {**DEFAULTS, **params}
    if p["device"] not in DEFAULT_PRECISIONS:
        found.append(f"training_curves device must be cpu or cuda, got {p['device']!r}")
    precisions = p["precisions"] if p["precisions"] is not None else ["fp32"]
    if not isinstance(precisions, list) or not precisions or precisions[0] != "fp32" or \
            any(x not in AUTOCAST_DTYPE for x in precisions) or \
            len(set(precisions)) < len(precisions):
        found.append(f"training_curves precisions must list fp32 first, then others of "
                     f"{', '.join(AUTOCAST_DTYPE)}, each once; got {precisions!r}")
    for key in _POSITIVE + ("values", "seed", "reference_seed"):
        value = p[key]
        least = 2 if key == "values" else (1 if key in _POSITIVE else 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            found.append(f"training_curves {key} must be an integer ≥ {least}, got {value!r}")
    seeds = p["noise_seeds"]
    if not isinstance(seeds, list) or any(not isinstance(x, int) or isinstance(x, bool) or x < 0
                                          for x in seeds) or p["seed"] in seeds \
            or len(set(seeds)) < len(seeds):
        found.append(f"training_curves noise_seeds must list integers ≥ 0, each once, without "
                     f"the seed {p['seed']!r}; got {seeds!r}")
    if not isinstance(p["lr"], (int, float)) or isinstance(p["lr"], bool) or not p["lr"] > 0:
        found.append(f"training_curves lr must be a positive number, got {p['lr']!r}")
    return found


def run(params: dict[str, Any]) -> dict[str, Any]:
    found = problems(params)
    if found:
        raise ConfigError("; ".join(found))
    p = {**DEFAULTS, **params}
    precisions = p["precisions"] or DEFAULT_PRECISIONS[p["device"]]
    with one_thread():
        runs = [train(p, precision, p["seed"]) for precision in precisions]
        reference = train(p, "fp32", p["reference_seed"])
        # The final and held-out losses at every seed, for the noise: seed `seed` is the
        # runs above, the reference run stands for fp32 at its seed.
        done = {(r["precision"], r["seed"]): r for r in [*runs, reference]}
        repeats = [done.get((precision, seed)) or train(p, precision, seed)
                   for seed in [p["seed"], *p["noise_seeds"]] for precision in precisions]
    every = max(1, math.ceil(p["steps"] / p["max_points"]))
    points = math.ceil(p["steps"] / every)
    base = runs[0]
    summary = []
    for result, is_reference in [(r, False) for r in runs] + [(reference, True)]:
        summary.append({
            **{k: v for k, v in result.items() if k != "losses"},
            "reference": is_reference,
            "loss": _downsample(result["losses"], every),
            "final_loss_difference": result["final_loss"] - base["final_loss"],
            "eval_loss_difference": result["eval_loss"] - base["eval_loss"],
        })
    return {"task": "sort", "model": "tiny", "device": p["device"],
            **{k: p[k] for k in DEFAULTS if k not in ("device", "precisions")},
            "threads": 1 if p["device"] == "cpu" else None,
            "final_steps": _final_steps(p["steps"]), "every": every,
            "step": [min((i + 1) * every, p["steps"]) for i in range(points)],
            "runs": summary,
            "seeds": [{k: r[k] for k in ("precision", "seed", "final_loss", "eval_loss",
                                         "eval_accuracy")} for r in repeats]}


def sort_batch(generator: torch.Generator, batch_size: int, seq_len: int, values: int,
               device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Numbers FIRST_NUMBER…values and, as the target, the same numbers sorted."""
    numbers = torch.randint(FIRST_NUMBER, values + 1, (batch_size, seq_len), generator=generator)
    return numbers.to(device), numbers.sort(dim=1).values.to(device)


def train(p: dict[str, Any], precision: str, seed: int) -> dict[str, Any]:
    """One run: the losses of every step, the held-out loss and accuracy at the end."""
    from generator.measure.models import resolve_model

    device = p["device"]
    torch.manual_seed(seed)
    model = resolve_model("tiny").build(
        vocab_size=p["values"] + 1, max_position_embeddings=p["seq_len"],
        hidden_dropout=0.0, attention_dropout=0.0).model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=p["lr"])
    scaler = make_grad_scaler(precision, device)
    data = torch.Generator().manual_seed(seed)
    losses, skipped = [], 0
    started = time.perf_counter()
    for _ in range(p["steps"]):
        inputs, target = sort_batch(data, p["batch_size"], p["seq_len"], p["values"], device)
        with autocast_context(precision, device):
            logits = model(inputs)
            loss = F.cross_entropy(logits.flatten(0, 1), target.flatten())
        if scaler is None:
            loss.backward()
            optimizer.step()
        else:
            scale = scaler.get_scale()
            scaler.scale(loss).backward()
            scaler.step(optimizer)  # skipped when the scaled gradients hold inf or NaN
            scaler.update()
            skipped += scaler.get_scale() < scale
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
    seconds = time.perf_counter() - started
    eval_loss, accuracy = evaluate(model, p, device)
    final = _final_steps(p["steps"])
    return {"precision": precision, "seed": seed, "losses": losses,
            "final_loss": sum(losses[-final:]) / final, "eval_loss": eval_loss,
            "eval_accuracy": accuracy, "seconds": seconds,
            "skipped_steps": int(skipped) if scaler is not None else None,
            "final_scale": scaler.get_scale() if scaler is not None else None}


@torch.no_grad()
def evaluate(model: torch.nn.Module, p: dict[str, Any], device: str) -> tuple[float, float]:
    """Loss and per-position accuracy on the held-out batch, in fp32 for every run: the
    question is what the weights learned, not how the last step was rounded."""
    inputs, target = sort_batch(torch.Generator().manual_seed(EVAL_SEED), p["eval_size"],
                                p["seq_len"], p["values"], device)
    model.eval()
    logits = model(inputs)
    model.train()
    loss = F.cross_entropy(logits.flatten(0, 1), target.flatten())
    return loss.item(), (logits.argmax(-1) == target).float().mean().item()


def _final_steps(steps: int) -> int:
    return max(1, round(steps * FINAL_FRACTION))


def _downsample(losses: list[float], every: int) -> list[float]:
    """The mean of each `every` consecutive steps (every = 1: the losses as they are)."""
    return [sum(chunk) / len(chunk) for chunk in
            (losses[i:i + every] for i in range(0, len(losses), every))]
