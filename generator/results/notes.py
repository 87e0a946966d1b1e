"""What a result's notes say, as data: each note the measuring code records is an identifier
with values, `{"id": "in_place_sums", "values": {"count": 96}}`, and its words in both
languages live here, once. Pages, the command line and the API print `text(note, lang)`;
nothing translates prose after the fact.

A template's fields are filled with the note's values; `{x:size}` prints bytes in binary units
and `{x:list}` a list of names, each in the reader's language. `note()` refuses an identifier
this catalogue lacks, or values its words do not use, so a note cannot go out without both
languages. Torch-free.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import Any, Mapping

from generator import units
from generator.words import Words

CATALOGUE: dict[str, Words] = {
    # -- how the figures were made
    "estimate": Words(
        "estimate: fake tensors, nothing allocated; kernels' internal buffers are not seen "
        "unless modelled",
        "估算：假张量，不分配任何内存；内核内部的缓冲区除非单独建模，否则看不到"),
    "models_cuda": Words(
        "models CUDA: sizes rounded up to {block}-byte blocks, foreach optimizer kernels",
        "模拟 CUDA：大小向上取整到 {block} 字节的块，优化器用 foreach 内核"),
    "real_cpu_run": Words(
        "real run on the CPU with {threads} threads", "CPU 上的真实运行，{threads} 个线程"),
    "real_cuda_run": Words("real run on {gpu}", "在 {gpu} 上的真实运行"),
    "cpu_blocks": Words(
        "figures: the allocator's blocks labelled by the tracker; kernels' internal buffers "
        "count as temporaries",
        "数字：分配器的内存块，由跟踪器标注类别；内核内部的缓冲区算作临时张量"),
    "tracked": Words(
        "tracked: the user's own step code under generator.track(); its phases marked by "
        "hooks (the model's call, the first gradient at its output, the optimizer's step)",
        "跟踪：用户自己的训练步代码，在 generator.track() 里运行；各阶段由钩子标出（调用模型、"
        "第一个梯度到达模型输出、优化器的 step）"),
    # -- what an estimate models of CUDA (emulation/cuda_kernels.py, cuda_autocast.py)
    "cuda_dropout": Words(
        "dropout: CUDA's fused kernel, keeping a 1-byte mask, not the CPU's noise tensor",
        "dropout：按 CUDA 的融合内核，保存每个元素 1 字节的掩码，而不是 CPU 上的噪声张量"),
    "cuda_attention": Words(
        "attention: CUDA's fused SDPA kernel (flash for fp16/bf16 without a mask, else "
        "memory-efficient), keeping output and log-sum-exp, not the attention matrix",
        "注意力：按 CUDA 的融合 SDPA 内核（fp16/bf16 且无掩码时用 flash，否则用省内存版），"
        "只保存输出和 log-sum-exp，不保存注意力矩阵"),
    "cuda_softmax": Words(
        "softmax of fp16 into fp32: CUDA's half-to-float kernel, without the CPU's fp32 copy",
        "fp16 输入、fp32 输出的 softmax：按 CUDA 的半精度转单精度内核，没有 CPU 上那份 fp32 副本"),
    "optimizer_state_on_host": Words(
        "optimizer step counters: in host memory, as torch.optim keeps them beside CUDA "
        "parameters unless capturable or fused",
        "优化器的步数计数：放在主机内存里。参数在 CUDA 上时，torch.optim 就是这样放的"
        "（capturable 或 fused 时除外）"),
    "cuda_autocast": Words(
        "autocast: CUDA's op policy of PyTorch {torch} in place of the CPU's (pow, exp, sums, "
        "norms and losses in fp32, softmax too unless given a dtype, as cross-entropy gives its "
        "log-softmax the logits' own; cat, stack not cast)",
        "autocast：用 PyTorch {torch} 在 CUDA 上的算子策略代替 CPU 的（pow、exp、求和、归一化和 "
        "loss 用 fp32；softmax 也用 fp32，除非调用时指定了 dtype，而交叉熵正是按 logits 自己的精度"
        "调用 log-softmax；cat、stack 不转换）"),
    "allocator_replay": Words(
        "allocated and reserved peaks: the CUDA caching allocator's rules replayed over "
        "{steps} steps, with the cuBLAS workspaces of {gpu}",
        "已分配与已预留峰值：按 CUDA 缓存分配器的规则重放 {steps} 步，含 {gpu} 的 cuBLAS 工作区"),
    "allocator_replay_assumed": Words(
        "allocated and reserved peaks: the CUDA caching allocator's rules replayed over "
        "{steps} steps, with the cuBLAS workspaces of {gpu} (assumed: none was named)",
        "已分配与已预留峰值：按 CUDA 缓存分配器的规则重放 {steps} 步，含 {gpu} 的 cuBLAS "
        "工作区（没有指定 GPU，按它估算）"),
    "built_on_device": Words(
        "model built on the GPU: building it freed {freed_bytes:size} (e.g. an output weight "
        "that tying replaced), which the allocator keeps cached for the steps",
        "模型直接在 GPU 上构建：构建过程中释放了 {freed_bytes:size}（例如权重绑定后被替换掉的"
        "输出层权重），分配器把它们留在缓存里，供训练步复用"),
    "not_modelled_cudnn_reserve": Words(
        "not modelled: cuDNN's reserve space for the recurrent layers (LSTM, GRU, RNN), which "
        "their CUDA kernel keeps for backward and whose size cuDNN decides; the estimate "
        "counts what the CPU's kernels save in its place (for an LSTM, nothing)",
        "没有建模：循环层（LSTM、GRU、RNN）在 cuDNN 里的保留空间（reserve space）。CUDA 内核"
        "把它留到反向传播，大小由 cuDNN 自己决定；估算里算的是 CPU 内核在同一位置保存的张量"
        "（LSTM 的话，什么也没有）"),
    # -- on any device
    "in_place_sums": Words(
        "gradient sums: {count:,} sums of two gradients made in place, where autograd makes "
        "them so in an untracked step (in_place_sums.py); a fake or tracked step makes each "
        "in a new tensor",
        "梯度求和：有 {count:,} 次两份梯度相加按原地累加计，未被追踪的训练步里 autograd 正是"
        "这样做的（in_place_sums.py）；假张量或被追踪的一步每次都会新建一个张量来存放和"),
    "unpadded_masks": Words(
        "attention masks: the batch holds no padding, so transformers leaves the mask to "
        "SDPA's causal flag where a real run of it does (fake tensors have no values to read)",
        "注意力掩码：这批数据没有填充，所以在真实运行会省掉掩码的地方，transformers 同样不构造"
        "掩码，改用 SDPA 的因果标志（假张量没有数值可读）"),
    "unpacked_positions": Words(
        "position ids: each row holds one sequence (the model numbers its tokens itself), so "
        "transformers builds no mask for packed sequences, as in a real run of it (fake "
        "tensors have no values to read)",
        "位置编号：每一行只有一个序列（由模型自己编号），所以 transformers 不会为打包的序列构造"
        "掩码，与真实运行一致（假张量没有数值可读）"),
    # -- what an estimate models of the CPU's kernels (emulation/cpu_kernels.py)
    "onednn_lstm": Words(
        "LSTM: oneDNN's workspace saved for backward and the buffers its kernels hold while "
        "they run are modelled (onednn_lstm.py); brgemm's per-thread buffers (bf16) are not",
        "LSTM：oneDNN 为反向保存的工作区和内核运行时占用的缓冲区已建模（onednn_lstm.py）；"
        "brgemm 的每线程缓冲区（bf16）没有建模"),
    "onednn_convolutions": Words(
        "convolutions: the buffers oneDNN's kernels hold while they run (reorders, "
        "scratchpad) taken from running each shape's kernel once for real on the CPU that "
        "made the estimate (onednn_conv_probes.py)",
        "卷积：oneDNN 内核运行时占用的缓冲区（布局转换、scratchpad）取自在做估算的那台 CPU 上"
        "把每种形状的内核真实运行一次（onednn_conv_probes.py）"),
    "cpu_promotion": Words(
        "mixed-dtype elementwise ops: the copies the CPU's kernels make of inputs not in the "
        "op's common dtype (TensorIterator; cpu_promotion.py)",
        "混合类型的逐元素算子：CPU 内核会先把类型与算子公共类型不同的输入复制一份"
        "（TensorIterator；cpu_promotion.py）"),
    # -- what was done to the model (training/lora.py, quantize_4bit.py)
    "lora_default": Words(
        "LoRA: PEFT {peft} adapters of rank {rank} on {modules:list} (PEFT's default for "
        "{model_type}); the model's own weights frozen",
        "LoRA：PEFT {peft} 秩为 {rank} 的适配器，加在 {modules:list}（PEFT 对 {model_type} 的"
        "默认选择）；模型自身的权重冻结"),
    "lora_all_linear": Words(
        "LoRA: PEFT {peft} adapters of rank {rank} on {modules:list} (all-linear, as PEFT "
        "reads it); the model's own weights frozen",
        "LoRA：PEFT {peft} 秩为 {rank} 的适配器，加在 {modules:list}（all-linear，由 PEFT 展开）；"
        "模型自身的权重冻结"),
    "lora_as_asked": Words(
        "LoRA: PEFT {peft} adapters of rank {rank} on {modules:list} (as asked); the model's "
        "own weights frozen",
        "LoRA：PEFT {peft} 秩为 {rank} 的适配器，加在 {modules:list}（按用户指定）；"
        "模型自身的权重冻结"),
    "qlora": Words(
        "QLoRA: bitsandbytes {bitsandbytes} {quant_type} weights in {layers} linear layers "
        "(blocks of {block}, double quantization), bnb_4bit_compute_dtype={dtype}; linear "
        "layers not quantized: {kept:list}",
        "QLoRA：bitsandbytes {bitsandbytes} 把 {layers} 个线性层的权重存成 {quant_type}（每 "
        "{block} 个一块，双重量化），bnb_4bit_compute_dtype={dtype}；没有量化的线性层：{kept:list}"),
    # -- DDP's buckets on a multi-GPU estimate; the real runs of the sharding study, which
    #    results stored before it was replaced by multi-GPU estimates may carry (migrate.py)
    "sharding_ddp_buckets": Words(
        "ddp: PyTorch's DistributedDataParallel cannot run on fake tensors; its gradient "
        "buckets are reproduced (25 MiB each, gradient_as_bucket_view=False)",
        "ddp：PyTorch 的 DistributedDataParallel 不能在假张量上运行，这里复现了它的梯度桶"
        "（每个 25 MiB，gradient_as_bucket_view=False）"),
    "sharding_torchrun_cuda": Words(
        "real run: {processes} processes under torchrun, NCCL, {gpu}",
        "真实运行：torchrun 下 {processes} 个进程，NCCL，{gpu}"),
    "sharding_torchrun_cpu": Words(
        "real run: {processes} processes under torchrun, gloo, CPU",
        "真实运行：torchrun 下 {processes} 个进程，gloo，CPU"),
    # -- a rank of a multi-GPU step (measure/training/parallel.py)
    "parallel_rank": Words(
        "{strategy} over {gpus} GPUs (mesh {mesh}): rank 0 of a fake process group, "
        "collectives run and move nothing; its local shards are counted; every rank holds "
        "storages of the same sizes, so these are each GPU's figures",
        "{strategy}，{gpus} 块 GPU（网格 {mesh}）：假进程组中的 0 号进程，集合通信照常调用但"
        "不传数据；按本卡的分片计数；每张卡持有的存储大小相同，所以这就是每块 GPU 的数字"),
    "parallel_fsdp_units": Words(
        "FSDP2: fully_shard on {count} blocks ({first} …) and on the root, "
        "reshard_after_forward={reshard} for the blocks",
        "FSDP2：在 {count} 个模块（{first} 等）和根模块上调用 fully_shard，"
        "这些模块 reshard_after_forward={reshard}"),
    "parallel_root_only": Words(
        "FSDP2: no repeated blocks found, so the root is the only unit and its weights are "
        "gathered whole",
        "FSDP2：没有找到重复的模块，根模块是唯一的单元，权重整体聚合"),
    "parallel_offload": Words(
        "CPU offload (FSDP2's CPUOffloadPolicy): this rank's sharded parameters, gradients and "
        "optimizer state are in host memory, not counted here; each unit's shards are copied "
        "to the GPU to be gathered, each gradient shard back to the host, and the optimizer "
        "steps on the CPU. Host memory per rank as the optimizer starts: {host:size}, of it "
        "{pinned:size} pinned (PyTorch's pinned allocator rounds each tensor up to a power of "
        "two), plus the optimizer's temporaries",
        "CPU 卸载（FSDP2 的 CPUOffloadPolicy）：本 rank 分片后的参数、梯度和优化器状态在主机内存"
        "里，这里不计入；每个单元的分片在聚合前复制到 GPU，梯度分片再复制回主机，优化器在 CPU 上"
        "更新。优化器开始时每个 rank 占主机内存 {host:size}，其中锁页内存 {pinned:size}"
        "（PyTorch 的锁页分配器把每个张量向上取整到 2 的幂），另加优化器的临时张量"),
    "parallel_nccl": Words(
        "NCCL: {communicators} communicator(s) hold {low:size} – {high:size} outside the "
        "caching allocator (per communicator 544 MiB – 1.49 GiB, NVIDIA/nccl#964, "
        "#864), counted with the CUDA context",
        "NCCL：{communicators} 个通信器在缓存分配器之外占 {low:size} – {high:size}"
        "（每个 544 MiB – 1.49 GiB，见 NVIDIA/nccl#964、#864），与 CUDA 上下文一起计入"),
    "parallel_tp_plan_transformers": Words(
        "tensor parallelism: transformers' own plan (the model's base_model_tp_plan) over "
        "{size} GPUs; each rank computes on the whole batch of its group",
        "张量并行：按 transformers 自带的切分方案（模型的 base_model_tp_plan），{size} 块 GPU；"
        "同组的每张卡都处理整批数据"),
    # -- a script run on the simulated GPU (generator/simulate): each kind of value a simulated
    # tensor cannot give, and the placeholder it gets (values.py); what runs another way
    "placeholder_item": Words("a number (`.item()`, `float(t)`, `int(t)`): 0",
                              "一个数（`.item()`、`float(t)`、`int(t)`）：0"),
    "placeholder_bool": Words("a truth value (`bool(t)`, `if t:`, `torch.equal`): False",
                              "一个真假值（`bool(t)`、`if t:`、`torch.equal`）：False"),
    "placeholder_tolist": Words("`.tolist()`: a list of the tensor's shape, of zeros",
                                "`.tolist()`：形状与张量相同、元素全为零的列表"),
    "placeholder_numpy": Words(
        "`.numpy()`: an array of the tensor's shape and dtype, of zeros",
        "`.numpy()`：形状和数据类型与张量相同、元素全为零的数组"),
    "placeholder_print": Words(
        "printing (`print(t)`, `repr`, `str`): `<simulated>` with the shape, dtype and device; "
        "a one-element tensor formatted with a spec (`f\"{{loss:.4f}}\"`): its number's "
        "placeholder, 0",
        "打印（`print(t)`、`repr`、`str`）：`<simulated>`，附形状、数据类型和设备；按格式说明符"
        "格式化的单元素张量（`f\"{{loss:.4f}}\"`）：它那个数的占位值 0"),
    "placeholder_nan_check": Words(
        "a NaN or infinity check (`torch.isnan(t).any()`, `torch.isfinite(t).all()`): none "
        "found",
        "NaN 或无穷大检查（`torch.isnan(t).any()`、`torch.isfinite(t).all()`）：没有发现"),
    "placeholder_found_inf": Words(
        "GradScaler's check of the gradients for infinities and NaN: none found, so its "
        "optimizer step goes on",
        "GradScaler 对梯度中无穷大和 NaN 的检查：没有发现，所以它照常执行优化器步"),
    "placeholder_unique": Words(
        "`torch.unique(t)` of values the simulation does not have (a model's predictions): "
        "the unique values of their placeholders, one value, 0",
        "对模拟没有其数值的张量（模型的预测）调用 `torch.unique(t)`：按占位值求得的唯一值，"
        "只有一个，即 0"),
    "placeholder_elapsed_time": Words(
        "a CUDA event's timing (`start.elapsed_time(end)`): 0.0 ms",
        "CUDA 事件的计时（`start.elapsed_time(end)`）：0.0 毫秒"),
    "compiled_eagerly": Words(
        "torch.compile ran eagerly: a compiled step keeps a different set of tensors (its fused "
        "kernels save fewer activations for backward; CUDA graphs keep a memory pool of their "
        "own), which the simulation does not model yet, so these figures are the eager step's",
        "torch.compile 以即时（eager）模式运行：编译后的一步保留的张量不同（融合内核为反向传播"
        "保存的激活更少；CUDA Graphs 另有自己的显存池），模拟尚未对此建模，所以这些数字是即时"
        "模式那一步的"),
    "parallel_tp_plan_megatron": Words(
        "tensor parallelism: a Megatron-style plan (attention and MLP split by columns, then "
        "by rows) over {size} GPUs; each rank computes on the whole batch of its group",
        "张量并行：Megatron 式切分（注意力和 MLP 先按列切、再按行切），{size} 块 GPU；"
        "同组的每张卡都处理整批数据"),
}
#: How a list of names is joined, by language.
_LIST = {"en": ", ", "zh": "、"}
#: A list with nothing in it.
_NONE = Words("none", "无")


class _Filler(string.Formatter):
    """str.format with two more specs: `size` (bytes, binary units) and `list` (names)."""

    def __init__(self, lang: str) -> None:
        super().__init__()
        self.lang = lang

    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec == "size":
            return units.size(value)
        if format_spec == "list":
            return _LIST[self.lang].join(value) if value else _NONE[self.lang]
        return super().format_field(value, format_spec)


def fields(ident: str) -> set[str]:
    """The values a note's words use, the same in both languages (a test holds them so)."""
    return {name for _, name, _, _ in string.Formatter().parse(CATALOGUE[ident].en) if name}


