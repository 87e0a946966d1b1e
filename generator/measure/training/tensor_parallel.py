"""Tensor parallelism (Megatron-style): each rank holds a slice of every attention and MLP
matrix and the ranks exchange activations inside each block.

The split is PyTorch's own (`torch.distributed.tensor.parallel`): Column- and RowwiseParallel
turn the weights into DTensors sharded on a 1-D mesh (or on one dimension of a 2-D mesh, which
FSDP2's `fully_shard` can then shard again on the other), and hook the modules' forward passes
to exchange activations. The plans:

* Hugging Face models: the model's own plan (`base_model_tp_plan` of its config, the head's
  `_tp_plan`), transformers' style names translated to torch's styles with the layouts
  transformers means by them (transformers/distributed/tensor_parallel.py, ALL_PARALLEL_STYLES).
* the built-in LLaMA and GPT-2: the plan each model class declares (`tp_plan`, Megatron's:
  q/k/v column-parallel, the attention output row-parallel, MLP up (and gate) column, down
  row; norms and embeddings replicated, LLaMA's untied head vocabulary-parallel with its
  logits gathered), and each attention module's own `split_heads` for its local heads. This
  module imports no model: a model that declares no plan cannot be split.

The inputs (token ids) are the same on every rank of a TP group, and so are the logits and the
loss: data parallelism, where there is any, is on the other mesh dimension.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator

import torch
from torch import nn

#: transformers' style names → a torch ParallelStyle with the same layouts. "colwise" leaves
#: the output sharded on its last dimension (the heads, the MLP's intermediate features),
#: "rowwise" takes such an input and all-reduces its partial sums; the "_rep" / "gather" /
#: "split_input" variants gather the output or take a replicated input, as transformers'
#: registry builds them. "replicate" leaves the module whole (None). Embeddings: rowwise is
#: vocabulary-parallel (masked lookups summed), colwise splits the hidden dimension (gathered).
def _styles() -> dict[str, Callable[[], object] | None]:
    from torch.distributed.tensor import Replicate
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel

    def gathered_colwise():
        return ColwiseParallel(output_layouts=Replicate())

    def replicated_rowwise():
        return RowwiseParallel(input_layouts=Replicate())

    return {"colwise": ColwiseParallel, "colwise_rep": gathered_colwise,
            "colwise_gather_output": gathered_colwise, "rowwise": RowwiseParallel,
            "rowwise_rep": replicated_rowwise, "rowwise_split_input": replicated_rowwise,
            "embedding_rowwise": replicated_rowwise, "embedding_colwise": gathered_colwise,
            "replicate": None}


#: Styles that split a module's output features (dim 0 of a Linear's weight), and those that
#: split its input features (dim 1); an embedding's rows are its vocabulary.
COLUMN_STYLES = ("colwise", "colwise_rep", "colwise_gather_output", "embedding_colwise")
ROW_STYLES = ("rowwise", "rowwise_rep", "rowwise_split_input", "embedding_rowwise")


def _is_hf(model: nn.Module) -> bool:
    # The MRO, not the class: fully_shard swaps in a class of its own (FSDPLlamaForCausalLM).
    return any(cls.__module__.startswith("transformers.") for cls in type(model).__mro__)


def _builtin_plan(model: nn.Module) -> dict[str, str] | None:
    """The plan a built-in model declares (its class's `tp_plan`, in transformers' style
    names), or None where it declares none."""
    return getattr(type(model), "tp_plan", None)


def _hf_plan(model: nn.Module) -> dict[str, str]:
    """The model's plan, keys relative to `model`. transformers merges the base model's plan
    (prefixed) and the head's into the instance's `_tp_plan` in post_init, and adds
    "embed_tokens": "embedding_rowwise" when the base model has a plan; older models may only
    carry the config's `base_model_tp_plan`."""
    plan = dict(getattr(model, "_tp_plan", None) or {})
    if not plan:
        base = dict(getattr(model.config, "base_model_tp_plan", None) or {})
        prefix = getattr(model, "base_model_prefix", "")
        if prefix and hasattr(model, prefix) and getattr(model, prefix) is not model:
            base = {f"{prefix}.{key}": style for key, style in base.items()}
        plan = {**base, **dict(getattr(type(model), "_tp_plan", None) or {})} if base else {}
    return plan


def plan_source(model: nn.Module) -> str:
    """Whose plan splits `model`: "transformers" (the model's own) or "megatron" (this
    module's, for the built-in transformers); a result's notes name it."""
    return "transformers" if _is_hf(model) else "megatron"


def _plan(model: nn.Module) -> dict[str, str] | None:
    return (_hf_plan(model) or None) if _is_hf(model) else _builtin_plan(model)


