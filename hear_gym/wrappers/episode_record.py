"""Make room for ``info["episode"]`` conventions of other libraries.

hear_gym envs write their finished episode record to ``info["episode"]``. Gymnasium's
``RecordEpisodeStatistics`` and Stable-Baselines3's ``Monitor`` write their own summary
(``{"r", "l", "t"}``) to the same key, and SB3 reads it back for ``ep_rew_mean``. Put
``MoveEpisodeRecord`` under those wrappers and the record survives as ``info[key]``.
"""

from __future__ import annotations

import gymnasium as gym

EPISODE_RECORD_KEY = "hear_gym_episode"


class MoveEpisodeRecord(gym.Wrapper):
    def __init__(self, env: gym.Env, key: str = EPISODE_RECORD_KEY) -> None:
        super().__init__(env)
        self.key = key

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if "episode" in info:
            info = dict(info)
            info[self.key] = info.pop("episode")
        return obs, reward, terminated, truncated, info
