"""Space helpers shared by every family: Discrete actions as agents hand them over, and the audio
observation (a fixed-length float32 buffer plus how much of it is speech)."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

AUDIO_RATE = 16_000
MAX_AUDIO_SECONDS = 12.0  # longest input of any family (Hear2Act: a hesitant answer, ~10.6 s)
MAX_AUDIO_SAMPLES = int(MAX_AUDIO_SECONDS * AUDIO_RATE)


def audio_spaces() -> dict[str, spaces.Box]:
    """``audio`` (16 kHz float32, ``MAX_AUDIO_SAMPLES`` long) and ``audio_length`` (valid samples,
    shape (1,): Stable-Baselines3 takes no 0-d Boxes)."""
    return {
        "audio": spaces.Box(-1.0, 1.0, (MAX_AUDIO_SAMPLES,), np.float32),
        "audio_length": spaces.Box(0, MAX_AUDIO_SAMPLES, (1,), np.int64),
    }


def discrete_index(action, n: int) -> int:
    """``action`` as a plain int in ``0..n-1``.

    Accepts what Gymnasium and Stable-Baselines3 hand an env: Python ints, NumPy integer scalars
    and 0-d integer arrays (``model.predict`` returns those). Anything else (floats, bools,
    strings, arrays with elements) is refused with a ``ValueError`` instead of being coerced.
    """
    # The common case first; type(True) is bool, not int, so bools still meet the checks below.
    if type(action) is int and 0 <= action < n:
        return action
    if isinstance(action, np.ndarray) and action.ndim == 0:
        action = action[()]
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise ValueError(f"action {action!r} is not an integer in Discrete({n})")
    if not 0 <= action < n:
        raise ValueError(f"action {action!r} is outside Discrete({n})")
    return int(action)