def _expand(model: nn.Module, plan: dict[str, str]) -> dict[str, str]:
    """The plan per module: "layers.*.x" names every layer's x (a '*' is a layer number, as in
    transformers). Keys that name no module (a plan for layers the config leaves out) drop."""
    patterns = [(re.compile(re.escape(key).replace(r"\*", r"\d+")), style)
                for key, style in plan.items()]
    found: dict[str, str] = {}
    for name, _module in model.named_modules():
        for pattern, style in patterns:
            if name and pattern.fullmatch(name):
                found[name] = style
    return found


def _heads(model: nn.Module) -> tuple[int, int]:
    """(attention heads, key/value heads) of the model."""
    config = model.config
    if _is_hf(model):
        text = config.get_text_config() if hasattr(config, "get_text_config") else config
        heads = getattr(text, "num_attention_heads", None) or getattr(text, "n_head", 0)
        return heads, getattr(text, "num_key_value_heads", None) or heads
    return config.num_heads, config.num_heads


def _what(name: str, module: nn.Module) -> str:
    """What a split of this module divides, in words, for a problem line."""
    leaf = name.rsplit(".", 1)[-1]
    if isinstance(module, nn.Embedding) or leaf in ("lm_head", "embed_tokens", "wte"):
        return "vocabulary"
    if ".mlp." in f".{name}." or leaf in ("up", "down", "gate_proj", "up_proj", "down_proj"):
        return "MLP intermediate size"
    generic = re.sub(r"[.]\d+[.]", ".*.", name)  # every layer's, said once
    return f"width of {generic}"


def _in_attention(name: str) -> bool:
    return re.search(r"(^|\.)(self_)?(attn|attention)(\.|$)", name) is not None


def _count(number: int, noun: str) -> str:
    return f"{number} {noun} does not split evenly" if number == 1 else \
        f"{number} {noun}s do not split evenly"


def tp_problems(model: nn.Module, tp_size: int) -> list[str]:
    """Why this model cannot be split over tp_size ranks by its plan: [] when it can. One
    plain English line each: no plan for this model (name the class), attention heads (and
    key/value heads for GQA) not divisible by tp_size, MLP intermediate size not divisible,
    vocabulary not divisible where the plan shards the embedding or the head, etc."""
    if tp_size < 1:
        return [f"tensor parallelism needs at least 1 rank; got {tp_size}"]
    plan = _plan(model)
    kind = type(model).__name__
    if not plan:
        where = "transformers gives it no tensor-parallel plan (no base_model_tp_plan)" \
            if _is_hf(model) else "no tensor-parallel plan is written for it here"
        return [f"{kind} cannot be split by tensor parallelism: {where}"]
    styles = _styles()
    problems: list[str] = []
    for key, style in plan.items():
        if style not in styles:
            problems.append(f"{kind}'s plan splits {key} as {style!r}, a style not translated "
                            "to PyTorch's tensor parallelism here")
    if tp_size == 1 or problems:
        return problems
    expanded = {name: style for name, style in _expand(model, plan).items()
                if style != "replicate"}
    # A split attention module splits by heads (each rank computes whole heads): its
    # projections' widths divide when the heads do, so the heads are checked instead.
    if any(_in_attention(name) for name in expanded):
        heads, kv_heads = _heads(model)
        if heads % tp_size:
            problems.append(f"{_count(heads, 'attention head')} over {tp_size} ranks")
        if kv_heads != heads and kv_heads % tp_size:  # grouped-query attention
            problems.append(f"{_count(kv_heads, 'key/value head')} over {tp_size} ranks")
    for name, style in expanded.items():
        module = model.get_submodule(name)
        if not isinstance(module, (nn.Linear, nn.Embedding)):
            problems.append(f"{kind}'s plan splits {name}, a {type(module).__name__}; only "
                            "Linear and Embedding layers are split here")
            continue
        if isinstance(module, nn.Embedding):  # weight (vocabulary, hidden)
            size = module.num_embeddings if style in ROW_STYLES else module.embedding_dim
        else:  # weight (out, in): colwise splits the rows, rowwise the columns
            size = module.out_features if style in COLUMN_STYLES else module.in_features
        if size % tp_size and not _in_attention(name):
            what = _what(name, module) if isinstance(module, nn.Linear) or style in ROW_STYLES \
                else "hidden size"
            problems.append(f"the {what} ({size}) does not split evenly over {tp_size} ranks")
    return list(dict.fromkeys(problems))  # every layer repeats the same line


def _split_heads(model: nn.Module, tp_size: int) -> None:
    """The built-in attention modules reshape with the head count (and GPT-2's with the hidden
    size) they store: each computes its own heads from now on (its `split_heads`)."""
    for module in model.modules():
        split = getattr(module, "split_heads", None)
        if callable(split):
            split(tp_size)


