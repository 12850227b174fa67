"""Access conditions (paper section 4.2) as composable Gymnasium wrappers.

An access condition decides what evidence about the user's turn the assistant observes. The
base env is transcript only (T). Each condition here is a wrapper that adds one observation
key; ``ACCESS_CONDITIONS`` maps the paper's condition names to wrapper stacks so that
``gym.make("hear_gym/Hear2Act-v0", access="T+S")`` and ``apply_access(env, "T+S")`` agree.
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym
from gymnasium import spaces

from hear_gym.envs.hear2act import text_space


class ConcernStateTag(gym.Wrapper):
    """T+S: adds ``concern_state``, the graded delivery label of the user's latest turn
    (e.g. ``"lukewarm"``), as in the paper's P6b channel. Ground truth, a diagnostic reference."""

    KEY = "concern_state"

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        if not isinstance(env.observation_space, spaces.Dict):
            raise TypeError("ConcernStateTag needs a Dict observation space")
        self.observation_space = spaces.Dict(
            {**env.observation_space.spaces, self.KEY: text_space(32)})

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return self._tag(obs, info), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._tag(obs, info), reward, terminated, truncated, info

    def _tag(self, obs: dict, info: dict) -> dict:
        return {**obs, self.KEY: info["delivery_label"]}


ACCESS_CONDITIONS: dict[str, tuple[Callable[[gym.Env], gym.Env], ...]] = {
    "T": (),
    "T+S": (ConcernStateTag,),
}


def apply_access(env: gym.Env, access: str) -> gym.Env:
    try:
        wrappers = ACCESS_CONDITIONS[access]
    except KeyError:
        raise ValueError(f"access must be one of {sorted(ACCESS_CONDITIONS)}, got {access!r}") from None
    for wrapper in wrappers:
        env = wrapper(env)
    return env
