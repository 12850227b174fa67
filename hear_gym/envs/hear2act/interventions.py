"""Label-fidelity interventions on the T+S state channel (paper section 4.2, Figure 4).

``StateIntervention`` rewrites the ``concern_state`` key that ``ConcernStateTag`` adds:

* ``all_resolved``: every turn says ``satisfied`` (all-positive);
* ``all_unresolved``: every turn says ``concerned`` (all-negative);
* ``shuffled``: each turn shows a label drawn from the episode's own true label sequence so far,
  so the label distribution is kept while its alignment with the current turn is broken. (An
  interactive episode's future labels do not exist yet, so the draw is over the labels seen up
  to and including this turn, with the wrapper's own generator, seeded by ``reset(seed=...)``.)
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

INTERVENTIONS = ("all_resolved", "all_unresolved", "shuffled")
ALL_RESOLVED_LABEL = "satisfied"
ALL_UNRESOLVED_LABEL = "concerned"


class StateIntervention(gym.Wrapper):
    def __init__(self, env: gym.Env, mode: str) -> None:
        super().__init__(env)
        if mode not in INTERVENTIONS:
            raise ValueError(f"state_intervention must be one of {INTERVENTIONS}, got {mode!r}")
        if "concern_state" not in getattr(env.observation_space, "spaces", {}):
            raise ValueError("a state intervention needs the T+S state channel (access='T+S')")
        self.mode = mode
        self._rng = np.random.default_rng()
        self._history: list[str] = []

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        if seed is not None:
            self._rng = np.random.default_rng([seed, 0x5EED])
        self._history = []
        return self._rewrite(obs), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._rewrite(obs), reward, terminated, truncated, info

    def _rewrite(self, obs: dict) -> dict:
        self._history.append(obs["concern_state"])
        if self.mode == "all_resolved":
            label = ALL_RESOLVED_LABEL
        elif self.mode == "all_unresolved":
            label = ALL_UNRESOLVED_LABEL
        else:
            label = self._history[int(self._rng.integers(len(self._history)))]
        return {**obs, "concern_state": label}
