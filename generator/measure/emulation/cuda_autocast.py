"""CUDA autocast's op policy, applied to CPU tensors at the autocast dispatch key.

On CUDA, autocast casts in kernels registered for the `AutocastCUDA` dispatch key, which comes
before `Autograd`: each cast is an op of its own that autograd records, and what an op saves for
backward has the dtype the cast gave it. The estimate runs CPU tensors under CPU autocast, whose
op list differs: it runs pow, exp, sum, softmax and the norms in 16 bits, where CUDA runs them
in fp32, and it casts ops CUDA leaves alone (cat, stack, conv2d.padding). The kernels of
`register_cuda_autocast` make the `AutocastCPU` key follow CUDA's table
(the table below) instead:

- an op whose CUDA policy differs from the CPU's, or that only CUDA lists, gets a Python kernel
  that casts as the C++ wrappers of autocast_mode.h do (`cached_cast`, `set_opt_dtype`,
  `promote_type`) and calls the op again with `AutocastCPU` excluded, as their
  `ExcludeDispatchKeyGuard` does;
- an op only the CPU lists falls through, as every op without a kernel does on CUDA (but the
  fft ops, which the CPU cannot run in half precision);
- an op with the same policy on both keeps the CPU's C++ kernel (the same wrapper template, for
  the CPU), and with it the C++ cache of weight casts; `_WeightCastCache` keeps ours alike.
"""

from __future__ import annotations

import contextlib
import warnings
import weakref
from collections.abc import Callable, Iterator

import torch

# -- the table -------------------------------------------------------------------------------
# CUDA autocast's op table in PyTorch 2.13, and where the CPU's differs. Source: PyTorch 2.13.0
# (git cf30153c4c131c8164ee7798e5022d810682e2cb). The CUDA policy lists are the AT_FORALL_*
# macros of aten/src/ATen/autocast_mode.h (the wheel ships the header as
# torch/include/ATen/autocast_mode.h); aten/src/ATen/autocast_mode.cpp registers them for the
# `Autocast` (CUDA) key in `TORCH_LIBRARY_IMPL(aten, Autocast, m)`, adds cudnn_convolution and
# cudnn_convolution_transpose (lower_precision_fp) and bans binary_cross_entropy; the CPU list
# is its `TORCH_LIBRARY_IMPL(aten, AutocastCPU, m)`. tests/unit/test_cuda_autocast.py checks
# these names against the registrations of the installed PyTorch.

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


# -- the kernels ------------------------------------------------------------------------------
_AUTOCAST_CPU = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)


def registered_ops(dispatch_key: str) -> set[str]:
    """The aten ops with a kernel for `dispatch_key`, named as in our tables."""
    names = torch._C._dispatch_get_registrations_for_dispatch_key(dispatch_key)
    return {name.removeprefix("aten::") for name in names if name.startswith("aten::")}


def aten_overload(name: str) -> torch._ops.OpOverload:
    packet, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.aten, packet), overload or "default")


@contextlib.contextmanager
def autocast_excluded() -> Iterator[None]:
    """Below autocast, as a C++ wrapper is once it has cast (ExcludeDispatchKeyGuard)."""
    with torch._C._ExcludeDispatchKeyGuard(_AUTOCAST_CPU):
        yield


def lower_precision() -> torch.dtype:
    return torch.get_autocast_dtype("cpu")  # the CPU's autocast dtype stands in for CUDA's


def is_eligible(value: object) -> bool:
    """autocast_mode.h `is_eligible`: a floating-point tensor of the device, not a double."""
    return (isinstance(value, torch.Tensor) and value.is_floating_point()
            and value.dtype != torch.float64 and (value.is_cpu or value.is_mkldnn))


