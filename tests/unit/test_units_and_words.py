"""How sizes and shares are printed (units.py: binary units, thousands separators, '–' for a
missing value) and the one bilingual text type (words.py)."""

from __future__ import annotations

import pytest

from generator import units
from generator.words import LANGS, Words, same

KIB, MIB, GIB = 2**10, 2**20, 2**30


def test_numbers_in_binary_units() -> None:
    assert units.mib(1536 * MIB) == "1,536.0" and units.gib(1536 * MIB) == "1.50"
    assert units.mib(None) == units.gib(None) == units.size(None) == units.pct(None) == "–"


def test_a_tiny_negative_change_prints_as_zero_not_minus_zero() -> None:
    """A lever that adds 0.1 MiB saves '0.00 GiB', never '-0.00 GiB'."""
    assert units.gib(-100 * 2**10) == "0.00" and units.mib(-2**10) == "0.0"
    assert units.gib(-2**30) == "-1.00" and units.mib(-2**20) == "-1.0"


@pytest.mark.parametrize(("nbytes", "text"), [
    (3 * GIB // 2, "1.50 GiB"), (GIB, "1.00 GiB"), (GIB - MIB, "1,023.0 MiB"), (MIB, "1.0 MiB"),
    (1536, "1.5 KiB"), (1000, "1000 B"), (0, "0 B"),
])
def test_a_size_takes_the_unit_that_reads_best(nbytes: int, text: str) -> None:
    assert units.size(nbytes) == text


@pytest.mark.parametrize(("nbytes", "text"), [
    (24 * GIB, "24.00 GiB"), (MIB + MIB // 2, "1.50 MiB"), (2 * KIB, "2.00 KiB"), (12, "12 B"),
    (-3 * MIB, "-3.00 MiB"),  # a budget's shortfall
])
def test_format_bytes_for_the_command_line(nbytes: int, text: str) -> None:
    assert units.format_bytes(nbytes) == text


def test_percentages() -> None:
    assert units.pct(0.4567) == "45.7 %" and units.pct(0.4567, 0) == "46 %"
    assert units.pct(-0.0001) == "0.0 %"  # never "-0.0 %"
    assert units.pct(-0.25) == "-25.0 %"


def test_small_deviations_keep_two_significant_figures() -> None:
    assert units.pct_figures(3.95e-05) == "0.0039 %"  # not 0.00 %
    assert units.pct_figures(0.0002) == "0.020 %"
    assert units.pct_figures(0.005733) == "0.57 %"
    assert units.pct_figures(0.1234) == "12.34 %"  # never fewer decimals than pct(…, 2)
    assert units.pct_figures(0) == "0.00 %" and units.pct_figures(None) == "–"


def test_decimal_units_for_the_articles_figures() -> None:
    assert units.gb(13.7e9) == "13.7" and units.gb(123e9) == "123" and units.gb(None) == "–"
    assert units.mb(420e6) == "420" and units.mb(None) == "–"


def test_words_pick_a_language() -> None:
    text = Words("activations", "激活值")
    assert [text[lang] for lang in LANGS] == ["激活值", "activations"]
    assert (text.en, text.zh) == ("activations", "激活值")
    assert text.get("fr") is None and text.get("fr", "?") == "?"
    with pytest.raises(KeyError, match="fr"):
        text["fr"]
    en, zh = text  # still a tuple
    assert (en, zh) == ("activations", "激活值")


def test_words_format_both_languages() -> None:
    assert Words("{n} blocks", "共 {n} 个").format(n=3) == Words("3 blocks", "共 3 个")
    assert same("sdpa") == Words("sdpa", "sdpa")
