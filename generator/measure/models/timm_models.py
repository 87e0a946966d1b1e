"""timm image models as `timm:<name>` (e.g. the published H100 runs' ViT and ConvNeXt V2).

timm needs torchvision, which has no CPU build for this project's torch on the package
registry: where either is missing, such a model is unavailable, with that reason, and a
suite's experiments on it are skipped rather than failed.
"""

from __future__ import annotations

import importlib.util

from generator.errors import ModelError
from generator.measure.training.workload import Workload

TIMM_PREFIX = "timm:"


def timm_spec(name: str, spec_class: type):
    """A timm image classifier, built from its name with no weights; cross-entropy loss.
    spec_class: ModelSpec (passed in: this module is imported by the one defining it)."""
    reason = timm_unavailable(name)
    if reason:
        raise ModelError(reason)
    import timm
    import torch

    def build() -> Workload:
        model = timm.create_model(name[len(TIMM_PREFIX):], pretrained=False)
        model.train()
        classes = model.num_classes

        def make_batch(batch_size: int, side: int, device: torch.device):
            return ((torch.randn(batch_size, 3, side, side, device=device),),
                    torch.randint(0, classes, (batch_size,), device=device))

        return Workload(model, make_batch, torch.nn.functional.cross_entropy)

    return spec_class(name=name, description=f"timm model {name[len(TIMM_PREFIX):]}",
                      max_seq_len=None, build=build, min_seq_len=32, inputs="image")


def is_timm_name(name: object) -> bool:
    return isinstance(name, str) and name.startswith(TIMM_PREFIX)


def timm_unavailable(name: str) -> str | None:
    """Why a timm model cannot be built here, or None."""
    if importlib.util.find_spec("timm") and importlib.util.find_spec("torchvision"):
        return None
    return (f"{name} needs the timm and torchvision packages; torchvision has no CPU build for "
            "this project's torch on the package registry")
