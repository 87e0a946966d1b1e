"""Where a result was measured: software versions, hardware, and a stable machine id."""

from __future__ import annotations

import os
import platform
import re
import subprocess
from pathlib import Path
from typing import Any

import torch


def cpu_name() -> str:
    """The CPU's model name, as the kernel reports it."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _slug(text: str) -> str:
    text = re.sub(r"\((r|tm|c)\)|\bcpu\b|@.*$", " ", text.lower())
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")


def machine_id(backend: str) -> str:
    """The folder a result goes to: the GPU's name for cuda, the CPU's for cpu, and
    `estimate` for estimates, which depend on the PyTorch version but not on the machine."""
    if backend == "cuda":
        return _slug(torch.cuda.get_device_name())
    if backend == "cpu":
        return "cpu-" + _slug(cpu_name())
    return "estimate"


def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=5, cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def describe(backend: str) -> dict[str, Any]:
    """The environment part of a result."""
    env: dict[str, Any] = {
        "machine_id": machine_id(backend),
        "torch": torch.__version__,
        "transformers": _transformers_version(),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "cpu": cpu_name(),
        "cpu_count": os.cpu_count(),
        "cuda": torch.version.cuda,
        "device_name": None,
        "driver": None,
        "git_commit": git_commit(),
    }
    if backend == "cuda":
        env["device_name"] = torch.cuda.get_device_name()
        env["driver"] = _nvidia_driver()
    elif backend == "cpu":
        env["device_name"] = env["cpu"]
    return env


def _transformers_version() -> str | None:
    """Hugging Face models' memory depends on it (4.46 copies the logits for the loss's
    shift, 5.x does not), so results record it; None when it is not installed."""
    from importlib import metadata

    try:
        return metadata.version("transformers")
    except metadata.PackageNotFoundError:
        return None


def _nvidia_driver() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = out.stdout.strip()
    return text.splitlines()[0] if out.returncode == 0 and text else None
