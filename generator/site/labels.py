"""Names shown to readers, in Chinese and English, in one place."""

from collections.abc import Mapping
from typing import Any

from generator.site.escaping import written
from generator.words import Words

CATEGORY_LABELS: dict[str, Words] = {
    "parameters": Words("Parameters", "模型参数"),
    "gradients": Words("Gradients", "梯度"),
    "optimizer_state": Words("Optimizer state", "优化器状态"),
    "activations": Words("Activations", "激活值"),
    "autocast_copies": Words("Autocast weight copies", "autocast 权重副本"),
    "temporaries": Words("Temporaries", "临时张量"),
    "not_attributed": Words("Not attributed", "未归属"),
    "comm_buffers": Words("Communication buffers", "通信缓冲"),
    "peak": Words("Peak", "峰值"),
    "sum_of_maxima": Words("Sum of the maxima", "各项最大值之和"),
}

PRECISION_LABELS: dict[str, Words] = {
    "fp32": Words("FP32", "FP32"),
    "amp-fp16": Words("AMP fp16", "AMP fp16"),
    "amp-bf16": Words("AMP bf16", "AMP bf16"),
    "fp16": Words("pure fp16", "纯 fp16"),
    "bf16": Words("pure bf16", "纯 bf16"),
}

#: Every number is one of three kinds, named by its backend: estimated (fake tensors modelling
#: a device), measured on the CPU, or measured on a GPU. An estimate is never "measured".
#: Name a result's kind with `kind()`, which adds the device an estimate models and the GPU.
BACKEND_LABELS: dict[str, Words] = {
    "cuda": Words("measured on a GPU", "GPU 实测"),
    "cpu": Words("measured on the CPU", "CPU 实测"),
    "estimate": Words("estimated", "估算"),
}

#: The kind of a result's numbers with what names it (templating.kind fills them in): the
#: device an estimate models, the GPU a cuda run measured on.
KIND_LABELS: dict[str, Words] = {
    "estimate": Words("estimated (modelling {device})", "估算（模拟 {device}）"),
    "estimate_unknown": Words("estimated", "估算"),
    "cuda": Words("measured on a GPU ({gpu})", "GPU 实测（{gpu}）"),
}

#: What a real run's own peak is, by backend: the allocator's figure the tracker is held
#: against (the result's ground_truth), in words instead of the source string it records.
GROUND_TRUTH_LABELS: dict[str, Words] = {
    "cpu": written(Words("peak the CPU allocator reported (its allocation events, read with "
                 "`torch.profiler`'s `profile_memory=True`)",
                 "CPU 分配器自己记下的峰值（用 `torch.profiler` 的 `profile_memory=True` 读出的分配事件）")),
    "cuda": written(Words("peak the CUDA caching allocator reported (`torch.cuda.max_memory_allocated`)",
                  "CUDA 缓存分配器报告的峰值（`torch.cuda.max_memory_allocated`）")),
}

#: The devices an estimate models, as the kind names them.
MODELLED_DEVICE_LABELS: dict[str, Words] = {
    "cuda": Words("CUDA", "CUDA"),
    "cpu": Words("the CPU", "CPU"),
}


def kind(result: Mapping[str, Any], lang: str) -> str:
    """What a result's numbers are, in the reader's words, from its backend: "estimated
    (modelling CUDA)" / "估算（模拟 CUDA）", "measured on the CPU" / "CPU 实测", or "measured on a
    GPU (NVIDIA H100 80GB HBM3)" / "GPU 实测（…）". Takes a step result (the modelled device
    from `experiment.device`, the GPU from `environment.device_name`) or a page's summary of
    one that carries `backend` and, flat, `device` and `device_name` or `machine` (the sweeps'
    and sharding groups, the levers' step times)."""
    backend = result["backend"]
    experiment = result.get("experiment") or {}
    environment = result.get("environment") or {}
    if backend == "estimate":
        device = experiment.get("device") or result.get("device")
        if device in MODELLED_DEVICE_LABELS:
            modelled = MODELLED_DEVICE_LABELS[device][lang]
            return KIND_LABELS["estimate"][lang].format(device=modelled)
        return KIND_LABELS["estimate_unknown"][lang]
    if backend == "cuda":
        gpu = environment.get("device_name") or result.get("device_name") or result.get("machine")
        if gpu:
            return KIND_LABELS["cuda"][lang].format(gpu=gpu)
    return BACKEND_LABELS[backend][lang]