def cached_cast(to_type: torch.dtype, value: object) -> object:
    """autocast_mode.cpp `cached_cast`: eligible tensors (also inside a list) cast to
    `to_type`, fp32 leaves that require grad through the weight-cast cache."""
    if isinstance(value, (list, tuple)):
        return [cached_cast(to_type, item) for item in value]
    if not is_eligible(value) or value.dtype == to_type:
        return value
    if (to_type == lower_precision() and value.dtype == torch.float32 and value.requires_grad
            and value.is_leaf and not value._is_view() and torch.is_autocast_cache_enabled()
            and not torch._C._is_cached_tensor(value) and not torch.is_inference_mode_enabled()):
        return _WEIGHT_CASTS.cast(value, to_type)
    return value.to(to_type)


def promote_type(lower: torch.dtype, tensors: list[torch.Tensor]) -> torch.dtype:
    """autocast_mode.h `promote_type`/`prioritize`: fp32 if any eligible input is fp32."""
    current = lower
    for tensor in tensors:
        if not (tensor.is_floating_point() and (tensor.is_cpu or tensor.is_mkldnn)):
            continue
        if tensor.dtype == torch.float64:
            continue  # ignores double tensors
        if torch.float32 in (current, tensor.dtype):
            current = torch.float32
        elif not current == tensor.dtype == lower:
            raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return current


class _WeightCastCache:
    """The casts our Python kernels make of fp32 leaves (weights), kept as autocast_mode.cpp
    keeps its own: one cast per leaf (keyed by its TensorImpl, checked by a weak reference),
    held until the C++ cache is cleared, which `torch.autocast` does when it exits its
    outermost region. Python cannot reach that cache, so the first entry puts a probe leaf
    through a C++ kernel (mm) and our entries are dropped when the C++ cache drops the
    probe's cast. A weight cast both by a kept C++ kernel and by one of ours is cast twice,
    where CUDA would cast it once."""

    def __init__(self) -> None:
        self._casts: dict[int, tuple[weakref.ref, torch.Tensor]] = {}

    def cast(self, leaf: torch.Tensor, to_type: torch.dtype) -> torch.Tensor:
        entry = self._casts.get(leaf._cdata)
        if entry is not None and entry[0]() is leaf:
            return entry[1]
        if not self._casts:
            self._follow_cpp_cache()
        with torch.enable_grad():  # cached casts keep their grad_fn, as in C++ (#158232)
            casted = leaf.to(to_type)
        self._casts[leaf._cdata] = (weakref.ref(leaf), casted)
        return casted

    def clear(self) -> None:
        self._casts.clear()

    def _follow_cpp_cache(self) -> None:
        probe = torch.zeros(1, 1, requires_grad=True)
        with torch.enable_grad():
            product = torch.mm(probe, probe)  # the C++ kernel caches probe's cast
        weakref.finalize(product.grad_fn._saved_self, self.clear)


_WEIGHT_CASTS = _WeightCastCache()


