"""The rules of thumb people use to answer "will my fine-tune fit?", as their sources state them.

Pure arithmetic on plain numbers (no torch import), each function returning bytes, so that the
calculator page can set them beside this project's estimate and a measurement and state each
rule's error. Nothing here is tuned to agree with the estimate: a rule is reproduced as published,
with what it leaves out said in its docstring.

- `params_times_16`: the ZeRO paper's 16 bytes per parameter (model states of mixed-precision Adam).
- `accelerate_training_estimate`: the "Training using Adam" column of `accelerate estimate-memory`.
- `korthikanti_activations`: the activations of Korthikanti et al. 2022, Eq. 5 (or full recomputation).
- `states_plus_activations`: the two summed, as EleutherAI's "Transformer Math 101" sums them.
"""

from __future__ import annotations

#: Bytes per parameter of mixed-precision Adam (ZeRO, §3.1): 2 + 2 + K with K = 12.
ZERO_BYTES_PER_PARAMETER = 16
#: A frozen parameter keeps only its 16-bit copy, the 2Ψ of ZeRO's fp16 parameters.
FROZEN_BYTES_PER_PARAMETER = 2
#: The dtypes `accelerate.commands.estimate.estimate_training_usage` gives a training figure for.
ACCELERATE_TRAINING_DTYPES = ("float32", "float16", "bfloat16", "fp8")


def params_times_16(parameters: int, trainable_parameters: int | None = None) -> int:
    """Model states by the "16 bytes per parameter" rule of mixed-precision Adam training.

    Source: Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter
    Models" (SC 2020, arXiv 1910.02054), §3 "Where Did All the Memory Go?", §3.1 "Model States:
    Optimizer States, Gradients and Parameters": mixed-precision training of a model with Ψ
    parameters holds an fp16 copy of the parameters and of the gradients (2Ψ + 2Ψ bytes) and the
    optimizer states, an fp32 copy of the parameters, momentum and variance (4Ψ + 4Ψ + 4Ψ = KΨ,
    K = 12), "In total, this results in 2Ψ + 2Ψ + KΨ = 16Ψ bytes".

    Leaves out: every activation (ZeRO's §3.2 "residual memory" — activations, temporary buffers,
    fragmentation), the logits and loss, the CUDA context, the caching allocator's rounding and
    cache, and the optimizer step's temporaries. It also fixes the states' layout: PyTorch's own
    AMP (autocast) keeps fp32 weights and fp32 gradients, 4 + 4 + 8 = 16 bytes too, but with no
    16-bit copy; pure bf16 training with bf16 Adam states is 8 bytes per parameter.

    LoRA (`trainable_parameters` < `parameters`): the same accounting applied per parameter, as
    it is commonly applied to parameter-efficient fine-tuning: a trainable parameter costs 16
    bytes, a frozen one only its 16-bit copy (2 bytes, the 2Ψ term above), since it has no
    gradient and no optimizer state (Hu et al., "LoRA: Low-Rank Adaptation of Large Language
    Models", arXiv 2106.09685, §4.2, "Practical Benefits and Limitations": "we do not need to
    store the optimizer states for the frozen parameters"). No single published source states
    "16 × trainable + 2 × frozen" as one formula; it is ZeRO's terms applied to the two kinds of
    parameter. Under PyTorch autocast a frozen weight stays fp32 (4 bytes), which this rule does
    not know: that is part of its error for an "AMP bf16" LoRA run.
    """
    if trainable_parameters is None:
        trainable_parameters = parameters
    if not 0 <= trainable_parameters <= parameters:
        raise ValueError(f"trainable parameters must be between 0 and {parameters}, "
                         f"got {trainable_parameters}")
    frozen = parameters - trainable_parameters
    return ZERO_BYTES_PER_PARAMETER * trainable_parameters + FROZEN_BYTES_PER_PARAMETER * frozen


