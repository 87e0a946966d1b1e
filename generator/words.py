"""The one bilingual word type: every text shown to readers exists in English and Chinese."""

from __future__ import annotations

from typing import NamedTuple

LANGS = ("zh", "en")


class Words(NamedTuple):
    """A text in both languages; `words[lang]` (or `words.en`, `words.zh`) picks one.
    Templates index it the same way: `categories[cat][lang]`."""

    en: str
    zh: str

    def __getitem__(self, lang):  # type: ignore[override]
        if lang == "en":
            return self.en
        if lang == "zh":
            return self.zh
        if isinstance(lang, int):  # tuple behaviour for unpacking and iteration
            return tuple.__getitem__(self, lang)
        raise KeyError(f"unknown language {lang!r}; expected 'zh' or 'en'")

    def get(self, lang: str, default: str | None = None) -> str | None:
        return self[lang] if lang in LANGS else default

    def format(self, *args, **kwargs) -> "Words":
        return Words(self.en.format(*args, **kwargs), self.zh.format(*args, **kwargs))


def same(text: str) -> Words:
    """A text that reads the same in both languages (a name, a code identifier)."""
    return Words(text, text)
