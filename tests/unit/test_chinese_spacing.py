"""The one place generated Chinese gets the site's spacing (wording.chinese_spaced, applied by
render.render_page to every Chinese page): a space where a Chinese character meets a Latin
letter or a digit in prose, nothing added where the text is code, markup or a link target."""

from __future__ import annotations

import pytest

from generator.site.wording import chinese_spaced


@pytest.mark.parametrize("written, spaced", [
    ("设置为 4 × 2,048和16 × 256（批大小）", "设置为 4 × 2,048 和 16 × 256（批大小）"),
    ("accelerate 的 estimate-memory总是偏低", "accelerate 的 estimate-memory 总是偏低"),
    ("用 FSDP2时，单卡已预留峰值", "用 FSDP2 时，单卡已预留峰值"),
    ("| 第1次 | H100上 |", "| 第 1 次 | H100 上 |"),  # table cells are prose too
])
def test_a_chinese_character_beside_latin_or_a_digit_gets_a_space(written, spaced) -> None:
    assert chinese_spaced(written) == spaced


@pytest.mark.parametrize("kept", [
    "已经隔开的 GPU 和 8 卡，全角标点：1，2。",  # spaced already, or beside full-width marks
    "两个汉字之间不加空格",
    "见 `python -m generator估算` 和[计算器](calculator.md#a1b2)",  # code, link target
    "## 留出的数据点 { #held-out2 }",  # an attribute list
    "<span title=\"显存2\">文字</span>",  # a raw HTML line
    "```\nx = 1  # 注释a\n```",  # fenced code
    "来源 https://example.org/a中b 之后",  # a bare URL
])
def test_code_markup_and_what_is_spaced_already_stay_as_written(kept: str) -> None:
    assert chinese_spaced(kept) == kept


def test_english_is_untouched_and_spacing_twice_changes_nothing() -> None:
    text = "With AMP fp16 the peak drops from 5.88 to 5.14 GiB."
    assert chinese_spaced(text) == text
    once = chinese_spaced("用 FSDP2时，4 × 2,048和16 × 256")
    assert chinese_spaced(once) == once
