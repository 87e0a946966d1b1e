"""What the home page says the calculator and the scale page offer, counted from their own
contexts (site/offers.py), both ways."""

from __future__ import annotations

from generator.site.offers import calculator_models, scale_strategies


def _model(ident: str, family: str) -> dict:
    return {"id": ident, "label": ident.removeprefix("hf:"), "family": family}


def test_the_calculator_count_holds_every_model_it_offers() -> None:
    tuned = [_model("hf:meta-llama/Llama-3.1-8B", "Llama"), _model("hf:Qwen/Qwen2.5-7B", "Qwen")]
    own = [_model("bert-base", "BERT"), _model("gpt2-small", "GPT-2")]
    said = calculator_models({"models": tuned + own})
    assert said.en == ("4 models: 2 that people fine-tune (Llama and Qwen) and this site's own "
                       "2 (bert-base and gpt2-small)")
    assert said.zh.startswith("4 个模型：2 个常被微调的模型（Llama 和 Qwen）")
    alone = calculator_models({"models": tuned})
    assert alone.en == "2 models that people fine-tune (Llama and Qwen)"
    assert "本站" not in alone.zh


def _scale(*experiments: dict) -> dict:
    return {"groups": [{"rows": [{"result": {"experiment": exp}} for exp in experiments]}]}


def test_the_scale_page_strategies_come_from_its_rows() -> None:
    every = _scale({"parallel": "none"}, {"parallel": "fsdp2", "cpu_offload": True},
                   {"parallel": "ddp"}, {"parallel": "tp"}, {"parallel": "fsdp2-tp"})
    said = scale_strategies(every)
    assert said.en == "DDP, FSDP2, TP, FSDP2 × TP and CPU offload"
    assert said.zh == "DDP、FSDP2、TP、FSDP2 × TP 和 CPU 卸载"
    two = scale_strategies(_scale({"parallel": "ddp"}, {"parallel": "fsdp2"}))
    assert two.en == "DDP and FSDP2" and "offload" not in two.en
