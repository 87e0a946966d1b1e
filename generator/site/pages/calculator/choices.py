"""What the calculator's page says of its choices ("What the choices mean"), each read off the
models the widget offers and the estimates behind them: where each model comes from (a
Hugging Face config shipped with the project, or the project's own code), what it trains as
(its task), where LoRA's adapters go, and what each precision keeps (settings.PRECISIONS).
Nothing here is typed per model: a new model in the suites changes the sentences."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from generator.experiment.experiment import is_hf_name
from generator.site.escaping import code, written
from generator.site.calculator_grid import settings
from generator.site.pages.calculator import rules
from generator.site.wording import capital, listed, spaced
from generator.words import Words


def _names(labels: Sequence[str]) -> Words:
    """Model names as code spans, listed."""
    return listed([Words(str(code(n)), str(code(n))) for n in labels])


def origins(models: Sequence[dict[str, Any]]) -> Words:
    """How many models, which of them transformers builds from a config the project ships,
    and which are the project's own code."""
    shipped = [m for m in models if rules.model_config(m["id"]) is not None]
    own = [m for m in models if not is_hf_name(m["id"])]
    other = [m for m in models if m not in shipped and m not in own]  # hf: found elsewhere
    en = [f"{len(models)} models"]
    zh = [f"{len(models)} 个模型"]
    if shipped:
        every = ("each built by transformers from its Hugging Face config, which ships"
                 if len(shipped) == len(models) else
                 f"{len(shipped)} of them built by transformers from their Hugging Face "
                 "configs, which ship")
        every_zh = ("每个都由 transformers 按它的" if len(shipped) == len(models) else
                    f"其中 {len(shipped)} 个由 transformers 按各自的")
        en.append(f"{every} with this project, so nothing is downloaded (each config's source "
                  "is recorded in the project's `generator/measure/models/hf_configs/SOURCES.md`)")
        zh.append(spaced(every_zh, "Hugging Face 配置构建，配置随本项目一起"
                         "发布，所以什么都不用下载（每个配置的来源记录在项目的 "
                         "`generator/measure/models/hf_configs/SOURCES.md`）"))
    if other:
        en.append(f"{_names([m['label'] for m in other]).en} built by transformers from a "
                  "config found outside the project")
        zh.append(spaced(_names([m["label"] for m in other]).zh,
                         "由 transformers 按项目之外找到的配置构建"))
    if own:
        verb = "is" if len(own) == 1 else "are"
        en.append(f"{_names([m['label'] for m in own]).en} {verb} the project's own code "
                  "(`generator/measure/models/`)")
        zh.append(spaced(_names([m["label"] for m in own]).zh,
                         "是本项目自己的代码（`generator/measure/models/`）"))
    return Words(en[0] + ": " + "; ".join(en[1:]) + ".", zh[0] + "：" + "；".join(zh[1:]) + "。")


def model_tasks(results: Sequence[dict[str, Any]]) -> dict[str, set[str]]:
    """Each model's tasks among the estimates (rules.task_of); "?" where none says."""
    found: dict[str, set[str]] = {}
    for r in results:
        exp = r["experiment"]
        found.setdefault(exp["model"], set()).add(
            rules.task_of(exp["model"], exp.get("hf_task", "auto")) or "?")
    return found


def tasks(models: Sequence[dict[str, Any]], results: Sequence[dict[str, Any]]) -> Words:
    """What each model trains as, by task: a family whose models all train so is named by
    its family, another model by its name."""
    by_model = model_tasks(results)
    groups: dict[str, list[dict[str, Any]]] = {}
    for m in models:
        for task in sorted(by_model.get(m["id"], {"?"})):
            groups.setdefault(task, []).append(m)
    parts = []
    for task, members in groups.items():
        names: list[Words] = []
        for family in dict.fromkeys(m["family"] for m in members):
            kin = [m for m in models if m["family"] == family]
            if all(m in members for m in kin) and len(kin) > 1:
                names.append(Words(f"the {family} models", f"{family} 系列"))
            else:
                names += [Words(str(code(m["label"])), str(code(m["label"])))
                          for m in members if m["family"] == family]
        what = rules.TASK_WORDS.get(task, Words("a task no config names",
                                                   "配置里没写明的任务"))
        plural = len(members) > 1
        parts.append(Words(f"{listed(names).en} train{'' if plural else 's'} as "
                           f"{what.en + 's' if plural else 'a ' + what.en}",
                           spaced(listed(names).zh, "按", what.zh, "训练")))
    return Words(capital("; ".join(p.en for p in parts)) + ".",
                 "；".join(p.zh for p in parts) + "。")


def lora_targets(models: Sequence[dict[str, Any]], results: Sequence[dict[str, Any]]) -> Words:
    """Where LoRA's adapters go, from the LoRA estimates' own lora_targets: PEFT's default
    modules for the model's type where the list is empty, else the modules set."""
    targets: dict[str, set[tuple[str, ...]]] = {}
    for r in results:
        exp = r["experiment"]
        if exp.get("lora_rank"):
            targets.setdefault(exp["model"], set()).add(tuple(exp.get("lora_targets") or ()))
    label = {m["id"]: m["label"] for m in models}
    by_hand = {model: sorted(t for t in ts if t) for model, ts in targets.items() if any(ts)}
    en, zh = [], []
    if any(() in ts for ts in targets.values()):
        en.append("on PEFT's default target modules for " +
                  ("the model's type" if by_hand else "each model's type"))
        zh.append("放在 PEFT 为该模型类型默认选定的模块上")
    for model, lists in by_hand.items():
        modules = [listed([Words(str(code(m)), str(code(m))) for m in t]) for t in lists]
        name = code(label.get(model, model.removeprefix("hf:")))
        en.append(f"for {name}, on {' or '.join(m.en for m in modules)}, set explicitly")
        zh.append(spaced(f"{name} 的适配器放在", " 或 ".join(m.zh for m in modules),
                         "上，这是显式设定的"))
    return Words("; ".join(en), "；".join(zh))


def precisions(fits: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each (method, precision) the widget offers, named by what it keeps, with what the page
    says of it; in the widget's order."""
    pairs = list(dict.fromkeys((f["method"], f["precision"]) for f in fits))
    order = list(settings.METHODS)
    pairs.sort(key=lambda p: order.index(p[0]))
    found = []
    for method, precision in pairs:
        label = settings.precision_label(method, precision)
        meaning = settings.PRECISIONS.get((method, precision), (label, None))[1]
        method_words = settings.METHODS[method]
        said = Words(f"with {method_words.en}, *{label.en}*",
                     spaced(method_words.zh, "用", f"*{label.zh}*"))
        if meaning:
            said = Words(f"{said.en}: {meaning.en}.", f"{said.zh}：{meaning.zh}。")
        # the project's own words, with emphasis and code spans: printed as written
        found.append({"method": method, "precision": precision, "label": label,
                      "said": written(said)})
    return found
