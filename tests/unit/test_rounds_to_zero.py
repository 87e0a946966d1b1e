"""Where fp16 turns a small value into zero, as the explainer says it
(article/context.rounds_to_zero): below half the smallest subnormal under round-to-nearest,
not below the smallest subnormal itself."""

from __future__ import annotations

import torch

from generator.site.pages.article.context import rounds_to_zero


def test_half_the_smallest_subnormal_is_where_fp16_rounds_to_zero() -> None:
    info = torch.finfo(torch.float16)
    subnormal = float(info.smallest_normal) * float(info.eps)
    below = rounds_to_zero({"smallest_subnormal": subnormal})
    assert f"{subnormal:.3g}" == "5.96e-08" and f"{below:.3g}" == "2.98e-08"
    # just below it a value becomes zero; just above it, and below the smallest subnormal,
    # it rounds up to that subnormal instead of vanishing
    assert torch.tensor(below * 0.99, dtype=torch.float32).half().item() == 0
    assert torch.tensor(below * 1.01, dtype=torch.float32).half().item() == subnormal
