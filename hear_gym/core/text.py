"""Text in observations: the charset and Text spaces every family uses, folding free text into
it, the placeholder that stands for hidden speech, and fixed-size numeric views of text for
policies that take vectors (Stable-Baselines3)."""

from __future__ import annotations

import copy
import hashlib
import re
import string
import unicodedata
from functools import lru_cache

import numpy as np
from gymnasium import spaces

TEXT_CHARSET = string.printable
SPEECH_PLACEHOLDER = "[speech]"  # what an audio-only condition shows where the user's words were


def text_space(max_length: int) -> spaces.Text:
    return spaces.Text(max_length=max_length, min_length=1, charset=TEXT_CHARSET)


class SharedCharsetText(spaces.Text):
    """A Text space whose charset tables are shared with its copies, deep ones included (each
    copy keeps its own sampling generator). Gymnasium indexes a charset afresh in every Text it
    builds and deep-copies it into every vector-env batch: about 10 ms for a 20,000-character
    charset such as Ambiguity's (ASCII plus the CJK block), so every env built paid for it."""

    def __deepcopy__(self, memo: dict) -> SharedCharsetText:
        clone = copy.copy(self)  # the charset tables are never mutated after __init__
        memo[id(self)] = clone
        clone._np_random = copy.deepcopy(self._np_random, memo)
        return clone


def shared_text_space(max_length: int, charset: str, min_length: int = 1) -> SharedCharsetText:
    """A fresh Text space over ``charset``, its charset tables built once per process."""
    return copy.deepcopy(_text_prototype(max_length, min_length, charset))


@lru_cache(maxsize=16)
def _text_prototype(max_length: int, min_length: int, charset: str) -> SharedCharsetText:
    return SharedCharsetText(max_length, min_length=min_length, charset=charset)  # never sampled


def to_charset(text: str) -> str:
    """Fold free text (e.g. an LLM reply) into one transcript line of the observation charset:
    typographic punctuation becomes ASCII, line breaks become spaces, the rest is dropped."""
    if text.isascii() and text.isprintable():
        return text
    folded = unicodedata.normalize("NFKD", text).translate(_PUNCTUATION)
    return "".join(ch if ch in _LINE_CHARSET else " " if ch.isspace() else "" for ch in folded)


_LINE_CHARSET = frozenset(TEXT_CHARSET) - frozenset("\t\n\r\x0b\x0c")
_PUNCTUATION = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\u2026": "...",
    }
)

_WORD = re.compile(r"[a-z0-9']+")


def hashed_words(text: str, bins: int) -> np.ndarray:
    """A bag of words hashed into ``bins`` presence bits (float32). BLAKE2b, not ``hash()``:
    the same text gives the same vector in every process."""
    out = np.zeros(bins, dtype=np.float32)
    out[[_word_bin(word, bins) for word in _WORD.findall(text.lower())]] = 1.0
    return out


@lru_cache(maxsize=1 << 16)  # the words of every family's inputs; a hash per word was most of the cost
def _word_bin(word: str, bins: int) -> int:
    digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
    return int.from_bytes(digest, "little") % bins
