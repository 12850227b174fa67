"""Registered env ids and the factories behind them."""

from __future__ import annotations

import gymnasium as gym

from hear_gym.envs.hear2act import Hear2ActEnv
from hear_gym.wrappers.access import apply_access
from hear_gym.wrappers.text_actions import TextActions

ACTION_FORMATS = ("discrete", "text")


def make_hear2act(access: str = "T", actions: str = "discrete", **env_kwargs) -> gym.Env:
    """Build Hear2Act under an access condition (``"T"``, ``"T+S"``) and action format
    (``"discrete"`` indices or P6a ``"text"``); other kwargs go to ``Hear2ActEnv``."""
    if actions not in ACTION_FORMATS:
        raise ValueError(f"actions must be one of {ACTION_FORMATS}, got {actions!r}")
    env: gym.Env = Hear2ActEnv(**env_kwargs)
    if actions == "text":
        env = TextActions(env)
    return apply_access(env, access)


ENV_IDS = ("hear_gym/Hear2Act-v0",)


def register_envs() -> None:
    if "hear_gym/Hear2Act-v0" not in gym.registry:
        gym.register(id="hear_gym/Hear2Act-v0",
                     entry_point="hear_gym.envs.registration:make_hear2act")
