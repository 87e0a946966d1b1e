"""The relations the article's pages (home, explainer, claims) assert, each checked on small
synthetic figures with both branches (issue 34): relations.py, the step counter of the
claims' row 2, the home page's small-batch bullet, LoRA apart from the memory settings, the
explainer's code in each language and its account of CUDA autocast."""

from __future__ import annotations

import ast
import copy

import pytest
from made_results import hand_made_result

from generator.measure.emulation.cuda_autocast import (
    CUDA_AUTOCAST_POLICY,
    FP32,
    FP32_SET_OPT_DTYPE,
)
from generator.site.pages.article import relations, snippet
from generator.site.pages.article.claims import step_counters
from generator.site.pages.article.context import fine_tune, small_batch
from generator.site.templating import kind, template_text

MIB, GIB = 2**20, 2**30


def test_alike_and_change_say_the_same_where_two_sizes_print_alike() -> None:
    assert relations.alike(int(4.6 * GIB), int(4.6 * GIB) + 1536)
    assert not relations.alike(int(4.6 * GIB), int(4.7 * GIB))
    same = relations.change(int(5.64 * GIB), int(5.64 * GIB) + 100 * 1024)  # fused: +100 KiB
    assert same["same"] and not same["lower"] and not same["higher"]  # never "-0.00 GiB"
    lower = relations.change(6 * GIB, 3 * GIB)
    assert lower["lower"] and not lower["same"] and lower["saving"] == pytest.approx(0.5)
    higher = relations.change(GIB, 2 * GIB)
    assert higher["higher"] and not higher["lower"]


def _twins() -> tuple[dict, dict]:
    fp16 = hand_made_result(precision="amp-fp16")
    bf16 = hand_made_result(precision="amp-bf16")
    return fp16, bf16


def test_fp16_and_bf16_are_shown_once_only_where_every_figure_prints_alike() -> None:
    fp16, bf16 = _twins()
    bf16["live_at_peak_bytes"]["temporaries"] += 512  # a few bytes: prints alike in MiB
    fp32 = hand_made_result()
    article = {"fp32": fp32, "amp-fp16": fp16, "amp-bf16": bf16}
    shown, said = relations.shown_precisions(article)
    assert list(shown) == ["fp32", "amp-fp16"]
    assert said == {"same": True, "gap": 512, "kept": "amp-fp16", "left_out": "amp-bf16"}
    bf16["category_max_bytes"]["activations"] += 3 * MIB  # a column of its own now
    shown, said = relations.shown_precisions(article)
    assert list(shown) == ["fp32", "amp-fp16", "amp-bf16"] and not said["same"]
    assert said["gap"] == 3 * MIB
    # without a pair there is nothing to say
    assert relations.shown_precisions({"fp32": fp32})[1] == {"same": False}


def test_the_formula_table_follows_the_shown_precisions_only_where_its_rows_print_alike():
    """The explainer's Korthikanti table (issue 34): AMP bf16 shares AMP fp16's row where that
    row prints alike too; a row of its own where it does not."""
    fp16, bf16 = _twins()
    article = {"fp32": hand_made_result(), "amp-fp16": fp16, "amp-bf16": bf16}
    check = {"measured_per_layer": 168.1 * MIB, "predicted_per_layer": 132.0 * MIB,
             "variant": "16-bit", "error": 0.273}
    row = relations.formula_row(check)
    assert row == ("168.1 MiB", "132.0 MiB", "16-bit", "27.3 %")
    assert relations.formula_row(None) == ()
    shown, said = relations.shown_precisions(article, {"amp-fp16": row, "amp-bf16": row})
    assert list(shown) == ["fp32", "amp-fp16"] and said["same"]
    other = relations.formula_row({**check, "measured_per_layer": 169 * MIB, "error": 0.28})
    shown, said = relations.shown_precisions(article, {"amp-fp16": row, "amp-bf16": other})
    assert list(shown) == ["fp32", "amp-fp16", "amp-bf16"] and not said["same"]


def test_when_the_peak_is() -> None:
    result = hand_made_result()
    result["live_at_peak_bytes"]["gradients"] = 0
    assert relations.peak_moment(result, "backward") == {"phase": "backward",
                                                         "backward_start": True}
    result["live_at_peak_bytes"]["gradients"] = MIB  # gradients exist: later in backward
    assert not relations.peak_moment(result, "backward")["backward_start"]
    assert not relations.peak_moment(result, "optimizer")["backward_start"]


def test_the_breakdown_adds_up_two_ways() -> None:
    result = hand_made_result()  # every category 1 MiB live and at its most
    result["peak_bytes"] = sum(result["live_at_peak_bytes"].values())
    found = relations.adds_up(result)
    assert found["live_is_peak"] and not found["maxima_overstate"]
    result["category_max_bytes"]["gradients"] += MIB
    result["peak_bytes"] += 1
    found = relations.adds_up(result)
    assert not found["live_is_peak"] and found["maxima_overstate"]


