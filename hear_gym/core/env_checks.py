"""Rules every family's env keeps the same way: its numeric options are finite, and it takes no
step outside a running episode (whatever the action format)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Real
from typing import Any


class EpisodeNotRunning(RuntimeError):
    """``step`` before ``reset``, or after the episode terminated or was truncated."""


def require_running(started: bool, ended: bool) -> None:
    """Refuses a step outside a running episode: a step after the end would score again."""
    if not started:
        raise EpisodeNotRunning("no episode is running: call reset() before step()")
    if ended:
        raise EpisodeNotRunning(
            "the episode has ended (terminated or truncated): call reset() before stepping again"
        )


def require_finite(options: Mapping[str, Any]) -> None:
    """Refuses NaN and infinity among env options (also inside lists, tuples and dicts), with a
    ``ValueError`` naming the option: a non-finite cost or penalty would make every return
    meaningless. Envs pass all their arguments, so a new numeric option is covered as it comes."""
    for name, value in options.items():
        _check(name, value)


def _check(name: str, value: Any) -> None:
    if isinstance(value, Real) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check(f"{name}[{i}]", item)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _check(f"{name}[{key!r}]", item)
