"""The home page's small-batch finding (issue 13, item 12): at the smallest batch run for
real in FP32 and AMP, the change of the peak and why, computed from the two runs."""

from __future__ import annotations

from made_results import hand_made_result

from generator.site.pages.article.context import small_batch

MIB = 2**20


def _run(precision: str, peak: int, activations: int, copies: int, batch: int = 4) -> dict:
    result = hand_made_result(model="bert-base", batch_size=batch, seq_len=128,
                              precision=precision, backend="cpu", device="cpu")
    result["peak_bytes"] = peak
    result["live_at_peak_bytes"] = {**result["live_at_peak_bytes"], "activations": activations,
                                    "autocast_copies": copies}
    return result


def test_the_smallest_real_pair_gives_the_change_and_its_parts() -> None:
    found = small_batch([_run("fp32", 100 * MIB, 50 * MIB, 0),
                         _run("amp-bf16", 102 * MIB, 30 * MIB, 22 * MIB),
                         _run("fp32", 300 * MIB, 250 * MIB, 0, batch=16),
                         _run("amp-bf16", 200 * MIB, 125 * MIB, 22 * MIB, batch=16)])
    assert found["batch_size"] == 4 and found["precision"] == "amp-bf16"
    assert abs(found["change"] - 0.02) < 1e-9
    assert (found["copies"], found["activations_saved"]) == (22 * MIB, 20 * MIB)
    assert found["estimate"] is None  # no estimate of that batch among the results


def test_without_a_real_pair_there_is_nothing_to_say() -> None:
    assert small_batch([_run("fp32", 100 * MIB, 50 * MIB, 0)]) is None
