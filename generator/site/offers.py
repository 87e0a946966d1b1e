"""What the home page says other pages offer, counted from those pages' own contexts, so that
it cannot go stale: how many models the calculator holds, and which ways of spreading a step
over GPUs the scale page estimates. Templates reach them as globals (templating.py)."""

from __future__ import annotations

from typing import Any

from generator.site.wording import listed
from generator.words import Words, same

#: What the scale page's lines do beyond sharing the step out, as the home page names it.
OFFLOAD = Words("CPU offload", "CPU 卸载")


def calculator_models(calc: dict[str, Any]) -> Words:
    """'16 models: 14 that people fine-tune (Llama, …) and this site's own 2 (bert-base,
    gpt2-small)', or only the first part where the calculator holds none of the site's own."""
    models = calc["models"]
    tuned = [m for m in models if m["id"].startswith("hf:")]
    own = [m for m in models if not m["id"].startswith("hf:")]
    families = listed([same(f) for f in dict.fromkeys(m["family"] for m in tuned)])
    if not own:
        return Words(f"{len(tuned)} models that people fine-tune ({families.en})",
                     f"{len(tuned)} 个常被微调的模型（{families.zh}）")
    names = listed([same(m["label"]) for m in own])
    return Words(f"{len(models)} models: {len(tuned)} that people fine-tune ({families.en}) "
                 f"and this site's own {len(own)} ({names.en})",
                 f"{len(models)} 个模型：{len(tuned)} 个常被微调的模型（{families.zh}），"
                 f"以及本站自己的 {len(own)} 个（{names.zh}）")


def scale_strategies(scale: dict[str, Any]) -> Words:
    """The strategies the scale page estimates, in its order, and CPU offload where one of its
    lines offloads: 'DDP, FSDP2, TP, FSDP2 × TP and CPU offload'."""
    from generator.site.pages.scale import ORDER  # the scale page's own names and order
    from generator.site.pages.scale.tables import STRATEGY_NAMES

    experiments = [row["result"]["experiment"] for group in scale["groups"]
                   for row in group["rows"]]
    seen = {exp.get("parallel", "none") for exp in experiments}
    names = [STRATEGY_NAMES[name] for name in ORDER if name != "single" and name in seen]
    if any(exp.get("cpu_offload") for exp in experiments):
        names.append(OFFLOAD)
    return listed(names)
