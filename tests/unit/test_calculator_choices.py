"""What the calculator's page says of its choices (site/pages/calculator/choices.py, and the
precisions of settings.py), each sentence read off the models and estimates it is given, each
branch with a case; and where the widget opens (calculator._start, first_answer's
verdicts.smallest_fitting)."""

from __future__ import annotations

from generator.site.labels import PRECISION_LABELS
from generator.site.pages import calculator
from generator.plan.predictor import verdicts
from generator.site.calculator_grid import settings
from generator.site.pages.calculator import choices

LLAMA = {"id": "hf:meta-llama/Llama-3.2-1B", "label": "meta-llama/Llama-3.2-1B",
         "family": "Llama"}
LLAMA_8B = {"id": "hf:meta-llama/Llama-3.1-8B", "label": "meta-llama/Llama-3.1-8B",
            "family": "Llama"}
BERT_HF = {"id": "hf:bert-base-uncased", "label": "bert-base-uncased", "family": "BERT"}
BERT = {"id": "bert-base", "label": "bert-base", "family": "BERT"}
GRANITE = {"id": "hf:ibm-granite/granite-3.0-1b-a400m-instruct",
           "label": "ibm-granite/granite-3.0-1b-a400m-instruct", "family": "Granite (MoE)"}


def estimate(model: dict, **experiment) -> dict:
    return {"key": f"{model['id']}-{sorted(experiment.items())}",
            "experiment": {"model": model["id"], "hf_task": "auto", "lora_rank": 0,
                           "lora_targets": [], **experiment}}


def test_origins_count_shipped_configs_and_the_projects_own_models() -> None:
    every = choices.origins([LLAMA, BERT_HF])
    assert every.en.startswith("2 models: each built by transformers from its Hugging Face config")
    assert "own code" not in every.en
    mixed = choices.origins([LLAMA, BERT_HF, BERT])
    assert "2 of them built by transformers from their Hugging Face configs" in mixed.en
    assert "`bert-base` is the project's own code" in mixed.en
    assert "`bert-base` 是本项目自己的代码" in mixed.zh
    assert "其中 2 个由 transformers 按各自的 Hugging Face 配置构建" in mixed.zh
    assert "每个都由 transformers 按它的 Hugging Face 配置构建" in every.zh
    elsewhere = choices.origins([{"id": "hf:someone/x", "label": "someone/x", "family": "other"}])
    assert "config found outside the project" in elsewhere.en


def test_tasks_are_read_off_the_estimates() -> None:
    models = [LLAMA, LLAMA_8B, BERT_HF, BERT]
    found = [estimate(LLAMA), estimate(LLAMA_8B),
             estimate(BERT_HF, hf_task="sequence-classification"), estimate(BERT)]
    said = choices.tasks(models, found)
    # a family whose models all train so is named by its family; a split family by name
    assert said.en == ("The Llama models train as causal language models; `bert-base-uncased` "
                       "trains as a sequence classifier; `bert-base` trains as a masked "
                       "language model.")
    assert "Llama 系列按因果语言模型训练" in said.zh
    one = choices.tasks([LLAMA], [estimate(LLAMA)])
    assert one.en == "`meta-llama/Llama-3.2-1B` trains as a causal language model."


def test_lora_targets_come_from_the_estimates() -> None:
    default = [estimate(LLAMA, lora_rank=16)]
    assert choices.lora_targets([LLAMA], default).en == \
        "on PEFT's default target modules for each model's type"
    explicit = default + [estimate(GRANITE, lora_rank=16, lora_targets=["q_proj", "v_proj"])]
    said = choices.lora_targets([LLAMA, GRANITE], explicit)
    assert said.en == ("on PEFT's default target modules for the model's type; for "
                       "`ibm-granite/granite-3.0-1b-a400m-instruct`, on `q_proj` and `v_proj`, "
                       "set explicitly")
    only = choices.lora_targets([GRANITE], explicit[1:])
    assert "default" not in only.en and "set explicitly" in only.en
    # full fine-tuning's estimates say nothing of adapters
    assert choices.lora_targets([LLAMA], [estimate(LLAMA)]).en == ""