def _tied_pairs(model: nn.Module) -> list[tuple[str, str]]:
    """(owner, user) module names of weights shared between two modules (a head tied to the
    token embeddings): splitting both modules makes two parameters of one."""
    first: dict[int, str] = {}
    pairs = []
    for name, module in model.named_modules():
        weight = module._parameters.get("weight") if hasattr(module, "_parameters") else None
        if weight is None:
            continue
        if id(weight) in first:
            pairs.append((first[id(weight)], name))
        else:
            first[id(weight)] = name
    return pairs


def apply_tensor_parallel(model: nn.Module, mesh) -> None:
    """Split `model` over the 1-D mesh `mesh` (a DeviceMesh, or one dimension of a 2-D
    mesh, e.g. mesh["tp"]) by its plan, in place; afterwards the model's forward and
    backward run with DTensor/ local-shard parameters. Call tp_problems first."""
    from torch.distributed.tensor.parallel import parallelize_module

    tp_size = mesh.size()
    problems = tp_problems(model, tp_size)
    if problems:
        raise ValueError("; ".join(problems))
    plan = _plan(model)
    expanded = _expand(model, plan)
    if not _is_hf(model):
        _split_heads(model, tp_size)
    tied = _tied_pairs(model)
    styles = _styles()
    for name, style in expanded.items():
        make = styles[style]
        if make is not None:
            # One module at a time: torch's own plan keys would read '*' as any name.
            parallelize_module(model.get_submodule(name), mesh, make())
    # A head tied to the embeddings: when both were split on their vocabulary (Shard(0) of
    # the same shape), the two new DTensor parameters are made one again, as transformers
    # ties them after loading; when only one was split, the tie cannot hold.
    for owner, user in tied:
        first, second = model.get_submodule(owner), model.get_submodule(user)
        if first.weight is second.weight:
            continue
        if getattr(first.weight, "placements", None) != getattr(second.weight, "placements",
                                                                None):
            raise ValueError(f"{owner} and {user} share a weight, but the plan splits them "
                             "differently")
        second.weight = first.weight
    _replicate_the_rest(model, mesh)


def _replicate_the_rest(model: nn.Module, mesh) -> None:
    """The parameters the plan leaves whole (norms; the built-in models' embeddings, GPT-2's
    tied head) become replicated DTensors, as transformers' own `replicate` style makes
    them: a module holding one reads its tensor inputs as replicated DTensors and gives its
    outputs back as plain tensors. Without this an optimizer's foreach kernels refuse the
    mix of DTensor and plain parameters. No copy is made (DTensor.from_local)."""
    from torch.distributed.tensor import DTensor, Replicate, distribute_module
    from torch.utils._pytree import tree_map

    replicated: dict[int, nn.Parameter] = {}  # a weight two modules share stays one

    def as_replicated(value):
        return DTensor.from_local(value, mesh, [Replicate()], run_check=False) \
            if isinstance(value, torch.Tensor) and not isinstance(value, DTensor) else value

    def partition(_name: str, module: nn.Module, _mesh) -> None:
        for name, param in list(module.named_parameters(recurse=False)):
            if isinstance(param, DTensor):
                continue
            if id(param) not in replicated:
                replicated[id(param)] = nn.Parameter(as_replicated(param.data),
                                                     requires_grad=param.requires_grad)
            module.register_parameter(name, replicated[id(param)])

    def inputs(_module, args, _mesh):
        return tree_map(as_replicated, args)

    def outputs(_module, result, _mesh):
        return tree_map(lambda v: v.to_local() if isinstance(v, DTensor) else v, result)

    for module in list(model.modules()):
        if any(not isinstance(p, DTensor) for p in module.parameters(recurse=False)):
            distribute_module(module, mesh, partition, inputs, outputs)


@contextlib.contextmanager
def meshes_outside_fake_mode() -> Iterator[None]:
    """For FSDP2 over TP (2-D) under FakeTensorMode: `fully_shard` joins the dp and tp meshes
    (DeviceMesh._concatenate), which indexes the mesh's real rank tensor and so fails inside
    a FakeTensorMode ("Please convert all Tensors to FakeTensors"). A mesh holds ranks, never
    parameter data, so it is built with the fake mode set aside; the parameters stay fake."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily
    from torch.distributed.device_mesh import DeviceMesh

    original = DeviceMesh._concatenate

    def concatenate(meshes):
        with unset_fake_temporarily():
            return original(meshes)

    DeviceMesh._concatenate = staticmethod(concatenate)
    try:
        yield
    finally:
        DeviceMesh._concatenate = staticmethod(original)
