"""`from_pretrained` answered on this machine alone, from a config where the weights are not.

For the run (`pretrained_offline()`, entered by session.py):

- the Hugging Face Hub is never asked (HF_HUB_OFFLINE). A Hub id whose config.json is
  neither in the local Hugging Face cache nor among the configs shipped with this tool
  (measure/models/hf_configs, as `hf:` names find them) ends the run as one line, exit
  status 2 (`NotOnThisMachine`);
- where the config is found and no weights are (a folder holding only config.json, a Hub id
  whose config ships with this tool), transformers is given a checkpoint of the header alone:
  the tensors that the config's architecture saves, in the config's dtype, as
  `save_pretrained` would have written them (`header_only_checkpoint`); `dtype="auto"`,
  `device_map`, quantization and tied weights then go through transformers' own loading as
  they would for the real file, and weights.py reads it with no data;
- transformers loads a checkpoint's tensors on a pool of threads; the simulation's modes are
  the main thread's, so the run loads them in order (`ON_THE_SCRIPTS_THREAD`).

Two of transformers' functions are wrapped, each as soon as its module is imported (now, or
when the script imports transformers: that takes seconds, and most scripts never do), and
put back on exit: `utils.hub.cached_files` (where a file of a Hub id is found) and
`modeling_utils._get_resolved_checkpoint_files` (which files hold the weights).
"""

from __future__ import annotations

import contextlib
import importlib.abc
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import _disable_current_modes

from generator.errors import ModelError
from generator.measure import environment_kept
from generator.simulate.weights import write_header_only

#: What transformers names a checkpoint of one file.
WEIGHTS_FILE = "model.safetensors"
#: The environment in which transformers loads a checkpoint on the script's own thread, not
#: on a pool of threads. The simulation runs so; a real run held against it must too: the
#: profiler's memory events are those of the threads it profiles (c10 reports an allocation
#: to the profiler state of the thread that makes it), so the weights a pool's thread
#: converts are missing from a real run's peak (the bf16 weights of TRL's tiny Llama: the
#: real run read 9 % below the simulation of the CPU).
ON_THE_SCRIPTS_THREAD = {"HF_DEACTIVATE_ASYNC_LOAD": "1"}


class NotOnThisMachine(ModelError, OSError):
    """A model's config.json that is nowhere here. An OSError too, as transformers' own
    "not found" is: transformers passes an OSError on as it is and turns any other error of
    a lookup into an OSError of its own (configuration_utils.py)."""


def _is_local(source: str) -> bool:
    return os.path.exists(source) or source.startswith((".", "/", "~"))


def _shipped_config(source: str, subfolder: str) -> str | None:
    from generator.measure.models.hf_config import shipped_path

    path = None if subfolder else shipped_path(source)
    return str(path) if path is not None else None


def cached_files(original: Callable) -> Callable:
    """transformers' `cached_files` (utils/hub.py), offline, with the shipped configs: a
    Hub id's config.json found nowhere else is the shipped one, or a one-line error."""

    def find(path_or_repo_id, filenames, *args, **kwargs):
        kwargs["local_files_only"] = True
        source, subfolder = str(path_or_repo_id), kwargs.get("subfolder") or ""
        if list(filenames) != ["config.json"] or _is_local(source):
            return original(path_or_repo_id, filenames, *args, **kwargs)
        try:
            found = original(path_or_repo_id, filenames, *args, **kwargs)
        except OSError:
            found = None
        if found:
            return found
        shipped = _shipped_config(source, subfolder)
        if shipped is None:
            raise NotOnThisMachine(
                f"from_pretrained({source!r}): no config.json for it on this machine (not in "
                "the Hugging Face cache, not among the configs shipped with this tool: "
                "python -m generator models lists them); a simulated run never uses the "
                f"network: download it first (hf download {source} config.json) or give a "
                "folder that holds it")
        return [shipped]

    return find


#: What a folder's weights may be named: a folder holding any of them is not a config alone.
_WEIGHTS_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".index.json")


def _config_file(source: str, subfolder: str) -> str | None:
    """The config.json from_pretrained read for `source` (a folder, the cache, shipped);
    None for a folder that holds weights transformers would not take (its own error
    stands)."""
    if os.path.isdir(source):
        folder = os.path.join(source, subfolder)
        path = os.path.join(folder, "config.json")
        if not os.path.isfile(path) or any(
                name.endswith(_WEIGHTS_SUFFIXES) for name in os.listdir(folder)):
            return None
        return path
    from transformers.utils.hub import cached_file

    try:
        return cached_file(source, "config.json", subfolder=subfolder,
                           _raise_exceptions_for_missing_entries=False)
    except OSError:
        return None


