"""TF-IDF of word unigrams and bigrams (the paper's text features), in NumPy: scikit-learn's
``TfidfVectorizer(ngram_range=(1, 2))`` defaults (lowercase, tokens of two or more word
characters, raw counts, smoothed idf ``ln((1 + n) / (1 + df)) + 1``, rows L2-normalized)."""

from __future__ import annotations

import re

import numpy as np

_TOKEN = re.compile(r"(?u)\b\w\w+\b")


def ngrams(text: str) -> list[str]:
    words = _TOKEN.findall(text.lower())
    return words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]


class Tfidf:
    def __init__(self) -> None:
        self.vocabulary: dict[str, int] = {}
        self.idf = np.zeros(0)

    def fit(self, texts: list[str]) -> Tfidf:
        terms = sorted({t for text in texts for t in ngrams(text)})
        self.vocabulary = {t: i for i, t in enumerate(terms)}
        df = np.zeros(len(terms))
        for text in texts:
            for t in set(ngrams(text)):
                df[self.vocabulary[t]] += 1
        self.idf = np.log((1 + len(texts)) / (1 + df)) + 1
        return self

    def transform(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), len(self.vocabulary)))
        for row, text in enumerate(texts):
            for t in ngrams(text):
                if t in self.vocabulary:
                    out[row, self.vocabulary[t]] += 1
        out *= self.idf
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1)
