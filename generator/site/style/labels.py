"""Names shown to readers, in Chinese and English, in one place."""

CATEGORY_LABELS = {
    "parameters": {"zh": "模型参数", "en": "Parameters"},
    "gradients": {"zh": "梯度", "en": "Gradients"},
    "optimizer_state": {"zh": "优化器状态", "en": "Optimizer state"},
    "activations": {"zh": "激活值", "en": "Activations"},
    "autocast_copies": {"zh": "autocast 权重副本", "en": "Autocast weight copies"},
    "temporaries": {"zh": "临时张量", "en": "Temporaries"},
    "comm_buffers": {"zh": "通信缓冲", "en": "Communication buffers"},
    "peak": {"zh": "峰值", "en": "Peak"},
    "sum_of_maxima": {"zh": "各项最大值之和", "en": "Sum of the maxima"},
}

PRECISION_LABELS = {
    "fp32": {"zh": "FP32", "en": "FP32"},
    "amp-fp16": {"zh": "AMP fp16", "en": "AMP fp16"},
    "amp-bf16": {"zh": "AMP bf16", "en": "AMP bf16"},
}

BACKEND_LABELS = {
    "cuda": {"zh": "CUDA 实测", "en": "measured on CUDA"},
    "cpu": {"zh": "CPU 实测", "en": "measured on the CPU"},
    "estimate": {"zh": "估算（FakeTensor）", "en": "estimated (FakeTensor)"},
}
