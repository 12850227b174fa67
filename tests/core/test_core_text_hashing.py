"""hashed_words: stable bins, and each distinct word hashed once per process."""

import hashlib

import numpy as np

from hear_gym.core import text


def test_hashed_words_sets_each_words_stable_bin_and_hashes_a_word_once(monkeypatch):
    hashed = []

    def counted(data, **kwargs):
        hashed.append(data)
        return hashlib.blake2b(data, **kwargs)

    monkeypatch.setattr(text, "hashlib", type("H", (), {"blake2b": staticmethod(counted)}))
    words = "zyxwvu qponm, Zyxwvu!"
    first, second = text.hashed_words(words, 64), text.hashed_words(words, 64)
    assert len(hashed) <= 2  # zyxwvu and qponm, once each
    expected = np.zeros(64, dtype=np.float32)
    for word in ("zyxwvu", "qponm"):
        expected[int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little") % 64] = 1.0
    assert np.array_equal(first, expected) and np.array_equal(second, expected)
    assert not text.hashed_words("", 64).any()
