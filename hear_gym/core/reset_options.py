"""``reset(options=...)`` for envs that play a fixed set of episodes (items, trajectories)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from numbers import Integral


def with_current_names(options: Mapping, renamed: Mapping[str, str], warn: bool = True) -> dict:
    """``options`` with each deprecated name of ``renamed`` (old -> new) under its new name, warning
    (``DeprecationWarning``) when ``warn``; naming one option under both names is refused."""
    current = dict(options)
    for old, new in renamed.items():
        if old in current:
            if new in current:
                raise ValueError(f"reset options name {new!r} twice: as {new!r} and as its old name {old!r}")
            if warn:
                warnings.warn(
                    f"reset option {old!r} is deprecated; use {new!r}", DeprecationWarning, stacklevel=3
                )
            current[new] = current.pop(old)
    return current


def requested_episode(options: Mapping, index_of: Mapping[str, int]) -> int | None:
    """The index of the episode the options name: ``{"item_id": ID}`` names it, ``{"index": i}``
    counts into the env's episodes (an int: ``1.9`` or ``True`` is refused, never rounded), and
    no option returns None (the env draws one with its own generator). Checked before the env
    changes anything, so a failed reset leaves it as it was."""
    unknown = set(options) - {"item_id", "index"}
    if unknown or len(options) > 1:
        raise ValueError(f"reset options take one of 'item_id' or 'index', got {sorted(options)}")
    if "item_id" in options:
        if options["item_id"] not in index_of:
            raise KeyError(f"episode {options['item_id']!r} is not in this env's episode set")
        return index_of[options["item_id"]]
    if "index" in options:
        index = options["index"]
        if not isinstance(index, Integral) or isinstance(index, bool):
            raise ValueError(f"reset option index must be an int, got {index!r}")
        if not 0 <= index < len(index_of):
            raise IndexError(f"index {index} outside 0..{len(index_of) - 1}")
        return int(index)
    return None
