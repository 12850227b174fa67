"""A text-only solver for Ambiguity: a conditional-logit model that scores each option from the
transcript and the question alone, trained on the train split.

An option's features are hashed presence bits (``DIMENSIONS``) of: the option's tokens, each
(transcript token, option token) pair, each (prompt token, option token) pair, plus the share of
the option's tokens that occur in the transcript. Tokens are lower-cased English words, Mandarin
characters and punctuation marks, so under ``T`` the model can use punctuation and under
``T-nopunct`` it cannot. Training (L-BFGS on the softmax loss with an L2 penalty, ``L2``) sees every
train episode's turns twice, written and without punctuation, with the dialogue so far as the
transcript, so one model serves every text condition.

Nothing here can hear: on a minimal pair both readings give it the same input, so it answers both
the same way and is right on exactly one (the validity test in
``tests/envs/ambiguity/test_ambiguity_text_only.py``).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import optimize, sparse

from hear_gym.envs.ambiguity.actions import LETTERS
from hear_gym.envs.ambiguity.items.generator import all_episodes
from hear_gym.envs.ambiguity.items.model import Episode, bare_words

DIMENSIONS = 1 << 15
L2 = 1.0
MAX_ITER = 30  # L-BFGS iterations; dev accuracy over all turns: 0.771 at 30, 0.767 at 60, 0.764 at 100
_TOKEN = re.compile(r"[a-z0-9']+|[\u4e00-\u9fff]|[?!,.\uff0c\u3002\uff1f\uff01]")
_OPTION_LINE = re.compile(r"^[A-D]\) (.*)$")


def _one_blas_thread():
    """L-BFGS-B's core calls BLAS on 32k-long vectors; on a busy machine BLAS threads contend and
    one fit takes 15x longer, so the fit runs on one thread (threadpoolctl, in the train extra)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(1)


@lru_cache(maxsize=1 << 18)
def _slot(feature: str) -> int:
    return int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=4).digest(), "little") % DIMENSIONS


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


@dataclass(frozen=True)
class Example:
    """One decision as text: the transcript so far, the prompt, the options (and the gold, in training)."""

    transcript: str
    prompt: str
    options: tuple[str, ...]
    answer: int = -1


def option_features(example: Example) -> list[dict[int, float]]:
    context = set(tokens(example.transcript))
    prompt = set(tokens(example.prompt))
    rows = []
    for option in example.options:
        words = set(tokens(option))
        row: dict[int, float] = {}
        for w in words:
            row[_slot("o|" + w)] = 1.0
            for c in context:
                row[_slot(f"c|{c}|{w}")] = 1.0
            for p in prompt:
                row[_slot(f"p|{p}|{w}")] = 1.0
        row[_slot("overlap")] = len(words & context) / max(1, len(words))
        rows.append(row)
    return rows


def _matrix(rows: Sequence[dict[int, float]]) -> sparse.csr_matrix:
    data, indices, indptr = [], [], [0]
    for row in rows:
        indices.extend(row)
        data.extend(row.values())
        indptr.append(len(indices))
    return sparse.csr_matrix((data, indices, indptr), shape=(len(rows), DIMENSIONS))


def training_examples(episodes: Iterable[Episode]) -> list[Example]:
    """Every turn of every episode, with the dialogue so far (gold answers as the assistant's
    lines), once as written and once without punctuation."""
    examples = []
    for episode in episodes:
        for bare in (False, True):
            history: list[str] = []
            for turn in episode.turns:
                said = [bare_words(u.written) if bare else u.written for u in turn.said]
                history += [f"User: {s}" for s in said]
                asked = turn.asked
                examples.append(Example("\n".join(history), asked.prompt, asked.options, asked.answer))
                history.append(f"Assistant: {LETTERS[asked.answer]}) {asked.options[asked.answer]}")
    return examples


class TextSolver:
    def __init__(self, weights: np.ndarray) -> None:
        self.weights = weights

    @classmethod
    def fit(cls, examples: Sequence[Example], l2: float = L2, max_iter: int = MAX_ITER) -> TextSolver:
        X = _matrix([row for e in examples for row in option_features(e)])
        XT = X.T.tocsr()  # the gradient's product, laid out once
        sizes = np.array([len(e.options) for e in examples])
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        gold = starts + np.array([e.answer for e in examples])
        group = np.repeat(np.arange(len(examples)), sizes)

        def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
            scores = X @ w
            peak = np.maximum.reduceat(scores, starts)
            exp = np.exp(scores - peak[group])
            norm = np.add.reduceat(exp, starts)
            value = -(scores[gold] - peak - np.log(norm)).sum() + 0.5 * l2 * w @ w
            prob = exp / norm[group]
            prob[gold] -= 1.0
            return float(value), XT @ prob + l2 * w

        with _one_blas_thread():
            result = optimize.minimize(
                loss, np.zeros(DIMENSIONS), jac=True, method="L-BFGS-B", options={"maxiter": max_iter}
            )
        return cls(result.x)

    def scores(self, example: Example) -> np.ndarray:
        return _matrix(option_features(example)) @ self.weights

    def choose(self, example: Example) -> int:
        return int(np.argmax(self.scores(example)))


def example_of(observation: dict) -> Example:
    """The decision an observation shows (its question's prompt and options, its transcript)."""
    prompt, *lines = observation["question"].split("\n")
    options = tuple(m.group(1) for m in map(_OPTION_LINE.match, lines) if m)
    return Example(observation["transcript"], prompt, options)


@lru_cache(maxsize=4)
def trained_solver(split: str = "train", limit: int | None = None) -> TextSolver:
    """The solver fitted on ``split``'s episodes (the first ``limit`` of them, in generation
    order, when given), once per process."""
    episodes = [e for e in all_episodes() if e.split == split]
    if limit is not None:
        step = max(1, len(episodes) // limit)
        episodes = episodes[::step][:limit]  # spread over every phenomenon
    return TextSolver.fit(training_examples(episodes))
