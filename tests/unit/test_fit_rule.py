"""The one rule for "does it fit" (generator/plan/fit.py): its four words at their
thresholds, what a step needs, and the tensors alone where no allocator was modelled."""

from __future__ import annotations

import pytest

from generator.plan.fit import DOES_NOT_FIT, WORD_TEXT, WORDS, exit_status, judge, needed_bytes

MIB = 2**20
STEP = {"allocated": 10 * MIB, "reserved": 20 * MIB, "context": (4 * MIB, 8 * MIB)}


@pytest.mark.parametrize(("memory", "word"), [
    (100 * MIB, "yes"), (28 * MIB, "yes"),         # reserved + the context's high end
    (28 * MIB - 1, "maybe"), (24 * MIB, "maybe"),  # ... + its low end
    (24 * MIB - 1, "only just"), (14 * MIB, "only just"),  # allocated + its low end
    (14 * MIB - 1, "no"), (0, "no"),
])
def test_each_word_from_its_threshold(memory: int, word: str) -> None:
    verdict = judge(memory, **STEP)
    assert verdict.word == word and verdict.fits == (word == "yes")
    assert verdict.needed_bytes == 28 * MIB and verdict.spare_bytes == memory - 28 * MIB


@pytest.mark.parametrize(("memory", "short"), [
    (28 * MIB, False), (24 * MIB, False), (24 * MIB - 1, True), (0, True)])
def test_only_just_and_no_fall_short_and_end_the_commands_with_their_status(
        memory: int, short: bool) -> None:
    verdict = judge(memory, **STEP)
    assert verdict.falls_short == short == (verdict.word in ("only just", "no"))
    assert exit_status(verdict) == (DOES_NOT_FIT if short else 0) and DOES_NOT_FIT not in (0, 1, 2)
    assert exit_status(None) == 0  # nothing judged


def test_the_reasons_name_the_figures() -> None:
    assert judge(100 * MIB, **STEP).reason == \
        "72.00 MiB to spare beyond the reserved peak and a CUDA context of up to 8.00 MiB"
    assert judge(12 * MIB, **STEP).reason.startswith("at least 2.00 MiB short")
    assert judge(25 * MIB, **STEP).reason.startswith(
        "if the CUDA context takes at most 5.00 MiB (it takes 4.00 MiB to 8.00 MiB")
    assert "frees its cache and retries" in judge(20 * MIB, **STEP).reason


def test_without_an_allocator_the_tensors_alone() -> None:
    assert judge(8 * MIB, allocated=9 * MIB, reserved=None).reason == \
        "1.00 MiB short (the tensors alone)"
    assert judge(9 * MIB, allocated=9 * MIB, reserved=None).word == "yes"
    assert needed_bytes(allocated=9 * MIB, reserved=None) == 9 * MIB


def test_every_word_has_its_text_in_both_languages() -> None:
    assert set(WORD_TEXT) == set(WORDS)
    assert all(words.en and words.zh for words in WORD_TEXT.values())
