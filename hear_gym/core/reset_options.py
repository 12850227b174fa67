"""``reset(options=...)`` for envs that play a fixed set of episodes (items, trajectories)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def chosen_episode(options: Mapping, index_of: Mapping[str, int], rng: np.random.Generator) -> int:
    """The index of the episode to play: ``{"item_id": ID}`` names it, ``{"index": i}`` counts
    into the env's episodes, and no option draws one with the env's own generator."""
    unknown = set(options) - {"item_id", "index"}
    if unknown or len(options) > 1:
        raise ValueError(f"reset options take one of 'item_id' or 'index', got {sorted(options)}")
    if "item_id" in options:
        if options["item_id"] not in index_of:
            raise KeyError(f"episode {options['item_id']!r} is not in this env's episode set")
        return index_of[options["item_id"]]
    if "index" in options:
        index = int(options["index"])
        if not 0 <= index < len(index_of):
            raise IndexError(f"index {index} outside 0..{len(index_of) - 1}")
        return index
    return int(rng.integers(len(index_of)))
