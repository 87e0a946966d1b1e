"""Names shown to readers, in Chinese and English, in one place."""

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
BACKEND_LABELS: dict[str, Words] = {
    "cuda": Words("measured on a GPU", "GPU 实测"),
    "cpu": Words("measured on the CPU", "CPU 实测"),
    "estimate": Words("estimated (FakeTensor)", "估算（FakeTensor）"),
}

#: The kind of a result's numbers with what names it (templating.kind fills them in): the
#: device an estimate models, the GPU a cuda run measured on.
KIND_LABELS: dict[str, Words] = {
    "estimate": Words("estimated (modelling {device})", "估算（模拟 {device}）"),
    "estimate_unknown": Words("estimated", "估算"),
    "cuda": Words("measured on a GPU ({gpu})", "GPU 实测（{gpu}）"),
}

#: The devices an estimate models, as the kind names them.
MODELLED_DEVICE_LABELS: dict[str, Words] = {
    "cuda": Words("CUDA", "CUDA"),
    "cpu": Words("the CPU", "CPU"),
}
