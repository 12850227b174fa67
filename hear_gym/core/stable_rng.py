"""A tiny counter-based random generator whose stream is fixed forever.

Scenario generation must be a pure function of (generator version, seed) on every machine and
every library version. NumPy only promises a stable bit stream for its bit generators, not for
``Generator.choice``/``integers``; Python's ``random`` only for ``random()``. Hashing a key and a
counter with BLAKE2b gives a stream that depends on nothing but the key. It is only used while
building scenarios (a few thousand draws), so speed does not matter; episodes use the env's
seeded ``numpy.random.Generator`` as Gymnasium intends.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_U64 = 1 << 64


class StableRng:
    def __init__(self, key: str) -> None:
        # BLAKE2b(key + counter) as the key's hash state continued with the counter: the same
        # digests, without hashing the key again at every draw
        self._keyed = hashlib.blake2b(key.encode("utf-8"), digest_size=8)
        self._counter = 0

    def _next_u64(self) -> int:
        hasher = self._keyed.copy()
        hasher.update(self._counter.to_bytes(8, "little"))
        self._counter += 1
        return int.from_bytes(hasher.digest(), "little")

    def random(self) -> float:
        """Uniform float in [0, 1) with 53 random bits."""
        return (self._next_u64() >> 11) * 2.0**-53

    def uniform(self, low: float, high: float) -> float:
        return low + (high - low) * self.random()

    def below(self, n: int) -> int:
        """Uniform integer in [0, n), without modulo bias."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = (_U64 // n) * n
        while True:
            value = self._next_u64()
            if value < limit:
                return value % n

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """A new list with the items in Fisher-Yates order."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        if not 0 <= k <= len(items):
            raise ValueError(f"cannot sample {k} of {len(items)} items")
        return self.shuffled(items)[:k]
