"""Finding a Hugging Face model's configuration, offline first.

`hf:<source>` names a model by its `config.json`; no weights are ever read. The source is
looked for, in this order:

1. a local path: a `config.json` (or any JSON file), or a folder holding one;
2. the local Hugging Face cache, as `transformers` itself finds files there (HF_HOME,
   HF_HUB_CACHE);
3. the configs shipped with this package (`hf_configs/`, their sources in SOURCES.md), for
   the models the site uses and the validation set needs;
4. the Hub, through `huggingface_hub`, unless offline mode is on (HF_HUB_OFFLINE=1).

Every failure is a one-line ModelError that says what was looked for and how to provide it.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from generator.errors import ModelError
from generator.measure import imports_frozen, quiet

SHIPPED = Path(__file__).with_name("hf_configs")
#: Hub ids that moved under an organisation or were renamed; both names find the shipped file.
ALIASES = {"bert-base-uncased": "google-bert/bert-base-uncased",
           "bert-large-uncased": "google-bert/bert-large-uncased",
           "gpt2": "openai-community/gpt2", "gpt2-medium": "openai-community/gpt2-medium",
           "gpt2-large": "openai-community/gpt2-large", "t5-base": "google-t5/t5-base",
           "t5-large": "google-t5/t5-large", "roberta-base": "FacebookAI/roberta-base",
           "distilbert-base-uncased": "distilbert/distilbert-base-uncased",
           "meta-llama/Meta-Llama-3.1-8B": "meta-llama/Llama-3.1-8B"}
INSTALL = "pip install -e '.[hf]', or pip install transformers"


def transformers_installed() -> bool:
    return importlib.util.find_spec("transformers") is not None


def transformers_module():
    """`transformers`, or a one-line ModelError saying how to install it."""
    if sys.modules.get("transformers") is not None:  # imported already (None: blocked)
        return sys.modules["transformers"]
    # Its modules live as long as the process, as torch's do; modeling_utils is the bulk of
    # what any model class imports (about 2 s here with the garbage collector running).
    with imports_frozen():
        try:
            import transformers
        except ImportError:
            raise ModelError(f"hf: models need the transformers package, which is not "
                             f"installed: {INSTALL}") from None
        import transformers.modeling_utils
    return transformers


def shipped_ids() -> list[str]:
    """The Hub ids whose configs ship with this package."""
    return sorted(p.stem.replace("--", "/") for p in SHIPPED.glob("*.json"))


def shipped_path(hub_id: str) -> Path | None:
    for name in (hub_id, ALIASES.get(hub_id, hub_id)):
        path = SHIPPED / f"{name.replace('/', '--')}.json"
        if path.is_file():
            return path
    short = {v: k for k, v in ALIASES.items()}.get(hub_id)  # org/name → its short name
    path = SHIPPED / f"{short}.json" if short else None
    return path if path is not None and path.is_file() else None


def find_config(source: str) -> tuple[dict[str, Any], str]:
    """The configuration as a dict, and where it came from (for the model's description)."""
    if not source:
        raise ModelError("hf: needs a source: a Hub id (hf:gpt2), a config.json or a folder")
    local = Path(source).expanduser()
    if local.exists() or source.startswith((".", "/", "~")) or source.endswith(".json"):
        return _read(_local_file(local, source)), str(local)
    looked = ["not a local path"]
    cached = _from_cache(source)
    if cached is not None:
        return _read(cached), f"the Hugging Face cache ({source})"
    looked.append(f"not in the Hugging Face cache ({_cache_dir()})")
    shipped = shipped_path(source)
    if shipped is not None:
        return _read(shipped), f"the configs shipped with this tool ({source})"
    looked.append("not among the shipped configs (python -m generator models lists them)")
    downloaded, why = _from_hub(source)
    if downloaded is not None:
        return _read(downloaded), f"the Hugging Face Hub ({source})"
    looked.append(why)
    raise ModelError(f"hf:{source}: no config.json found: {'; '.join(looked)}; download it "
                     f"(hf download {source} config.json) or give a path to a config.json")


def _local_file(path: Path, source: str) -> Path:
    if path.is_dir():
        config = path / "config.json"
        if not config.is_file():
            raise ModelError(f"hf:{source}: the folder has no config.json")
        return config
    if not path.is_file():
        raise ModelError(f"hf:{source}: no such file or folder")
    return path


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ModelError(f"hf: cannot read {path} ({error.strerror})") from None
    except UnicodeDecodeError:
        raise ModelError(f"hf: {path} is not a JSON text file") from None
    except json.JSONDecodeError as error:
        raise ModelError(f"hf: {path} is not valid JSON ({error.msg} at line {error.lineno}, "
                         f"column {error.colno})") from None
    if not isinstance(data, dict):
        raise ModelError(f"hf: {path} must hold a JSON object")
    if not isinstance(data.get("model_type"), str):
        raise ModelError(f"hf: {path} has no model_type: not a transformers config.json")
    return data


def _cache_dir() -> str:
    from huggingface_hub import constants

    return str(constants.HF_HUB_CACHE)


def _from_cache(hub_id: str) -> Path | None:
    transformers_module()
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(hub_id, "config.json")
    except Exception:  # an id that is no valid repo name cannot be in the cache
        return None
    return Path(found) if isinstance(found, str) else None


def _from_hub(hub_id: str) -> tuple[Path | None, str]:
    """The config downloaded from the Hub, or why not."""
    from huggingface_hub import constants, hf_hub_download

    if constants.HF_HUB_OFFLINE or os.environ.get("TRANSFORMERS_OFFLINE") == "1":
        return None, "offline mode is on, so the Hub was not asked"
    try:  # without a network huggingface_hub retries five times, logging each try
        with quiet(logging.getLogger("huggingface_hub")):
            return Path(hf_hub_download(hub_id, "config.json", etag_timeout=10)), ""
    except Exception as error:  # no network, no such repo, a gated repo without a token
        detail = str(error).strip().splitlines()[0][:120] if str(error).strip() else ""
        return None, f"the Hub could not give it ({type(error).__name__}: {detail})"