def test_compared_below_half_and_what_amp_keeps() -> None:
    assert relations.compared(3 * MIB, MIB) == "more"
    assert relations.compared(MIB, MIB + 10) == "same"
    assert relations.compared(MIB, 3 * MIB) == "less"
    assert relations.below_half(100, 78) and not relations.below_half(100, 40)
    assert not relations.below_half(100, 100)
    fp32, amp = hand_made_result(), hand_made_result(precision="amp-fp16")
    assert relations.amp_keeps(fp32, amp) == {
        "all": True, "kept": ["parameters", "gradients", "optimizer_state"]}
    amp["category_max_bytes"]["gradients"] //= 2  # fp16 gradients, as the article said
    assert relations.amp_keeps(fp32, amp) == {"all": False,
                                               "kept": ["parameters", "optimizer_state"]}


def test_three_autocast_rules_against_the_formulas_gap() -> None:
    exp, arch = {"seq_len": 128, "batch_size": 32}, {"hidden": 768, "heads": 12}
    rules = 8 * 128 * 32 * 768 + 2 * 12 * 128 * 128 * 32
    near = relations.formula_gap({"measured_per_layer": 100 * MIB + rules + MIB // 10,
                                  "formula_16bit_per_layer": 100 * MIB}, exp, arch)
    assert near["rules"] == rules and near["above"] and near["nearly_all"]
    far = relations.formula_gap({"measured_per_layer": 100 * MIB + 3 * rules,
                                 "formula_16bit_per_layer": 100 * MIB}, exp, arch)
    assert far["above"] and not far["nearly_all"]
    below = relations.formula_gap({"measured_per_layer": 90 * MIB,
                                   "formula_16bit_per_layer": 100 * MIB}, exp, arch)
    assert not below["above"] and not below["nearly_all"]
    assert relations.formula_matches(0.001) and not relations.formula_matches(-0.08)


def test_why_the_articles_total_is_off() -> None:
    total = {"claimed": 13.7e9, "measured": 6.05e9, "sum_of_maxima": 6.49e9}
    mostly = relations.total_gap(total, {"claimed": 12e9, "measured": 3.74e9})
    assert mostly["mostly_activations"] and mostly["over_whole"] and mostly["habit_smaller"]
    part = relations.total_gap(total, {"claimed": 5e9, "measured": 3.74e9})
    assert not part["mostly_activations"] and not part["over_whole"]
    habit = relations.total_gap({**total, "sum_of_maxima": 9e9},
                                {"claimed": 5e9, "measured": 3.74e9})
    assert not habit["habit_smaller"]


def test_the_loss_beside_amp() -> None:
    assert relations.loss_beside_amp({"saving_bytes": 2 * GIB}, {"saving_bytes": GIB})["more"]
    assert not relations.loss_beside_amp({"saving_bytes": GIB},
                                         {"saving_bytes": 2 * GIB})["more"]
    assert relations.loss_beside_amp(None, {"saving_bytes": GIB}) is None


# -- the home page's small-batch bullet (issue 34, item 8) -----------------------------------

def _small(amp_peak: float, est_amp: float, est_amp_phase: str = "optimizer",
           est_fp32: float = 2.04) -> dict:
    real = hand_made_result(model="bert-base", batch_size=4, backend="cpu", device="cpu")
    return {"batch_size": 4, "precision": "amp-bf16", "real": real,
            "fp32": int(1.83 * GIB), "amp": int(amp_peak * GIB), "change": 0.0,
            "copies": int(207.8 * MIB), "activations_saved": int(183 * MIB),
            "real_phase": "backward", "real_kernel": "for-loop",
            "estimate": {"fp32": int(est_fp32 * GIB), "amp": int(est_amp * GIB),
                         "fp32_phase": "optimizer", "amp_phase": est_amp_phase,
                         "kernel": "foreach", "temporaries": int(417.8 * MIB)}}


def test_amp_does_not_help_at_a_small_batch_where_neither_step_is_lower() -> None:
    said = relations.small_batch_words(_small(1.85, 2.04), kind)
    en = " ".join(w.en for w in said)
    assert en.startswith("At small batches AMP does not help.")
    assert "raises the peak from 1.83 to 1.85 GiB" in en
    assert "peaks in the optimizer step in both precisions" in en and "the same with" in en
    assert "2.04 GiB and 2.04 GiB" not in en
    # why the two FP32 peaks differ: the kernel PyTorch picks on each device, and the phase
    assert "for-loop kernel" in en and "foreach kernel" in en and "lies in backward" in en
    assert all(w.zh for w in said) and "AMP 帮不上忙" in said[0].zh


def test_where_the_estimate_is_lower_the_bullet_does_not_say_amp_does_not_help() -> None:
    said = relations.small_batch_words(_small(1.85, 1.90, "backward"), kind)
    en = " ".join(w.en for w in said)
    assert "does not help" not in en
    assert "1.90 GiB with AMP bf16 (in backward)" in en
    said = relations.small_batch_words(_small(1.70, 2.04), kind)  # the real runs are lower
    en = " ".join(w.en for w in said)
    assert "does not help" not in en and "lowers the peak from 1.83 to 1.70 GiB" in en


