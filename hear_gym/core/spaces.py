"""Action-space helpers shared by every family."""

from __future__ import annotations

import numpy as np


def discrete_index(action, n: int) -> int:
    """``action`` as a plain int in ``0..n-1``.

    Accepts what Gymnasium and Stable-Baselines3 hand an env: Python ints, NumPy integer scalars
    and 0-d integer arrays (``model.predict`` returns those). Anything else (floats, bools,
    strings, arrays with elements) is refused with a ``ValueError`` instead of being coerced.
    """
    if isinstance(action, np.ndarray) and action.ndim == 0:
        action = action[()]
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise ValueError(f"action {action!r} is not an integer in Discrete({n})")
    if not 0 <= action < n:
        raise ValueError(f"action {action!r} is outside Discrete({n})")
    return int(action)