def test_each_precision_is_named_by_what_it_keeps() -> None:
    amp = settings.precision_label("lora", "amp-bf16")
    bf16 = settings.precision_label("lora", "bf16")
    assert "FP32 frozen weights" in amp.en and "FP32 冻结权重" in amp.zh
    assert bf16.en.startswith("bf16 weights") and "FP32 frozen" not in bf16.en
    assert settings.precision_label("full", "fp16") == PRECISION_LABELS["fp16"]  # not offered
    fits = [{"method": "lora", "precision": "bf16"}, {"method": "full", "precision": "amp-bf16"},
            {"method": "lora", "precision": "amp-bf16"}]
    found = choices.precisions(fits)
    assert [(p["method"], p["precision"]) for p in found] == \
        [("full", "amp-bf16"), ("lora", "bf16"), ("lora", "amp-bf16")]
    assert "`torch_dtype=torch.bfloat16`" in found[1]["said"].en
    assert found[1]["said"].zh.startswith("LoRA 用 *bf16 权重")  # spaced as the site writes


def _fit(precision: str, levers: str, model: str = LLAMA_8B["id"]) -> dict:
    return {"model": model, "method": "lora", "precision": precision, "levers": levers,
            "range": {"tokens": [256, 65536], "seq": [256, 8192]},
            "points": [{"batch": 1, "seq": 256}, {"batch": 4, "seq": 2048}]}


def test_the_widget_opens_on_lora_on_bf16_weights_with_checkpointing() -> None:
    fits = [_fit("amp-bf16", "none"), _fit("amp-bf16", "ckpt"), _fit("bf16", "none"),
            _fit("bf16", "ckpt")]
    start = calculator._start(fits)
    assert (start["model"], start["method"], start["precision"], start["levers"],
            start["batch"], start["seq"]) == (LLAMA_8B["id"], "lora", "bf16", "ckpt", 1, 2048)
    # without that setting, the model and method's first, and no first answer that would
    # call it the setting most people run
    other = calculator._start(fits[:2])
    assert other["precision"] == "amp-bf16"
    assert calculator.first_answer(other, fits[:2], {}, calculator.gpu_data(), []) is None


class _Peaks:
    """A predictor of fixed peaks, as verdicts.Predictor answers."""

    def __init__(self, nbytes: int) -> None:
        self.nbytes = nbytes

    def peaks(self, batch, seq, workspace=None):
        return self.nbytes, self.nbytes


def test_the_smallest_gpu_that_fits_or_none() -> None:
    gpus = calculator.gpu_data()
    small = min(gpus, key=lambda g: g["memory_bytes"])
    assert verdicts.smallest_fitting(_Peaks(2**30), gpus, 1, 2048) == small
    big = max(g["memory_bytes"] for g in gpus)
    assert verdicts.smallest_fitting(_Peaks(big), gpus, 1, 2048) is None
    middle = sorted(gpus, key=lambda g: g["memory_bytes"])[len(gpus) // 2]
    found = verdicts.smallest_fitting(_Peaks(middle["memory_bytes"] // 2), gpus, 1, 2048)
    assert found is not None and found["memory_bytes"] > middle["memory_bytes"] // 2
    assert all(verdicts._verdict(_Peaks(middle["memory_bytes"] // 2), g, 1, 2048).word != "yes"
               for g in gpus if g["memory_bytes"] < found["memory_bytes"])


def test_how_many_estimates_each_setting_rests_on() -> None:
    def fit(model: str, n: int) -> dict:
        return {"model": model, "points": [{}] * n}

    assert calculator._points_per_fit([fit("hf:a", 9), fit("hf:b", 9), fit("bert-base", 6)]) \
        == "9"
    assert calculator._points_per_fit([fit("hf:a", 9), fit("hf:b", 6)]) == "6–9"
    assert calculator._points_per_fit([fit("bert-base", 6)]) == "6"  # no fine-tuning model
