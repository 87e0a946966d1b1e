"""The levers page's sentences (generator/site/lever_results/sentences.py) and its joining of
names (wording.py), each on small synthetic rows, with every branch of the relation the
sentence states: the Chinese spaced as the site writes it (no space between Chinese
characters, one between a character and Latin or a digit)."""

from __future__ import annotations

import re

from generator.site.lever_results import sentences as sen
from generator.site.wording import capital, listed, spaced
from generator.words import Words

MIB, GIB = 2**20, 2**30
NAMES = {"sgd": Words("SGD (momentum) for AdamW", "SGD（动量）代替 AdamW"),
         "fused": Words("fused AdamW kernel", "fused AdamW 内核"),
         "for-loop": Words("for-loop AdamW", "for-loop AdamW"),
         "expandable": Words("expandable segments", "可扩展段（expandable segments）"),
         "ckpt": Words("activation checkpointing", "激活检查点"),
         "sdpa": Words("SDPA attention", "融合注意力 SDPA"),
         "amp-bf16": Words("AMP bf16", "AMP bf16"), "amp-fp16": Words("AMP fp16", "AMP fp16"),
         "accumulation": Words("gradient accumulation, 4 micro-batches of 8",
                               "梯度累积，4 个微批次，每个 8 个样本")}
#: A Chinese character beside Latin or a digit with no space, or two characters with one.
BADLY_SPACED = re.compile(r"[\u4e00-\u9fff][A-Za-z0-9]|[A-Za-z0-9][\u4e00-\u9fff]"
                          r"|[\u4e00-\u9fff] [\u4e00-\u9fff]|[、，。：；（）] | [、，。：；（）]")


def _spaced_well(text: str) -> None:
    assert not BADLY_SPACED.search(text), BADLY_SPACED.findall(text)


def test_spaced_joins_chinese_as_the_site_writes_it() -> None:
    assert spaced("换上", "fused AdamW 内核", "和", "for-loop AdamW") == \
        "换上 fused AdamW 内核和 for-loop AdamW"
    assert spaced("比单用", "激活检查点", "多省 0.21 GiB") == "比单用激活检查点多省 0.21 GiB"
    assert spaced("换上", "可扩展段（expandable segments）", "，张量峰值") == \
        "换上可扩展段（expandable segments），张量峰值"
    assert spaced("0.63", " GiB ", "AMP") == "0.63 GiB AMP"  # Latin beside Latin keeps a space
    assert spaced("", "a") == "a"


def test_listed_names_in_both_languages() -> None:
    names = [NAMES["sgd"], NAMES["fused"], NAMES["for-loop"]]
    found = listed(names)
    assert found.en == "SGD (momentum) for AdamW, fused AdamW kernel and for-loop AdamW"
    assert found.zh == "SGD（动量）代替 AdamW、fused AdamW 内核和 for-loop AdamW"
    assert listed([NAMES["expandable"], NAMES["ckpt"]]).zh == "可扩展段（expandable segments）和激活检查点"
    assert listed([NAMES["ckpt"]]) == NAMES["ckpt"] and listed([]) == Words("", "")
    assert capital("fused AdamW kernel") == "Fused AdamW kernel"


def _row(ident: str, saving: int, **more) -> dict:
    return {"id": ident, "use": {}, "saved": Words(f"saves {saving}", f"省 {saving}"),
            "reserved_saving_bytes": saving, **more}


def test_strongest_says_what_accumulation_owes_to_its_count() -> None:
    accumulation = _row("accumulation", 3, use={"micro_batches": 4}, micro_batches=4,
                        micro_batch=8)
    found = sen.strongest([accumulation], NAMES, [_row("ckpt", 2)])
    assert "the batch of 32 split into 4 micro-batches of 8: saves 3" in found.en
    assert "this site chose" in found.en
    assert found.en.endswith("the strongest is activation checkpointing: saves 2.")
    assert found.zh.startswith("效果最大的是梯度累积：把 32 个样本的 batch 拆成 4 个微批次")
    assert "本站选了拆成 4 个" in found.zh and found.zh.endswith("效果最大的是激活检查点：省 2。")
    _spaced_well(found.zh)
    # a lever that keeps the batch whole: no word on counts
    plain = sen.strongest([_row("ckpt", 2)], NAMES)
    assert plain == Words("The strongest lever here is activation checkpointing: saves 2.",
                          "效果最大的是激活检查点：省 2。")


