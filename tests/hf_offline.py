"""What the tests of Hugging Face models share (unit/test_hf_models.py, test_hf_families.py):
an offline Hub with an empty cache of their own, configs written to a folder, and the
estimate command's arguments. Import it after `pytest.importorskip("transformers")`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import huggingface_hub  # comes with transformers
import pytest
from huggingface_hub import constants


def _no_network(*args: Any, **kwargs: Any) -> None:
    raise AssertionError("a test reached for the Hugging Face Hub")


def go_offline(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    """Offline, with an empty cache at `home` (HF_HOME), which it returns. huggingface_hub
    reads these variables once, when first imported, so what it read is set as well. Each
    module calls it from an autouse fixture of its own, `offline`."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(home))
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(constants, "HF_HOME", str(home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(home / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", _no_network)
    return home


def write_config(path: Path, config: dict[str, Any] | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(config if isinstance(config, str) else json.dumps(config), encoding="utf-8")
    return path


def estimate_args(model: str, *extra: Any, seq_len: int = 128) -> list[Any]:
    return ["estimate", model, "--batch-size", 2, "--seq-len", seq_len, *extra]
