"""The claims page's one rule set, at its boundaries: what the page prints is what decides."""

from __future__ import annotations

import pytest

from generator.site.pages.article import claims
from generator.site.pages.article.claims import FAILS, HOLDS, PARTLY, judge, judge_both


@pytest.mark.parametrize(("measured", "verdict"), [
    (1.0, HOLDS), (1.15, HOLDS), (0.85, HOLDS),          # within 15 % either way
    (1.1501, PARTLY), (0.8499, PARTLY),
    (1.5, PARTLY), (1 / 1.5, PARTLY),                    # within a factor of 1.5
    (1.5001, FAILS), (0.6666, FAILS), (3.0, FAILS), (1 / 3, FAILS),
])
def test_a_quantity_against_the_article(measured: float, verdict: str) -> None:
    assert judge(measured, 1.0) == verdict


def test_a_saving_a_third_of_the_claimed_one_does_not_hold() -> None:
    """The article's AMP claim: 45 % saved; measured 14.2 %."""
    assert judge(0.142, 0.45) == FAILS


def test_a_claim_of_two_parts() -> None:
    assert judge_both(HOLDS, HOLDS) == HOLDS
    assert judge_both(HOLDS, FAILS) == PARTLY
    assert judge_both(PARTLY, FAILS) == PARTLY
    assert judge_both(FAILS, FAILS) == FAILS


def test_the_page_prints_the_rules_the_code_applies() -> None:
    assert claims.RULES == {"holds_within": claims.HOLDS_WITHIN,
                            "partly_factor": claims.PARTLY_FACTOR}
    assert judge(1 + claims.HOLDS_WITHIN, 1) == HOLDS
    assert judge(claims.PARTLY_FACTOR, 1) == PARTLY