def test_fp32_peaks_that_print_alike_need_no_explanation() -> None:
    said = relations.small_batch_words(_small(1.85, 1.83, est_fp32=1.83), kind)
    assert not any("FP32 peaks differ" in w.en for w in said)
    same_kernel = _small(1.85, 2.04)
    same_kernel["real_kernel"] = "foreach"
    said = relations.small_batch_words(same_kernel, kind)
    assert "different kernels" in said[-1].en and "for-loop" not in said[-1].en


def test_small_batch_records_each_peaks_phase_and_kernel() -> None:
    def run(precision: str, backend: str, peak: int, phase_at: int) -> dict:
        result = hand_made_result(model="bert-base", batch_size=4, seq_len=128,
                                  precision=precision, backend=backend,
                                  device="cpu" if backend == "cpu" else "cuda")
        result["peak_bytes"] = peak
        result["timeline"]["bytes"]["temporaries"][phase_at] += 10 * MIB
        result["phases"].append({"name": "optimizer", "tick": 2})
        return result

    found = small_batch([run("fp32", "cpu", 100 * MIB, 1), run("amp-bf16", "cpu", 102 * MIB, 1),
                         run("fp32", "estimate", 120 * MIB, 2),
                         run("amp-bf16", "estimate", 120 * MIB, 2)])
    assert (found["real_phase"], found["real_kernel"]) == ("backward", "for-loop")
    est = found["estimate"]
    assert (est["fp32_phase"], est["amp_phase"], est["kernel"]) == \
        ("optimizer", "optimizer", "foreach")


# -- the claims' row 2 (item 7) and the home page's LoRA (item 20) ---------------------------

def test_adams_step_counter_is_on_the_host_unless_recorded_otherwise() -> None:
    result = hand_made_result()
    result["category_max_bytes"].update(parameters=100 * MIB, optimizer_state=200 * MIB)
    result["notes"] = [{"id": "optimizer_state_on_host", "values": {}}]
    assert step_counters(result) == {"on_host": True, "beyond_two": 0, "device": "cuda"}
    fused = copy.deepcopy(result)
    fused["notes"] = []
    fused["category_max_bytes"]["optimizer_state"] += 202 * 512  # one block per tensor
    assert step_counters(fused) == {"on_host": False, "beyond_two": 202 * 512,
                                    "device": "cuda"}


def test_lora_is_another_fine_tune_and_accumulation_a_memory_setting() -> None:
    assert fine_tune("lora")
    assert not fine_tune("accumulation") and not fine_tune("checkpointing")
    assert not fine_tune("no-such-lever")


# -- the explainer's code (items 17, 21) and its account of autocast (item 10) ---------------

def test_the_snippet_picks_bf16_where_the_gpu_supports_it() -> None:
    code = template_text("article/amp_training.py")
    assert "torch.cuda.is_bf16_supported()" in code
    assert "dtype = torch.float16 if device == \"cuda\"" not in code


def test_the_chinese_snippet_is_the_same_code_with_chinese_comments() -> None:
    code = template_text("article/amp_training.py")
    zh = snippet.in_language(code, "zh")
    assert snippet.in_language(code, "en") == code
    assert ast.dump(ast.parse(zh)) == ast.dump(ast.parse(code))  # the code is untouched
    comments = [line.split("#", 1)[1] for line in zh.splitlines() if "#" in line]
    assert comments and all(any("\u4e00" <= ch <= "\u9fff" for ch in c) for c in comments)
    with pytest.raises(KeyError, match="no zh translation"):
        snippet.in_language(code + "x = 1  # an untranslated comment\n", "zh")


def test_the_explainers_account_of_cuda_autocast_is_the_policy_table() -> None:
    """The explainer says: LayerNorm and most losses cast their inputs to FP32; softmax and
    log-softmax compute in FP32 unless the caller names a dtype; cross-entropy has no rule of
    its own (it calls log-softmax with its input's dtype, then nll_loss)."""
    for op in ("layer_norm", "nll_loss", "mse_loss"):
        assert CUDA_AUTOCAST_POLICY[op] == FP32, op
    for op in ("softmax.int", "log_softmax.int"):
        assert CUDA_AUTOCAST_POLICY[op] == FP32_SET_OPT_DTYPE, op
    assert not any(op.startswith("cross_entropy") for op in CUDA_AUTOCAST_POLICY)
    for lang in ("en", "zh"):
        text = template_text(f"article/explainer.{lang}.md.j2")
        assert "`nll_loss`" in text and "log-softmax" in text
        assert "softmax, LayerNorm and the losses" not in text


@pytest.mark.parametrize("lang", ("en", "zh"))
def test_the_explainer_prints_the_fp32_breakdown_once(lang: str) -> None:
    from conftest import FIXTURES
    from page_checks import page_markdown, page_tables, site_inputs

    from generator.site.pages import article

    ctx = article.context(*site_inputs(FIXTURES / "results"))
    page = page_markdown(article, ctx, lang, "explainer.md")
    table = str(page_tables(article, ctx, lang)["breakdown-fp32"]).strip()
    assert page.count(table) == 1
    assert "-0.00" not in page