def accelerate_training_estimate(total_size_bytes: int, dtype: str) -> int:
    """The "Training using Adam" figure of `accelerate estimate-memory`, for one dtype.

    Source: accelerate 1.16.0, `accelerate/commands/estimate.py`: `estimate_training_usage(bytes,
    mixed_precision)` fills {"model", "gradients", "optimizer", "step"} and `estimate_command`
    prints `max(item.values())` of it, the peak of the four, not their sum ("for a batch size of
    1", its docstring says). With `fp16_size = bytes // 2`:
    - float32: model = bytes, gradients = bytes, optimizer = 2 × bytes, step = 4 × bytes,
      so the figure is 4 × bytes;
    - float16 / bfloat16 / fp8: model = bytes, gradients = bytes + bytes // 2, optimizer = step =
      2 × bytes, so the figure is 2 × bytes;
    - int8 / int4: every entry stays -1 and the table prints "N/A"; here a ValueError.

    `total_size_bytes` is what accelerate measures, not something the user chooses: `gather_data`
    passes `calculate_maximum_sizes(model)[0]` for every dtype row (the halving for float16 comes
    after the training figure), where `model` is `AutoModel.from_config(config,
    torch_dtype=torch.float32)` on the meta device (`create_empty_model`). So it is 4 bytes per
    parameter of the *base* model class (for a causal LM `AutoModel` has no LM head: an untied
    output projection is not counted), tied weights counted once, plus every buffer (e.g. rotary
    `inv_freq`, BERT's `position_ids`) at its own dtype. For a model of Ψ such parameters the
    float16/bfloat16 figure is therefore about 8Ψ bytes and the float32 one 16Ψ.

    Leaves out: activations and logits entirely (batch and sequence length are not inputs), the
    CUDA context and allocator; it assumes Adam with fp32 states.
    """
    if dtype not in ACCELERATE_TRAINING_DTYPES:
        raise ValueError(f"accelerate gives no training figure for dtype {dtype!r} (it prints "
                         f"N/A); use one of {', '.join(ACCELERATE_TRAINING_DTYPES)}")
    fp32_size = total_size_bytes
    fp16_size = total_size_bytes // 2
    if dtype == "float32":
        sizes = {"model": fp32_size, "gradients": fp32_size,
                 "optimizer": fp32_size * 2, "step": fp32_size * 4}
    else:
        sizes = {"model": fp32_size, "gradients": fp32_size + fp16_size,
                 "optimizer": fp32_size * 2, "step": fp32_size * 2}
    return max(sizes.values())


