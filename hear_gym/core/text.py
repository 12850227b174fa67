"""Fixed-size numeric views of free text, for policies that take vectors (Stable-Baselines3)."""

from __future__ import annotations

import hashlib
import re

import numpy as np

_WORD = re.compile(r"[a-z0-9']+")


def hashed_words(text: str, bins: int) -> np.ndarray:
    """A bag of words hashed into ``bins`` presence bits (float32). BLAKE2b, not ``hash()``:
    the same text gives the same vector in every process."""
    out = np.zeros(bins, dtype=np.float32)
    for word in _WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
        out[int.from_bytes(digest, "little") % bins] = 1.0
    return out
