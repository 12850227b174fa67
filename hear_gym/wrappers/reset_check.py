"""Reset arguments checked before anything in the wrapper stack records a reset.

Gymnasium's passive env checker marks its reset as checked before the env runs it: when that first
reset raises (an unknown episode id, a seed that is not a non-negative int), the checker keeps no
observation and every later ``step`` fails inside it, however good the next reset. ``gym.make`` of a
hear_gym id therefore builds ``ResetArgumentCheck(PassiveEnvChecker(family env))``: a bad reset is
refused here, outside the checker, and the env stays usable."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym


def check_seed(seed: Any) -> None:
    """None or a non-negative Python int, as ``Env.reset`` seeds its generator (a bool is refused)."""
    if seed is None:
        return
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative int or None, got {seed}")


def check_reset_arguments(env: gym.Env, seed: Any, options: Any) -> None:
    """Raises (``ValueError``, ``KeyError`` or ``IndexError``, one line) for arguments ``env.reset``
    would refuse, changing nothing: the seed, then the options as the base env reads them (its
    ``check_reset_options(options)``, which every family's base env has; one without it has its
    options checked by its own reset only)."""
    check_seed(seed)
    if options is not None and not isinstance(options, Mapping):
        raise ValueError(f"reset options must be a dict or None, got {type(options).__name__}")
    check_options = getattr(env.unwrapped, "check_reset_options", None)
    if check_options is not None:
        check_options(dict(options or {}))


class ResetArgumentCheck(gym.Wrapper):
    """Refuses bad reset arguments before the wrapped stack sees them (``check_reset_arguments``)."""

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        check_reset_arguments(self.env, seed, options)
        return self.env.reset(seed=seed, options=options)


def checked(env: gym.Env) -> gym.Env:
    """``env`` as ``gym.make`` hands out a hear_gym id: Gymnasium's passive checker inside the
    reset check (the checker is always on: ``disable_env_checker`` is not seen by an entry point)."""
    return ResetArgumentCheck(gym.wrappers.PassiveEnvChecker(env))


__all__ = ["ResetArgumentCheck", "check_reset_arguments", "check_seed", "checked"]