class _Arguments:
    """The arguments of an op that a policy touches, by the types the C++ overloads of
    cached_cast, prioritize and set_opt_dtype catch (a Tensor?[] list is left alone)."""

    def __init__(self, op: torch._ops.OpOverload) -> None:
        self.names = [arg.name for arg in op._schema.arguments]
        self.kinds = {arg.name: str(arg.real_type) for arg in op._schema.arguments}
        self.defaults = {arg.name: arg.default_value for arg in op._schema.arguments
                         if arg.has_default_value()}

    def cast(self, to_type: torch.dtype, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        def one(name: str, value: object) -> object:
            castable = self.kinds[name] in ("Tensor", "Optional[Tensor]", "List[Tensor]")
            return cached_cast(to_type, value) if castable else value
        return (tuple(one(self.names[i], value) for i, value in enumerate(args)),
                {name: one(name, value) for name, value in kwargs.items()})

    def promotable(self, args: tuple, kwargs: dict) -> list[torch.Tensor]:
        """Tensor and Tensor[] arguments (prioritize has no overload for a Tensor?)."""
        found: list[torch.Tensor] = []
        for name, value in [*zip(self.names, args), *kwargs.items()]:
            if self.kinds[name] == "Tensor":
                found.append(value)
            elif self.kinds[name] == "List[Tensor]":
                found.extend(value)
        return found

    def with_fp32_dtype(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """set_opt_dtype: every ScalarType? argument not given becomes float32."""
        args, kwargs = list(args), dict(kwargs)
        for index, name in enumerate(self.names):
            if self.kinds[name] != "Optional[ScalarType]":
                continue
            if index < len(args):
                args[index] = torch.float32 if args[index] is None else args[index]
            elif kwargs.get(name) is None:
                kwargs[name] = torch.float32
        return tuple(args), kwargs

    def complete(self, args: tuple, kwargs: dict) -> list[object]:
        """All arguments in order, defaults filled in."""
        given = {**dict(zip(self.names, args)), **kwargs}
        return [given[name] if name in given else self.defaults[name] for name in self.names]


def cuda_kernel(name: str, policy: str) -> Callable:
    """The AutocastCPU kernel that does what CUDA's C++ wrapper for `name` does."""
    op = aten_overload(name)
    arguments = _Arguments(op)

    def lower_precision_fp(*args, **kwargs):
        args, kwargs = arguments.cast(lower_precision(), args, kwargs)
        with autocast_excluded():
            return op(*args, **kwargs)

    def fp32(*args, **kwargs):
        args, kwargs = arguments.cast(torch.float32, args, kwargs)
        with autocast_excluded():
            return op(*args, **kwargs)

    def fp32_set_opt_dtype(*args, **kwargs):
        if is_eligible(args[0]):  # an ineligible input keeps its implicit promotion
            args, kwargs = arguments.with_fp32_dtype(args, kwargs)
        with autocast_excluded():
            return op(*args, **kwargs)

    def fp32_append_dtype(*args, **kwargs):
        out_type = torch.float32 if is_eligible(args[0]) else args[0].dtype
        with autocast_excluded():
            return aten_overload(APPEND_DTYPE_TARGET[name])(
                *arguments.complete(args, kwargs), dtype=out_type)

    def promote(*args, **kwargs):
        to_type = promote_type(lower_precision(), arguments.promotable(args, kwargs))
        args, kwargs = arguments.cast(to_type, args, kwargs)
        with autocast_excluded():
            return op(*args, **kwargs)

    def banned(*args, **kwargs):
        raise RuntimeError(BANNED_MESSAGE)

    return {LOWER_PRECISION_FP: lower_precision_fp, FP32: fp32,
            FP32_SET_OPT_DTYPE: fp32_set_opt_dtype, FP32_APPEND_DTYPE: fp32_append_dtype,
            PROMOTE: promote, BANNED: banned}[policy]


def register_cuda_autocast(library: torch.library.Library) -> None:
    """Register, in `library`, the AutocastCPU kernels that give CPU autocast CUDA's policy;
    destroying the library gives the CPU's back."""
    cpu_only = registered_ops("AutocastCPU") - CUDA_AUTOCAST_POLICY.keys()
    with warnings.catch_warnings():  # "Overriding a previously registered kernel"
        warnings.simplefilter("ignore")
        for name, policy in CUDA_AUTOCAST_POLICY.items():
            if name not in CPU_KERNELS_KEPT and _exists(name):
                library.impl(aten_overload(name), cuda_kernel(name, policy), "AutocastCPU")
        for name in cpu_only - CPU_KERNELS_KEPT_FOR_FFT:
            library.impl(aten_overload(name), torch.library.fallthrough_kernel, "AutocastCPU")


def forget_weight_casts() -> None:
    """Drop the casts our kernels cached (when the kernels are unregistered)."""
    _WEIGHT_CASTS.clear()


def _exists(name: str) -> bool:
    """Another PyTorch may lack an op of 2.13's table (tests/unit/test_cuda_autocast.py
    flags the difference)."""
    try:
        aten_overload(name)
    except AttributeError:
        return False
    return True

