"""What the held-out sources ran that the estimate, at its own PyTorch, does not, and how
much memory it accounts for, point by point; and a point estimated twice because its setting
was first transcribed differently from how the source ran it. Neither moves the estimate:
the page states them beside it (HELD_OUT.md: the method is never tuned to these points).

PyTorch before 1.11 kept a softmax's *input* for backward beside its output, although the
backward reads only the output (pytorch issue #64000, fixed for 1.11). In BERT's eager
attention that input is the attention scores, one tensor of batch × heads × seq² per layer.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from generator.results.reference_runs import HeldOutPoint, HeldOutSource
from generator.site.escaping import written
from generator.site.stats import falls_short
from generator.units import mib, pct
from generator.words import Words

SOFTMAX_ISSUE = "https://github.com/pytorch/pytorch/issues/64000"
#: The first release whose softmax keeps only its output.
SOFTMAX_FIXED = (1, 11)
#: The configs that ship with the package (the site imports nothing of the measuring layer).
SHIPPED = Path(__file__).resolve().parents[2] / "measure" / "models" / "hf_configs"
#: The bytes of the scores as softmax receives them: FP32 in an FP32 step; under autocast
#: fp16, autocast hands CUDA's softmax the fp16 scores with dtype=float32 (its
#: fp32_set_opt_dtype policy), which reads them as they are, so the kept input is 16-bit.
SCORE_BYTES = {"fp32": 4, "amp-fp16": 2, "amp-bf16": 2, "fp16": 2, "bf16": 2}


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:2])


def keeps_softmax_input(source: HeldOutSource) -> bool:
    """Whether every PyTorch the source ran (stated, or assumed from its date) predates 1.11."""
    return all(_release(v) < SOFTMAX_FIXED for v in source.versions["torch"])


def attention_shape(point: HeldOutPoint) -> dict[str, int] | None:
    """Layers and heads of the point's model, from the config shipped with the package; None
    for a model without one, or a point whose attention is not eager (SDPA keeps no scores)."""
    words = shlex.split(point.command)
    if "--attention" not in words or words[words.index("--attention") + 1] != "eager":
        return None
    model = next((w for w in words if w.startswith("hf:")), None)
    path = SHIPPED / f"{(model or '').removeprefix('hf:').replace('/', '--')}.json"
    if model is None or not path.is_file():
        return None
    config = json.loads(path.read_text(encoding="utf-8"))
    # families name the fields differently (DistilBERT's n_layers is BERT's num_hidden_layers)
    layers = next(config[k] for k in ("num_hidden_layers", "n_layers", "n_layer") if k in config)
    heads = next(config[k] for k in ("num_attention_heads", "n_heads", "n_head") if k in config)
    return {"layers": layers, "heads": heads}


def softmax_input(point: HeldOutPoint) -> dict[str, int] | None:
    """The softmax inputs the source's PyTorch kept that the estimate's does not: per layer,
    micro-batch × heads × seq² × the scores' bytes; at once, in every layer without
    checkpointing, in the one layer being recomputed with it. None where it does not apply."""
    if not keeps_softmax_input(point.source):
        return None
    shape = attention_shape(point)
    if shape is None:
        return None
    micro = point.batch_size // point.micro_batches
    per_layer = micro * shape["heads"] * point.seq_len ** 2 * SCORE_BYTES[point.precision]
    layers = 1 if point.checkpointing else shape["layers"]
    return {"per_layer": per_layer, "layers": layers, "bytes": per_layer * layers,
            "micro": micro, "heads": shape["heads"], "all_layers": shape["layers"]}


def softmax_said(rows: list[dict[str, Any]]) -> Words | None:
    """The known cause, its size, and against how many of the points that fall short it is
    no larger than the shortfall (all of them, or some). None where no row has it."""
    kept = [r for r in rows if r["softmax"] is not None]
    if not kept:
        return None
    short = [r for r in kept if falls_short(r["ratio"])]
    within = [r for r in short if r["softmax"]["bytes"] <= r["published"] - r["estimated"]]
    first = kept[0]["softmax"]
    torch = " or ".join(kept[0]["point"].source.versions["torch"])
    sizes = ", ".join(sorted({f"{mib(r['softmax']['per_layer'])} MiB" for r in kept},
                             key=lambda s: float(s.split()[0].replace(",", ""))))
    lead = Words(
        f"A known cause, not modelled: PyTorch {torch} kept each softmax's input for backward "
        f"beside its output, although backward reads only the output ([pytorch issue "
        f"#64000]({SOFTMAX_ISSUE}), fixed for 1.11); the estimate runs a later PyTorch that "
        f"keeps only the output, and is not tuned to it. In eager attention that input is the "
        f"attention scores: micro-batch × {first['heads']} heads × sequence² × their bytes "
        f"(4 in FP32; 2 under fp16 autocast, which hands softmax the fp16 scores), "
        f"{sizes} per layer at these points, held in all {first['all_layers']} layers "
        f"without checkpointing and in the one being recomputed with it. The last column gives "
        f"that size for each point.",
        f"一个已知、未建模的原因：PyTorch {torch.replace(' or ', ' 或 ')} 的 softmax 除了输出，"
        f"还把输入也留给反向，尽管反向只用输出（[pytorch issue #64000]({SOFTMAX_ISSUE})，"
        f"1.11 修复）；估算用的是之后的 PyTorch，只留输出，也没有为此调整。在 eager 注意力里，"
        f"这个输入就是注意力分数：微批次 × {first['heads']} 个头 × 序列长度² × 每个数的字节数"
        f"（FP32 为 4；fp16 autocast 下为 2，因为 autocast 把 fp16 的分数直接交给 softmax），"
        f"这些数据点上每层 {sizes.replace(', ', '、')}；不做激活检查点时 "
        f"{first['all_layers']} 层同时留着，做检查点时只有正在重算的那一层。最后一列给出每个"
        f"数据点上的这部分大小。")
    if not short:
        return written(lead)
    if len(within) == len(short):
        tail = Words(f" At each of the {len(short)} points where the estimate falls short, it "
                     f"is no larger than the shortfall.",
                     f"估算偏低的 {len(short)} 个数据点上，它都不超过差额。")
    else:
        over = max(r["softmax"]["bytes"] - (r["published"] - r["estimated"])
                   for r in short if r not in within)
        other = ("at the other it is larger, by" if len(short) - len(within) == 1 else
                 f"at the other {len(short) - len(within)} it is larger, by at most")
        tail = Words(f" At {len(within)} of the {len(short)} points where the estimate falls "
                     f"short, it is no larger than the shortfall; {other} {mib(over)} MiB.",
                     f"估算偏低的 {len(short)} 个数据点中，有 {len(within)} 个上它不超过差额；"
                     f"其余 {len(short) - len(within)} 个上它比差额大，最多大 {mib(over)} MiB。")
    # written here, its link included; nothing in it comes from outside but numbers and the
    # source's PyTorch versions
    return written(Words(lead.en + tail.en, lead.zh + tail.zh))


def first_estimate(point: HeldOutPoint, estimated_figure) -> dict[str, Any] | None:
    """A corrected point's first estimate, of the figure the source printed, and its ratio."""
    if point.first is None or point.first["estimated"] is None:
        return None
    figure = estimated_figure(point.source, point.first["estimated"])
    return {"estimated": figure, "ratio": figure / point.published_bytes,
            "commit": point.first["commit"]}