def _peaks(ident: str, before: int, after: int) -> dict:
    return {"id": ident, "ref_reserved": before, "reserved": after,
            "ref_peak": before, "peak": after}


def test_unmoved_says_stays_at_the_printed_figure_or_rises() -> None:
    base = 6_052_263_424
    rows = {"reserved": [_peaks("sgd", base, base), _peaks("fused", base, base)],
            "peak": [_peaks("expandable", base, base), _peaks("fused", base, base + 103_424),
                     _peaks("for-loop", base, base + GIB // 10)]}
    found = sen.unmoved(rows, NAMES)
    assert "The reserved peak stays at 5.64 GiB with SGD (momentum) for AdamW and fused AdamW " \
        "kernel." in found.en
    assert "The tensors' peak stays at 5.64 GiB with expandable segments and fused AdamW " \
        "kernel." in found.en
    assert "The tensors' peak rises from 5.64 to 5.74 GiB with for-loop AdamW." in found.en
    assert "换上 SGD（动量）代替 AdamW 和 fused AdamW 内核，已预留峰值仍是 5.64 GiB。" in found.zh
    assert "换上可扩展段（expandable segments）和 fused AdamW 内核，张量峰值仍是 5.64 GiB。" in found.zh
    assert "张量峰值从 5.64 GiB 升到 5.74 GiB" in found.zh
    _spaced_well(found.zh)
    assert sen.unmoved({}, NAMES) is None


def test_merged_says_same_to_within_the_bytes() -> None:
    found = sen.merged({"id": "amp-fp16", "same_as": "amp-bf16", "within": 1536}, NAMES)
    assert found.en == "AMP fp16 gives the same figures as AMP bf16 to within 1.5 KiB (every " \
        "peak and every part of memory), so it is printed once."
    assert found.zh.startswith("AMP fp16 和 AMP bf16 的每个峰值、每部分显存相差都不超过 1.5 KiB，")
    assert "完全一样" not in found.zh


def _combo(relation: str, shared: list[str]) -> tuple[dict, dict]:
    by_id = {"ckpt": {"saving_bytes": int(2.81 * GIB)}, "sdpa": {"saving_bytes": int(0.63 * GIB)}}
    together = {"relation": relation, "sum": int(3.44 * GIB), "best": "ckpt", "share": 0.92,
                "beyond_best": int(0.21 * GIB), "short_of_sum": int(0.42 * GIB), "shared": shared}
    return {"saving_bytes": int(3.02 * GIB), "parts": ["ckpt", "sdpa"], "together": together,
            "largest": "temporaries"}, by_id


def test_together_states_each_relation_of_the_savings() -> None:
    texts = {}
    for relation in ("adds_up", "nearly", "overlaps", "no_better"):
        row, by_id = _combo(relation, ["activations"])
        texts[relation] = sen.together(row, NAMES, by_id)
        assert "alone, activation checkpointing saves 2.81 GiB and SDPA attention 0.63 GiB, " \
            "3.44 GiB in all." in texts[relation].en
        assert "单独使用时，激活检查点省 2.81 GiB，融合注意力 SDPA 省 0.63 GiB，加起来 3.44 GiB。" \
            in texts[relation].zh
        _spaced_well(texts[relation].zh)
    assert "The savings add up." in texts["adds_up"].en
    assert "nearly add up (92 % of their sum): they overlap a little, where more than one " \
        "shrinks the activations." in texts["nearly"].en
    assert "0.21 GiB more than activation checkpointing alone but 0.42 GiB less" in \
        texts["overlaps"].en
    assert "合起来比单用激活检查点多省 0.21 GiB" in texts["overlaps"].zh
    assert "no more than activation checkpointing saves alone" in texts["no_better"].en
    assert "并不比单用激活检查点省得多" in texts["no_better"].zh
    row, by_id = _combo("adds_up", [])
    assert "each lever shrinks a different part of memory" in sen.together(row, NAMES, by_id).en


def test_kernel_run_says_where_each_peak_lies() -> None:
    """The CPU runs at batch 1: foreach peaks in the optimizer step (2.04 GiB); with fused
    the optimizer step's own peak is 1.63 GiB and the step's, 1.81 GiB, in backward."""
    foreach, fused, back = 2_190_300_000, 1_752_200_000, 1_939_700_000
    where = {"phase": "optimizer", "held": True, "moved": True,
             "where": ["optimizer", "backward"], "own": (foreach, fused),
             "peaks": (foreach, back)}
    run = Words("bert-base at batch 1", "bert-base 在 batch 1")
    kind = Words("measured on the CPU", "CPU 实测")
    found = sen.kernel_run(where, NAMES["fused"], "foreach", run, kind)
    assert found.en == (
        "Real runs of bert-base at batch 1, measured on the CPU, are such a case: with the "
        "foreach kernels the optimizer step holds the step's peak (2.04 GiB); with fused AdamW "
        "kernel its own peak falls from 2.04 to 1.63 GiB, below the backward pass's 1.81 GiB, "
        "so the step's peak now lies in the backward pass and falls from 2.04 to 1.81 GiB.")
    assert found.zh == (
        "CPU 实测的 bert-base 在 batch 1 时正是这种情况：用 foreach 内核时，峰值落在优化器那一步"
        "（2.04 GiB）；换成 fused AdamW 内核，优化器那一步自身的峰值从 2.04 GiB 降到 1.63 GiB，"
        "低于反向的 1.81 GiB，于是整步的峰值移到了反向，从 2.04 GiB 降到 1.81 GiB。")
    stays = sen.kernel_run({**where, "moved": False, "where": ["optimizer", "optimizer"],
                            "peaks": (foreach, fused)}, NAMES["fused"], "foreach", run, kind)
    assert stays.en.endswith("its own peak falls from 2.04 to 1.63 GiB, and it is still the "
                             "step's peak.")
    assert stays.zh.endswith("整步的峰值仍在这里。")
    assert sen.kernel_run({**where, "held": False}, NAMES["fused"], "foreach", run, kind) is None


def test_kernel_state_and_temporaries_say_what_the_data_holds() -> None:
    same = sen.kernel_state({"extra": 0, "whole_peak": False})
    assert "keep the same state" in same.en and "保留的状态也一样" in same.zh
    fused = sen.kernel_state({"extra": 103_424, "whole_peak": True})
    assert "step count on the GPU" in fused.en and "101.0 KiB more optimizer state here, " \
        "which is all the tensors' peak gains with it." in fused.en
    assert "多出 101.0 KiB，张量峰值多出的也正是这么多" in fused.zh
    part = sen.kernel_state({"extra": 103_424, "whole_peak": False})
    assert "101.0 KiB more optimizer state here." in part.en and "正是" not in part.zh
    assert sen.kernel_temporaries(0).en.endswith("allocates no temporaries at all.")
    assert sen.kernel_temporaries(512).en.endswith("allocates only 512 B of temporaries.")
    assert "512 B 的临时张量" in sen.kernel_temporaries(512).zh


def _timed(ident: str, batch: int) -> dict:
    return {"id": ident, "cost": {"batch_size": batch}}


def test_untimed_says_which_runs_were_timed_and_why_not_shown() -> None:
    group = {"cost": {"backend": "cpu", "model": "bert-base", "seq_len": 128,
                      "not_shown": ["no_count", "small_step"]},
             "rows": [_timed("ckpt", 1), _timed("amp-bf16", 4), _timed("fused", 1)]}
    why = {"no_count": Words("record only a median", "只记了一个中位数"),
           "small_step": Words("ran steps too small", "那一步太小")}
    none_shown = sen.untimed([group], NAMES, False, why)
    assert none_shown.en == (
        "No step times yet: the timed runs are on the CPU, bert-base at sequence 128 "
        "(activation checkpointing and fused AdamW kernel at batch 1, AMP bf16 at batch 4), "
        "and they record only a median, and ran steps too small; runs of the example on a "
        "GPU that record each timed step would give step times a section of their own.")
    assert "（激活检查点和 fused AdamW 内核是 batch 1，AMP bf16 是 batch 4）" in none_shown.zh
    assert "\n" not in none_shown.en  # one line
    some_shown = sen.untimed([group], NAMES, True, why)
    assert some_shown.en.startswith("Left out: the timed runs are on the CPU")
    assert "section" not in some_shown.en
