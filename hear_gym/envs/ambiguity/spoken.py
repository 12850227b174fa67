"""How one interpretation of a phonological minimal pair is spoken.

A ``SpokenReading`` is the audio-side half of an item: the words exactly as a transcript shows
them (identical across the two readings of a pair, so text cannot decide it) plus the prosody and
pronunciation that license one interpretation. ``render.py`` turns it into audio.

Tokens are whitespace-separated words in English (punctuation stays attached to its word and is
not spoken as a token) and characters in Mandarin (whitespace and punctuation characters are not
tokens). Every index field refers to those tokens.

Pronunciation overrides (``pronounce``) have one form per language:

* ``en``: eSpeak NG phonemes (its ASCII phoneme alphabet, as inside ``[[...]]``), e.g. the
  heteronym "read" as ``"r'Ed"`` (past) vs ``"r'i:d"`` (present), "lead" ``"l'Ed"`` / ``"l'i:d"``.
* ``zh``: tone-numbered pinyin, one syllable for the character, tone 1-4 (5 = neutral), e.g.
  ``"mai3"`` (买, buy) vs ``"mai4"`` (卖, sell) on the same written token. The renderer forces that
  tone on the syllable.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

Language = Literal["en", "zh"]
Contour = Literal["fall", "rise"]

LANGUAGES: tuple[str, ...] = ("en", "zh")
CONTOURS: tuple[str, ...] = ("fall", "rise")
_PINYIN = re.compile(r"^[a-zü:v]+[1-5]$")


def tokenize(text: str, language: str) -> tuple[str, ...]:
    """The tokens indices refer to: words in English, characters (no spaces, no punctuation) in
    Mandarin."""
    if language == "en":
        return tuple(text.split())
    if language == "zh":
        return tuple(ch for ch in text if not (ch.isspace() or unicodedata.category(ch).startswith("P")))
    raise ValueError(f"unknown language {language!r}; expected one of {LANGUAGES}")


@dataclass(frozen=True)
class SpokenReading:
    """One rendering of a minimal pair: same ``text``, its own prosody and pronunciation.

    ``pause_after``: token indices followed by an audible pause. ``stress``: tokens carrying
    contrastive stress. ``contour``: the utterance-final pitch movement. ``pronounce``: per-token
    pronunciation overrides ``(index, form)`` (form as in the module docstring).
    """

    text: str
    language: Language
    pause_after: tuple[int, ...] = ()
    stress: tuple[int, ...] = ()
    contour: Contour = "fall"
    pronounce: tuple[tuple[int, str], ...] = ()

    def __post_init__(self) -> None:
        tokens = tokenize(self.text, self.language)
        if not tokens:
            raise ValueError("a spoken reading needs at least one token")
        if self.contour not in CONTOURS:
            raise ValueError(f"contour must be one of {CONTOURS}, got {self.contour!r}")
        last = len(tokens) - 1
        for name, indices in (("pause_after", self.pause_after), ("stress", self.stress)):
            _check_indices(name, indices, last)
        if any(i == last for i in self.pause_after):
            raise ValueError("pause_after cannot name the last token (nothing follows it)")
        _check_indices("pronounce", tuple(i for i, _ in self.pronounce), last)
        for index, form in self.pronounce:
            if not form:
                raise ValueError(f"empty pronunciation for token {index}")
            if self.language == "zh" and not _PINYIN.match(form):
                raise ValueError(
                    f"zh pronunciation {form!r} for token {index} must be one tone-numbered "
                    "pinyin syllable such as 'mai3'"
                )

    @property
    def tokens(self) -> tuple[str, ...]:
        return tokenize(self.text, self.language)


def _check_indices(name: str, indices: tuple[int, ...], last: int) -> None:
    if len(set(indices)) != len(indices):
        raise ValueError(f"{name} repeats a token index: {indices}")
    if tuple(sorted(indices)) != tuple(indices):
        raise ValueError(f"{name} must be sorted: {indices}")
    for i in indices:
        if not 0 <= i <= last:
            raise ValueError(f"{name} index {i} outside the tokens 0..{last}")