def korthikanti_activations(layers: int, hidden_size: int, attention_heads: int, batch: int,
                            sequence: int, *, recompute: bool = False,
                            vocabulary: int | None = None, fp32: bool = False) -> int:
    """Activation memory of a transformer by Korthikanti et al. 2022, without parallelism.

    Source: Korthikanti, Casper, Lym, McAfee, Andersch, Shoeybi, Catanzaro, "Reducing Activation
    Recomputation in Large Transformer Models" (MLSys 2023, arXiv 2205.05198):
    - §4.1, Eq. 1: activations per transformer layer = s·b·h·(34 + 5·a·s/h) bytes, the attention
      block 11sbh + 5as²b, the MLP 19sbh, the two layer norms 4sbh; Eq. 5 with t = 1 (no tensor
      parallelism; pipeline parallelism does not change it): total = L·s·b·h·(34 + 5·a·s/h).
    - §5 and Table 2 ("full activation recomputation: sbh(2)"): checkpointing each layer's input
      "reduces the total required memory for activations to 2sbhL", ignoring activations
      outside the transformer layers.
    - §4.3, with t = p = 1, only when `vocabulary` is given: the activations outside the layers,
      sbhp/t for the embedding dropout plus 4sbh/t·(1 + v/h) for the final layer norm (2sbh), the
      output projection's input (2sbh) and the fp32 logits (4sbv): 5sbh + 4sbv. The paper calls
      these negligible for its 22B-1T models; with a 128k-256k vocabulary and a 1-8B model they
      are not. They are added with `recompute` too, since layer checkpointing does not touch them.
    Integers throughout: sbh(34 + 5as/h) is computed as 34sbh + 5as²b, which is exact.

    `fp32`: the same tensors held in FP32 (a run without autocast), the dropout masks still
    1 byte: per layer sbh(66 + 9as/h) (the fp32 variant the site's explainer derives, its
    `activation_formula_bytes` with 4-byte elements), 4sbhL under full recomputation (each
    layer's input in FP32), and 9sbh + 4sbv outside the layers (the mask, the final norm's and
    the output projection's inputs in FP32, the logits already fp32). Not the paper's: it
    states only the 16-bit form.

    What it assumes (§3 "Transformer Architecture", §4): a GPT-style single-stack transformer
    whose MLP widens to 4h with GeLU (the 8sbh + 8sbh terms), multi-head attention with K and V
    as wide as Q (the 4sbh of QKᵀ), 16-bit activations with 1-byte dropout masks (dropout is on:
    sbh per mask and as²b for the attention-probability mask), and the attention scores and
    softmax output stored whole (the 5as²b term). So it misses for the models people fine-tune
    today: a SwiGLU MLP (Llama, Qwen, Mistral, Gemma, Phi-3) keeps three intermediate-size
    tensors, with an intermediate size that is not 4h; grouped-query attention (fewer K/V heads)
    keeps smaller K and V; fused attention (SDPA's flash or memory-efficient kernels, FlashAttention)
    keeps no s² scores at all, only the output and a log-sum-exp, so the 5as/h term, which
    dominates at s = 2048, is not there; dropout is usually off in fine-tuning; under autocast
    some saved tensors are fp32 (norm inputs, the upcast logits, the loss); and a framework keeps
    more than the "main contributors" it counts (e.g. RMSNorm's inputs in fp32, rotary
    embeddings' cos/sin, a second logits copy in the loss).
    """
    s, b, h, a = sequence, batch, hidden_size, attention_heads
    e = 4 if fp32 else 2  # bytes of each saved element but the 1-byte dropout masks
    if recompute:
        total = e * s * b * h * layers
    else:  # 16-bit: 34sbh + 5as²b; fp32: 66sbh + 9as²b
        total = layers * ((16 * e + 2) * s * b * h + (2 * e + 1) * a * s * s * b)
    if vocabulary is not None:  # mask sbh, two e-byte inputs, fp32 logits
        total += (2 * e + 1) * s * b * h + 4 * s * b * vocabulary
    return total


def states_plus_activations(parameters: int, layers: int, hidden_size: int, attention_heads: int,
                            batch: int, sequence: int, *, trainable_parameters: int | None = None,
                            recompute: bool = False, vocabulary: int | None = None,
                            fp32: bool = False) -> int:
    """Model states plus activations: the "total training memory" people compute by hand.

    Source of the sum: Anthony, Biderman, Schoelkopf, "Transformer Math 101" (EleutherAI blog,
    2023, https://blog.eleuther.ai/transformer-math/), section "Total Training Memory":
    Total = Model Memory + Optimizer Memory + Activation Memory + Gradient Memory, with mixed-
    precision weights and gradients at 2 bytes each and AdamW's fp32 copy, momentum and variance
    at 12 (the ZeRO 16 bytes, `params_times_16`), and activations from Korthikanti et al.: no
    recomputation sbhL(34 + 5as/h), full recomputation 2·sbhL (`korthikanti_activations`).

    Exactly: `params_times_16(parameters, trainable_parameters)` +
    `korthikanti_activations(layers, hidden_size, attention_heads, batch, sequence,
    recompute=recompute, vocabulary=vocabulary, fp32=fp32)`. For LoRA the activations are the
    same formula: the rule has no term for the adapters' own activations, and the frozen
    layers must still store what the backward pass needs to reach earlier adapters.

    Leaves out what both parts leave out (see their docstrings), and any overlap in time: it
    adds the activations' peak (end of forward) to the states' peak, whereas gradients are
    created during backward while activations are freed, and Adam's states are allocated at the
    first step after both.
    """
    states = params_times_16(parameters, trainable_parameters)
    activations = korthikanti_activations(layers, hidden_size, attention_heads, batch, sequence,
                                          recompute=recompute, vocabulary=vocabulary, fp32=fp32)
    return states + activations