def correction_said(source: HeldOutSource, rows: list[dict[str, Any]]) -> Words | None:
    """What changed and why (the source's own words in held_out.json), then the errors of the
    first and the corrected estimates, and whether every corrected one is nearer the
    published figure (or how many)."""
    if source.correction is None:
        return None
    both = [r for r in rows if r["first"] is not None]
    if not both:
        return source.correction
    first = max(abs(r["first"]["ratio"] - 1) for r in both)
    now = max(abs(r["ratio"] - 1) for r in both)
    nearer = sum(abs(r["ratio"] - 1) < abs(r["first"]["ratio"] - 1) for r in both)
    commits = sorted({r["first"]["commit"][:7] for r in both})
    if nearer == len(both):
        which = Words(f"each of the {len(both)} corrected estimates is nearer its published "
                      f"figure than the first",
                      f"{len(both)} 个改正后的估算都比第一次更接近公开数字")
    else:
        which = Words(f"{nearer} of the {len(both)} corrected estimates are nearer their "
                      f"published figure than the first",
                      f"{len(both)} 个改正后的估算中有 {nearer} 个比第一次更接近公开数字")
    return Words(
        f"{source.correction.en} The first estimates (at {', '.join(commits)}) were off by at "
        f"most {pct(first)}; the corrected ones by at most {pct(now)}, and {which.en}. The "
        f"summary above counts the corrected ones.",
        f"{source.correction.zh}第一次估算（在 {'、'.join(commits)}）的误差最大 {pct(first)}；"
        f"改正后最大 {pct(now)}，{which.zh}。上面的汇总按改正后的估算统计。")
