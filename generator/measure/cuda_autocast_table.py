"""CUDA autocast's op table in PyTorch 2.13, and where the CPU's differs (pure data; the
emulation that applies it is cuda_autocast.py).

Source: PyTorch 2.13.0 (git cf30153c4c131c8164ee7798e5022d810682e2cb). The CUDA policy lists are
the AT_FORALL_* macros of aten/src/ATen/autocast_mode.h (the wheel ships the header as
torch/include/ATen/autocast_mode.h); aten/src/ATen/autocast_mode.cpp registers them for the
`Autocast` (CUDA) key in `TORCH_LIBRARY_IMPL(aten, Autocast, m)`, adds cudnn_convolution and
cudnn_convolution_transpose (lower_precision_fp) and bans binary_cross_entropy; the CPU list is
its `TORCH_LIBRARY_IMPL(aten, AutocastCPU, m)`. tests/unit/test_cuda_autocast.py checks these
names against the registrations of the installed PyTorch.
"""

from __future__ import annotations

LOWER_PRECISION_FP = "lower_precision_fp"  # inputs cast to autocast's 16-bit dtype
FP32 = "fp32"                              # inputs cast to fp32
FP32_SET_OPT_DTYPE = "fp32_set_opt_dtype"  # dtype=float32 unless the caller gave one
FP32_APPEND_DTYPE = "fp32_append_dtype"    # redispatched to the overload taking a dtype
PROMOTE = "promote"                        # inputs cast to the widest of them
BANNED = "banned"                          # raises, as CUDA autocast does

#: Every op with an AutocastCUDA kernel in PyTorch 2.13, by cast policy (autocast_mode.h lists
#: AT_FORALL_LOWER_PRECISION_FP, AT_FORALL_FP32, AT_FORALL_FP32_SET_OPT_DTYPE,
#: AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE, AT_FORALL_PROMOTE; autocast_mode.cpp adds the
#: cudnn convolutions and bans binary_cross_entropy). Names are aten overloads.
CUDA_AUTOCAST_POLICY: dict[str, str] = {
    **dict.fromkeys((
        "_convolution.deprecated", "_convolution", "conv1d", "conv2d", "conv3d", "conv_tbc",
        "conv_transpose1d", "conv_transpose2d.input", "conv_transpose3d.input", "convolution",
        "prelu", "addmm", "addmv", "addr", "matmul", "einsum", "mm", "mv", "linalg_vecdot",
        "linear", "addbmm", "baddbmm", "bmm", "chain_matmul", "linalg_multi_dot",
        "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell", "lstm_cell", "gru_cell",
        "rnn_tanh_cell", "rnn_relu_cell", "_scaled_dot_product_flash_attention",
        "scaled_dot_product_attention", "cudnn_convolution", "cudnn_convolution_transpose",
    ), LOWER_PRECISION_FP),
    **dict.fromkeys((
        "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
        "reciprocal", "rsqrt", "sinh", "tan", "pow.Tensor_Scalar", "pow.Tensor_Tensor",
        "pow.Scalar", "softplus", "layer_norm", "native_layer_norm", "rms_norm", "group_norm",
        "frobenius_norm.dim", "nuclear_norm", "nuclear_norm.dim", "cosine_similarity",
        "poisson_nll_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d",
        "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss",
        "mse_loss", "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss",
        "triplet_margin_loss", "multi_margin_loss", "binary_cross_entropy_with_logits", "dist",
        "pdist", "cdist", "renorm", "logsumexp", "upsample_nearest1d",
        "_upsample_nearest_exact1d", "upsample_nearest2d", "_upsample_nearest_exact2d",
        "upsample_nearest3d", "_upsample_nearest_exact3d", "upsample_linear1d",
        "upsample_bilinear2d", "_upsample_bilinear2d_aa", "upsample_trilinear3d",
        "upsample_bicubic2d", "_upsample_bicubic2d_aa",
    ), FP32),
    **dict.fromkeys((
        "prod", "prod.dim_int", "softmax.int", "log_softmax.int", "cumprod", "cumsum",
        "linalg_vector_norm", "linalg_matrix_norm", "linalg_matrix_norm.str_ord", "sum",
        "sum.dim_IntList",
    ), FP32_SET_OPT_DTYPE),
    **dict.fromkeys(("norm.Scalar", "norm.ScalarOpt_dim"), FP32_APPEND_DTYPE),
    **dict.fromkeys((
        "addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "vdot", "grid_sampler",
        "index_put", "tensordot", "scatter_add",
    ), PROMOTE),
    "binary_cross_entropy": BANNED,
}

#: fp32_append_dtype: the overload each op is redispatched to, with dtype appended.
APPEND_DTYPE_TARGET = {"norm.Scalar": "norm.ScalarOpt_dtype",
                       "norm.ScalarOpt_dim": "norm.ScalarOpt_dim_dtype"}

#: Ops both lists hold with the same policy (autocast_mode.cpp's CPU block): their C++ CPU
#: kernel is CUDA's wrapper template instantiated for the CPU, so it stays.
CPU_KERNELS_KEPT = frozenset((
    "_convolution.deprecated", "addbmm", "addmm", "baddbmm", "bmm", "conv1d", "conv2d",
    "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d.input",
    "conv_transpose3d.input", "linalg_vecdot", "linear", "matmul", "mm", "prelu",
    "scaled_dot_product_attention",  # lower_precision_fp on both
    "binary_cross_entropy_with_logits", "cdist", "cosine_embedding_loss",
    "hinge_embedding_loss", "huber_loss", "kl_div", "l1_loss", "margin_ranking_loss",
    "mse_loss", "multi_margin_loss", "multilabel_margin_loss", "nll_loss", "nll_loss2d",
    "poisson_nll_loss", "smooth_l1_loss", "soft_margin_loss", "triplet_margin_loss",  # fp32
))
#: Ops only the CPU lists that keep their CPU kernel anyway, the fft ops: its fp32 cast changes
#: 16-bit inputs only, which CUDA transforms in half precision but the CPU cannot ("Unsupported
#: dtype Half", SpectralOps.cpp `promote_type_fft`). Without the cast the estimate would fail;
#: with it, it runs them in fp32 (complex64 out, twice the bytes of CUDA's complex32).
CPU_KERNELS_KEPT_FOR_FFT = frozenset((
    "fft_fft", "fft_ifft", "fft_fft2", "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft",
    "fft_irfft", "fft_rfft2", "fft_irfft2", "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft",
))
#: Ops both lists hold with different policies: the CPU's policy, replaced by CUDA's.
CPU_KERNELS_REPLACED = {"binary_cross_entropy": FP32, "grid_sampler": FP32, "prod": FP32,
                        "prod.dim_int": FP32}

#: The text of autocast_mode.cpp's binary_cross_entropy_banned.
BANNED_MESSAGE = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using "
    "torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast.")
