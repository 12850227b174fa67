"""The ``discrete`` action format: a Discrete index into ``actions.CATALOGUE``, played as the
typed action it stands for (so the base env scores every format the same way). ``step`` hands the
index to the base env's ``step_catalogue``, which keeps each entry's decoding and scores per case
side; ``action`` gives the typed action itself."""

from __future__ import annotations

import gymnasium as gym
from gymnasium import spaces

from hear_gym.envs.deliveryplan.actions import N_CATALOGUE


class CatalogueActions(gym.ActionWrapper, gym.utils.RecordConstructorArgs):
    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ActionWrapper.__init__(self, env)
        self.action_space = spaces.Discrete(N_CATALOGUE)

    def step(self, action):
        return self.env.unwrapped.step_catalogue(action)

    def action(self, action):
        return self.env.unwrapped.catalogue_typed(action)

    def action_masks(self):
        return self.env.unwrapped.action_masks()
