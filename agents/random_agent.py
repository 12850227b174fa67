"""Uniformly random valid actions (per the observation's action mask), seeded per episode."""

from __future__ import annotations

from typing import Any

import numpy as np


class RandomAgent:
    required_access = "T"

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, Any]) -> int:
        valid = np.flatnonzero(observation["action_mask"])
        return int(valid[int(self.rng.integers(len(valid)))])
