"""The backends' notes, which results record in English, in the reader's language.

A result's notes are facts about how it was made (generator/measure/backends/*.py,
cuda_emulation.notes, reserved.py, modelled_kernels.py). Chinese pages show each in Chinese:
every note the measuring code writes has a pattern here, its numbers carried over; a note no
pattern knows (from an older or a user's result) is shown as written, marked as the
original, rather than dropped.
"""

from __future__ import annotations

import re

#: (the English note as a regular expression, its Chinese with the groups as {1}, {2}, …)
ZH: list[tuple[re.Pattern[str], str]] = [(re.compile(pattern), text) for pattern, text in (
    (r"estimate: fake tensors, nothing allocated; kernels' internal buffers are not seen "
     r"unless modelled",
     "估算：假张量，不分配任何内存；内核内部的缓冲区除非单独建模，否则看不到"),
    (r"models CUDA: sizes rounded up to (\d+)-byte blocks, foreach optimizer kernels",
     "模拟 CUDA：大小向上取整到 {1} 字节的块，优化器用 foreach 内核"),
    (r"dropout: CUDA's fused kernel, keeping a 1-byte mask, not the CPU's noise tensor",
     "dropout：按 CUDA 的融合内核，保存每个元素 1 字节的掩码，而不是 CPU 上的噪声张量"),
    (r"attention: CUDA's fused SDPA kernel \(flash for fp16/bf16 without a mask, else "
     r"memory-efficient\), keeping output and log-sum-exp, not the attention matrix",
     "注意力：按 CUDA 的融合 SDPA 内核（fp16/bf16 且无掩码时用 flash，否则用省内存版），"
     "只保存输出和 log-sum-exp，不保存注意力矩阵"),
    (r"softmax of fp16 into fp32: CUDA's half-to-float kernel, without the CPU's fp32 copy",
     "fp16 输入、fp32 输出的 softmax：按 CUDA 的半精度转单精度内核，没有 CPU 上那份 fp32 副本"),
    (r"optimizer step counters: in host memory, as torch\.optim keeps them beside CUDA "
     r"parameters unless capturable or fused",
     "优化器的步数计数：放在主机内存里。参数在 CUDA 上时，torch.optim 就是这样放的"
     "（capturable 或 fused 时除外）"),
    (r"autocast: CUDA's op policy of PyTorch ([\d.]+) in place of the CPU's \(pow, exp, sums, "
     r"softmax, norms and losses in fp32; cat, stack not cast\)",
     "autocast：用 PyTorch {1} 在 CUDA 上的算子策略代替 CPU 的（pow、exp、求和、softmax、"
     "归一化和 loss 用 fp32；cat、stack 不转换）"),
    (r"gradient sums: ([\d,]+) sums of two gradients made in place, where autograd makes "
     r"them so in an untracked step \(accumulation\.py\); a fake or tracked step makes each "
     r"in a new tensor",
     "梯度求和：有 {1} 次两份梯度相加按原地累加计，未被追踪的训练步里 autograd 正是这样做的"
     "（accumulation.py）；假张量或被追踪的一步每次都会新建一个张量来存放和"),
    (r"allocated and reserved peaks: the CUDA caching allocator's rules replayed over (\d+) "
     r"steps, with the cuBLAS workspaces of an? (.+) GPU",
     "已分配与已预留峰值：按 CUDA 缓存分配器的规则重放 {1} 步，含 {2} GPU 的 cuBLAS 工作区"),
    (r"model built on the GPU: building it freed (.+) \(e\.g\. an output weight that tying "
     r"replaced\), which the allocator keeps cached for the steps",
     "模型直接在 GPU 上构建：构建过程中释放了 {1}（例如权重绑定后被替换掉的输出层权重），"
     "分配器把它们留在缓存里，供训练步复用"),
    *((rf"LoRA: PEFT ([\w.+-]+) adapters of rank (\d+) on (.+) \({origin}\); the model's own "
       r"weights frozen", f"LoRA：PEFT {{1}} 秩为 {{2}} 的适配器，加在 {{3}}（{words}）；模型自身的权重冻结")
      for origin, words in ((r"PEFT's default for (\S+)", "PEFT 对 {4} 的默认选择"),
                            (r"all-linear, as PEFT reads it", "all-linear，由 PEFT 展开"),
                            (r"as asked", "按用户指定"))),
    (r"QLoRA: bitsandbytes ([\w.+-]+) (nf4|fp4) weights in (\d+) linear layers \(blocks of "
     r"(\d+), double quantization\), computed in (\w+); linear layers not quantized: (.+)",
     "QLoRA：bitsandbytes {1} 把 {3} 个线性层的权重存成 {2}（每 {4} 个一块，双重量化），"
     "以 {5} 计算；没有量化的线性层：{6}"),
    (r"real run on the CPU with (\d+) threads?",
     "CPU 上的真实运行，{1} 个线程"),
    (r"figures: the allocator's blocks labelled by the tracker; kernels' internal buffers "
     r"count as temporaries",
     "数字：分配器的内存块，由跟踪器标注类别；内核内部的缓冲区算作临时张量"),
    (r"LSTM: oneDNN's workspace saved for backward and the buffers its kernels hold while "
     r"they run are modelled \(kernel_workspaces\.py\); brgemm's per-thread buffers \(bf16\) "
     r"are not",
     "LSTM：oneDNN 为反向保存的工作区和内核运行时占用的缓冲区已建模（kernel_workspaces.py）；"
     "brgemm 的每线程缓冲区（bf16）没有建模"),
    (r"convolutions: the buffers oneDNN's kernels hold while they run \(reorders, "
     r"scratchpad\) taken from running each shape's kernel once for real on the CPU that "
     r"made the estimate \(kernel_probes\.py\)",
     "卷积：oneDNN 内核运行时占用的缓冲区（布局转换、scratchpad）"
     "取自在做估算的那台 CPU 上把每种形状的内核真实运行一次（kernel_probes.py）"),
    (r"mixed-dtype elementwise ops: the copies the CPU's kernels make of inputs not in the "
     r"op's common dtype \(TensorIterator; cpu_promotion\.py\)",
     "混合类型的逐元素算子：CPU 内核会先把类型与算子公共类型不同的输入复制一份"
     "（TensorIterator；cpu_promotion.py）"),
    (r"attention masks: the batch holds no padding, so transformers leaves the mask to SDPA's "
     r"causal flag where a real run of it does \(fake tensors have no values to read\)",
     "注意力掩码：这批数据没有填充，所以在真实运行会省掉掩码的地方，transformers 同样不构造掩码，"
     "改用 SDPA 的因果标志（假张量没有数值可读）"),
    (r"not modelled: cuDNN's reserve space for the recurrent layers \(LSTM, GRU, RNN\), which "
     r"their CUDA kernel keeps for backward and whose size cuDNN decides; the estimate counts "
     r"what the CPU's kernels save in its place \(for an LSTM, nothing\)",
     "没有建模：循环层（LSTM、GRU、RNN）在 cuDNN 里的保留空间（reserve space）。CUDA 内核"
     "把它留到反向传播，大小由 cuDNN 自己决定；估算里算的是 CPU 内核在同一位置保存的张量"
     "（LSTM 的话，什么也没有）"),
)]
ORIGINAL = {"zh": "（原文）", "en": ""}


def note_text(note: str, lang: str) -> str:
    """`note` in `lang`: English as recorded; Chinese from its pattern, or the original
    marked as such."""
    if lang != "zh":
        return note
    for pattern, text in ZH:
        found = pattern.fullmatch(note)
        if found:
            return text.format(None, *found.groups())
    return f"{ORIGINAL['zh']}{note}"