def header_only_checkpoint(config_file: str, folder: Path) -> Path:
    """The checkpoint `save_pretrained` writes for the model that `config_file` describes,
    as a header without data: the state dict of the config's architecture (built on the
    meta device: nothing allocated; the bare model where the config names no architecture),
    tied tensors once, floating tensors in the config's dtype (fp32 where it names none), in
    `folder`."""
    import transformers

    data = json.loads(Path(config_file).read_text(encoding="utf-8"))
    config = transformers.AutoConfig.for_model(**data)
    classes = [getattr(transformers, name, None) for name in config.architectures or []]
    cls = next((c for c in classes if c is not None), None)
    if cls is None:
        cls = transformers.AutoModel._model_mapping.get(type(config), None)
    if cls is None:
        raise ModelError(f"{config_file}: transformers {transformers.__version__} has no "
                         f"model class for it (architectures {config.architectures})")
    dtype = config.dtype if isinstance(config.dtype, torch.dtype) else (
        getattr(torch, config.dtype) if isinstance(config.dtype, str) else torch.float32)
    with _disable_current_modes(), torch.device("meta"):  # shapes only, nothing simulated
        model = cls(config)
    seen: set[int] = set()
    tensors = {}
    for name, tensor in model.state_dict(keep_vars=True).items():
        if id(tensor) in seen:  # a tied weight: save_pretrained writes it once
            continue
        seen.add(id(tensor))
        tensors[name] = (tuple(tensor.shape),
                         dtype if tensor.is_floating_point() else tensor.dtype)
    path = folder / WEIGHTS_FILE
    write_header_only(path, tensors)
    return path


def resolved_checkpoint_files(original: Callable, scratch: Callable[[], Path]) -> Callable:
    """transformers' `_get_resolved_checkpoint_files` (modeling_utils.py): where no weights
    are found beside a config that is, the header-only checkpoint of that config."""
    made: dict[tuple[str, str], Path] = {}

    def resolve(pretrained_model_name_or_path, *args, **kwargs):
        try:
            return original(pretrained_model_name_or_path, *args, **kwargs)
        except OSError:
            source = pretrained_model_name_or_path
            gguf = kwargs.get("gguf_file", args[1] if len(args) > 1 else None)
            subfolder = (kwargs.get("download_kwargs") or {}).get("subfolder") or ""
            config = None if source is None or gguf else _config_file(str(source), subfolder)
            if config is None:
                raise
        key = (str(source), subfolder)
        if key not in made:
            folder = scratch() / str(len(made))
            folder.mkdir()
            made[key] = header_only_checkpoint(config, folder)
        return [str(made[key])], None

    return resolve


# -- putting it in place ---------------------------------------------------------------------

class _Patches(importlib.abc.MetaPathFinder):
    """Attributes of modules replaced for as long as it is entered, each as soon as its
    module is imported (now, or when the script imports it: transformers takes seconds to
    import, and most scripts never do), and put back on exit."""

    def __init__(self, patches: dict[tuple[str, str], Callable[[Any], Any]]) -> None:
        self._patches = patches  # (module, attribute) → replacement(original)
        self._done: list[tuple[Any, str, Any]] = []
        self._modules = {module for module, _ in patches}

    def _apply(self, module: Any) -> None:
        for (name, attribute), replace in self._patches.items():
            if name == module.__name__ and hasattr(module, attribute):
                original = getattr(module, attribute)
                setattr(module, attribute, replace(original))
                self._done.append((module, attribute, original))

    def find_spec(self, fullname, path, target=None):
        if fullname not in self._modules:
            return None
        others = [f for f in sys.meta_path if f is not self and hasattr(f, "find_spec")]
        spec = next((s for f in others if (s := f.find_spec(fullname, path, target))), None)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader, run = spec.loader, spec.loader.exec_module

        def exec_module(module):
            try:
                run(module)
            finally:
                del loader.exec_module  # the loader's own method again
            self._apply(module)

        loader.exec_module = exec_module
        return spec

    def __enter__(self) -> "_Patches":
        for name in self._modules:
            if sys.modules.get(name) is not None:
                self._apply(sys.modules[name])
        sys.meta_path.insert(0, self)
        return self

    def __exit__(self, *_exc: Any) -> None:
        sys.meta_path.remove(self)
        for module, attribute, original in reversed(self._done):
            setattr(module, attribute, original)
        self._done.clear()


@contextlib.contextmanager
def pretrained_offline() -> Iterator[None]:
    """For the run: from_pretrained offline, from configs where weights are not (see the
    module); everything put back on exit, the header-only checkpoints removed."""
    scratch_folder: list[Path] = []

    def scratch() -> Path:  # made at the first header-only checkpoint, removed on exit
        if not scratch_folder:
            scratch_folder.append(Path(tempfile.mkdtemp(prefix="generator-weights-")))
        return scratch_folder[0]

    patches = _Patches({
        ("transformers.utils.hub", "cached_files"): cached_files,
        ("transformers.modeling_utils", "_get_resolved_checkpoint_files"):
            lambda original: resolved_checkpoint_files(original, scratch),
    })
    with contextlib.ExitStack() as stack:
        stack.callback(lambda: [shutil.rmtree(f, ignore_errors=True) for f in scratch_folder])
        stack.enter_context(environment_kept())
        os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **ON_THE_SCRIPTS_THREAD)
        stack.enter_context(_hub_offline())
        stack.enter_context(patches)
        yield


@contextlib.contextmanager
def _hub_offline() -> Iterator[None]:
    """huggingface_hub offline meanwhile: it read HF_HUB_OFFLINE when it was imported."""
    try:
        from huggingface_hub import constants
    except ImportError:
        yield
        return
    before = constants.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = before