def note(ident: str, **values: Any) -> dict[str, Any]:
    """A note as results keep it. An identifier the catalogue lacks, or values its words do
    not take, is a bug of the code that records it."""
    if ident not in CATALOGUE:
        raise KeyError(f"no note {ident!r} in generator/results/notes.py")
    if set(values) != fields(ident):
        raise ValueError(f"note {ident!r} takes {sorted(fields(ident))}, got {sorted(values)}")
    return {"id": ident, "values": values}


def text(found: dict[str, Any] | str, lang: str = "en") -> str:
    """A note in `lang`. A note the catalogue does not know (from a newer version) is shown
    by its identifier and values rather than dropped."""
    if isinstance(found, str):  # a result of schema 1 that migrate.py did not know
        return found
    words = CATALOGUE.get(found.get("id", ""))
    values = found.get("values") or {}
    if words is None:
        return f"{found.get('id')}: {values}"
    return _Filler(lang).format(words[lang], **values)


def ident(found: dict[str, Any] | str) -> str | None:
    """A note's identifier (None for prose a migration did not know)."""
    return found.get("id") if isinstance(found, dict) else None


@dataclass(frozen=True)
class Note:
    """A note as the API gives it: its identifier and values, and its words in either
    language (`str(note)` is the English)."""

    id: str | None
    """None for prose a migration did not know (a result of an old schema)."""
    values: Mapping[str, Any] = field(default_factory=dict)
    stored: dict[str, Any] | str = field(default="", repr=False, compare=False)

    @classmethod
    def of(cls, stored: dict[str, Any] | str) -> "Note":
        return cls(ident(stored), dict(stored.get("values") or {}) if isinstance(stored, dict)
                   else {}, stored)

    def text(self, lang: str = "en") -> str:
        return text(self.stored, lang)

    def __str__(self) -> str:
        return self.text("en")
