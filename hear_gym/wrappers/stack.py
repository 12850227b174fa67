"""The wrapper stack every family's ``make`` builds over its base env, in one order: the action
format, then the access condition, then the observation format. A family supplies its parser,
its access wrappers and its feature observation; the formats and their errors are shared."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym

from hear_gym.wrappers.audio import unpadded
from hear_gym.wrappers.text_actions import TextActions

ACTION_FORMATS = ("discrete", "text")  # EnvFamily.action_formats' default
OBSERVATION_FORMATS = ("dict", "features")


def check_formats(actions: str, observation: str) -> None:
    """Clear errors for an action or observation format no family has, before anything is built."""
    if actions not in ACTION_FORMATS:
        raise ValueError(f"actions must be one of {ACTION_FORMATS}, got {actions!r}")
    if observation not in OBSERVATION_FORMATS:
        raise ValueError(f"observation must be one of {OBSERVATION_FORMATS}, got {observation!r}")


def wrap_env(
    env: gym.Env,
    *,
    actions: str,
    parse_reply: Callable[[gym.Env, str], Any],
    access: Callable[[gym.Env], gym.Env],
    observation: str,
    features: Callable[[gym.Env], gym.Env],
) -> gym.Env:
    """``env`` with text actions parsed by ``parse_reply(base_env, reply)`` when ``actions`` is
    ``"text"``, the access condition's wrappers (``access``), and ``features`` when
    ``observation`` is ``"features"`` (over an access stack whose audio is left unpadded: its
    dict observation is read only by the features)."""
    check_formats(actions, observation)
    if actions == "text":
        env = TextActions(env, parse_reply)
    env = access(env)
    if observation == "features":
        env = features(unpadded(env))
    return env


__all__ = ["ACTION_FORMATS", "OBSERVATION_FORMATS", "check_formats", "wrap_env"]
